import os

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("rationale_workbench")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Eager mode still serializes through a producer; an in-memory transport keeps it from
# looking for a broker on localhost (and warning about it) when none is configured.
if not app.conf.broker_url:
    app.conf.broker_url = "memory://localhost/"

# Celery's Django fixup closes every database connection before and after each task
# unless this is set, so each task paid for a new PostgreSQL backend: under load, with a
# quality check per submit, that was most of the database server's CPU. Workers treat a
# task as Django treats a request instead (below).
app.conf.CELERY_DB_REUSE_MAX = 2**62


@task_prerun.connect
@task_postrun.connect
def database_connections_refresh(task=None, **kwargs) -> None:
    """Close connections that are broken or older than CONN_MAX_AGE, as Django does at
    each request's start and end; a worker reconnects by itself after a database outage.
    Not for eager tasks: they run inside the caller's request and transaction."""
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
