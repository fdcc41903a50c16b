"""pytest. Same environment switches as base (DATABASE_URL, CELERY_BROKER_URL), faster hashing."""

import os

from config.env import env

# pytest-xdist runs the suite in several processes (gw0, gw1, ...). Each test empties the
# cache (tests/conftest.py), which on Redis empties a whole database: each process takes its
# own from CACHE_URL_PER_TEST_WORKER (one URL per process, space-separated) and hands it to
# the processes it starts (Celery workers, servers) through the environment.
_test_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
_cache_urls = os.environ.get("CACHE_URL_PER_TEST_WORKER", "").split()
if _test_worker.startswith("gw") and _cache_urls:
    _index = int(_test_worker[2:])
    if _index >= len(_cache_urls):
        raise RuntimeError(
            f"pytest process {_test_worker} has no cache of its own: CACHE_URL_PER_TEST_WORKER "
            f"names {len(_cache_urls)}; give one Redis database per process (-n)"
        )
    os.environ["CACHE_URL"] = _cache_urls[_index]
from config.settings.base import *  # noqa: E402, F403

DEBUG = False
if DATABASES["default"]["ENGINE"] == "config.postgresql":  # noqa: F405
    # The same backend, emptying the tables between transactional tests by DELETE.
    DATABASES["default"]["ENGINE"] = "config.postgresql_test"  # noqa: F405
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
