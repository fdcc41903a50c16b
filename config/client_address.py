"""The client's address as the server may trust it."""

from __future__ import annotations

from django.conf import settings


def client_address(request) -> str:
    """The client's address. Behind `CROWD_TRUSTED_PROXIES` proxies (nginx: 1) it is the
    one the nearest trusted proxy saw; with none, X-Forwarded-For is the client's own
    claim and is ignored, so a client cannot dodge a limit by inventing addresses."""
    proxies = settings.CROWD_TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return request.META.get("REMOTE_ADDR", "")
