import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("rationale_workbench")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Eager mode still serializes through a producer; an in-memory transport keeps it from
# looking for a broker on localhost (and warning about it) when none is configured.
if not app.conf.broker_url:
    app.conf.broker_url = "memory://localhost/"
