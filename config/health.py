"""/healthz: the process answers. /readyz: the database and the broker (if any) answer.

Both are public, for load balancers and orchestrators, so they say which dependency is
down but not why: the exception goes to the log, where host names are not exposed.

HealthUrlsMiddleware answers them before the Host header is validated or an HTTPS redirect
is made: container and load-balancer checks call the process by an address of its own
(127.0.0.1, a pod's IP) over plain HTTP inside the network, which the production
ALLOWED_HOSTS and SECURE_SSL_REDIRECT would answer with 400 or 301. Their answers build
no URL from the Host header, so skipping its validation exposes nothing.
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


class HealthUrlsMiddleware:
    """Serves /healthz and /readyz ahead of host validation and the HTTPS redirect (see
    the module's docstring); every other path goes on through the middleware."""

    views = {"/healthz": healthz, "/readyz": readyz}

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        view = self.views.get(request.path_info)
        if view is not None and request.method in {"GET", "HEAD"}:
            return view(request)
        return self.get_response(request)
