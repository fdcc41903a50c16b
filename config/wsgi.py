import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()


def _import_what_the_first_requests_would() -> None:
    """Import now what each worker would otherwise import on its first requests. With
    gunicorn's preload_app this happens once in the master, before the workers fork, and
    not on the first annotators' requests: every view (1.5 s), the cache's Redis client
    (70 ms) and Celery's side that queues jobs (50 ms). Nothing here may open a database,
    cache or broker connection: forked workers would share it."""
    from django.conf import settings
    from django.core.cache import caches
    from kombu.transport import resolve_transport
    from kombu.utils.imports import symbol_by_name

    from config.celery import app

    get_resolver().url_patterns  # noqa: B018 - reading it imports the URLconf
    for alias in settings.CACHES:
        getattr(caches[alias], "client", None)  # django-redis builds its client lazily
    app.loader.import_default_modules()  # the task modules
    app.tasks  # noqa: B018 - reading it registers them
    app.amqp  # noqa: B018 - the message builder, built on first use
    if app.conf.broker_url:
        symbol_by_name(resolve_transport(app.connection_for_write().transport_cls))


_import_what_the_first_requests_would()
