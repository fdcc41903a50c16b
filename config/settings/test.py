"""pytest. Same environment switches as base (DATABASE_URL, CELERY_BROKER_URL), faster hashing."""

from config.env import env
from config.settings.base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Ordinary tests run Celery tasks in-process; the integration tests switch to the real
# worker, whose own process queues tasks for real (its environment says so).
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
MEDIA_ROOT = env.path("DJANGO_MEDIA_ROOT", default="/tmp/rationale-workbench-test-media")  # noqa: S108
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# One JSON line per request is noise in test output.
LOGGING["loggers"]["rationale_workbench.requests"]["level"] = "WARNING"  # noqa: F405
