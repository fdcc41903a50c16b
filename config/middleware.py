"""Request ids, structured request logs, and 503 instead of 500 when the database or the
job queue's broker is away."""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import time

from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.contrib.sessions.middleware import SessionMiddleware
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template import loader
from django.utils.functional import SimpleLazyObject, empty

logger = logging.getLogger("rationale_workbench.requests")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
RETRY_AFTER_SECONDS = "5"


def trusted_proxy_networks(entries: list[str]) -> tuple:
    """TRUSTED_PROXIES' addresses and networks ("10.0.0.5", "172.16.0.0/12"); a bad entry
    stops the process at start with its name."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            from django.core.exceptions import ImproperlyConfigured

            raise ImproperlyConfigured(
                f"DJANGO_TRUSTED_PROXIES: {entry!r} is not an address or a network"
            ) from None
    return tuple(networks)


def address_in(address: str, networks: tuple) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in networks)


class ForwardedProtoFromTrustedProxyMiddleware:
    """Drops X-Forwarded-Proto unless the request came straight from a trusted proxy
    (TRUSTED_PROXIES): SECURE_PROXY_SSL_HEADER makes Django believe the header, and a
    client reaching gunicorn directly could otherwise claim HTTPS for a plain request
    (Secure cookies sent over plain HTTP, no redirect to HTTPS)."""

    HEADER = "HTTP_X_FORWARDED_PROTO"

    def __init__(self, get_response):
        from django.conf import settings

        self.get_response = get_response
        self.networks = trusted_proxy_networks(settings.TRUSTED_PROXIES)

    def __call__(self, request):
        meta = request.META
        if self.HEADER in meta and not address_in(meta.get("REMOTE_ADDR", ""), self.networks):
            del meta[self.HEADER]
        return self.get_response(request)


class RequestIdMiddleware:
    """Tags every request with an id (the client's X-Request-ID if sane, else a new one),
    echoes it in the response and writes one JSON log line per request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # From META: request.headers would build a mapping of every header first, a
        # twentieth of a bare request's time, for this one.
        given = request.META.get("HTTP_X_REQUEST_ID", "")
        # 128 random bits as 32 hex digits, as nginx's $request_id: a UUID object cost six
        # times as much to make, for version bits nobody reads.
        request.request_id = given if _SAFE_ID.match(given) else os.urandom(16).hex()
        start = time.perf_counter()
        response = self.get_response(request)
        response["X-Request-ID"] = request.request_id
        # Only a user already loaded: resolving the lazy one would query the database here,
        # outside every error handler, and turn an outage's 503 into a 500.
        if not logger.isEnabledFor(logging.INFO):
            return response
        user = getattr(request, "_cached_user", None)
        logger.info(
            json.dumps(
                {
                    "request_id": request.request_id,
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": round((time.perf_counter() - start) * 1000, 1),
                    "user": user.pk if user is not None and user.is_authenticated else None,
                }
            )
        )
        return response


class DatabaseUnavailableMiddleware:
    """A lost database connection answers 503 with Retry-After, not 500; Django opens a new
    connection on the next request, so service recovers by itself when the database returns."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, OperationalError | InterfaceError):
            logger.warning("database unavailable: %s", exception)
            return _unavailable(request)
        return None


class BrokerUnavailableMiddleware:
    """A job that could not be queued (Celery's broker, Redis, away) answers 503 with
    Retry-After, not 500. Only requests that start a job publish anything: a submit's
    quality checks are the beat sweep's (qc/receivers.py), so annotators never meet this.
    The job's row was committed before the publish failed; a service that queues through
    config.job_queue.task_send_on_commit marks it failed, saying why."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from kombu.exceptions import OperationalError as BrokerError

        if isinstance(exception, BrokerError):
            logger.warning("job queue unavailable: %s", exception)
            return unavailable_response(
                request,
                "the job queue is unavailable, so the job was not started; start it again shortly",
                "queue_unavailable",
            )
        return None


class OutageTolerantSessionMiddleware(SessionMiddleware):
    """Django's session middleware, minus two ways a database outage became a 500: touching
    a session whose load failed, and saving one while the database is away."""

    def process_response(self, request, response):
        session = getattr(request, "session", None)
        if session is not None and session.accessed and not hasattr(session, "_session_cache"):
            return response  # loading it failed; there is nothing to save
        try:
            return super().process_response(request, response)
        except (OperationalError, InterfaceError) as exc:
            logger.warning("database unavailable while saving the session: %s", exc)
            return _unavailable(request)


def _unavailable(request=None) -> HttpResponse:
    return unavailable_response(
        request, "the database is unavailable; retry shortly", "database_unavailable"
    )


def _wants_page(request) -> bool:
    return (
        request is not None
        and not request.path.startswith("/api/")
        and "text/html" in request.META.get("HTTP_ACCEPT", "")
    )


def unavailable_response(request, detail: str, code: str) -> HttpResponse:
    """A 503 with Retry-After: the styled page for a browser asking for a page, else JSON.

    The page is rendered from a plain context (no request, user or session), as whatever is
    away may be what those need."""
    if _wants_page(request):
        here = request.get_full_path()
        # "//host/..." would be a link to another site.
        retry_url = here if not here.startswith("//") else "/"
        html = loader.render_to_string("503.html", {"retry_url": retry_url})
        response = HttpResponse(html, status=503)
    else:
        response = JsonResponse({"detail": detail, "code": code}, status=503)
    response["Retry-After"] = RETRY_AFTER_SECONDS
    return response


class LazyMessageMiddleware(MessageMiddleware):
    """Django's message middleware, with the storage built when a message is first added or
    read. Only the admin and the sign-in pages use messages; built on every API request,
    the storage (a cookie signer and two backends) cost 2 % of the instructions of a "next"
    + "submit" pair, and there is nothing to save for a request that never touched it."""

    def process_request(self, request):
        request._messages = SimpleLazyObject(lambda: default_storage(request))

    def process_response(self, request, response):
        messages = getattr(request, "_messages", None)
        if isinstance(messages, SimpleLazyObject) and messages._wrapped is empty:
            return response
        return super().process_response(request, response)
