from importlib import import_module

from celery import shared_task
from django.conf import settings


@shared_task
def sessions_clear_expired() -> None:
    """What `manage.py clearsessions` does, started by Celery beat (CELERY_BEAT_SCHEDULE)
    so that no cron job has to be remembered: expired sign-in sessions are deleted."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
