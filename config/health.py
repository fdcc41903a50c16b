"""/healthz: the process answers. /readyz: the database and the broker (if any) answer.

Both are public, for load balancers and orchestrators, so they say which dependency is
down but not why: the exception goes to the log, where host names are not exposed.
"""

import logging

from django.conf import settings
from django.db import connection
from django.http import JsonResponse

logger = logging.getLogger(__name__)


def healthz(request):
    return JsonResponse({"status": "ok"})


def _database_ok() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _broker_ok() -> str | None:
    if not settings.CELERY_BROKER_URL:
        return None
    from kombu import Connection

    try:
        with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def readyz(request):
    checks = {"database": _database_ok(), "broker": _broker_ok()}
    for name, problem in checks.items():
        if problem is not None:
            logger.warning("readiness: %s unavailable: %s", name, problem)
    ready = all(problem is None for problem in checks.values())
    body = {
        "status": "ready" if ready else "unavailable",
        "checks": {
            name: "ok" if problem is None else "unavailable" for name, problem in checks.items()
        },
    }
    response = JsonResponse(body, status=200 if ready else 503)
    if not ready:
        response["Retry-After"] = "5"
    return response
