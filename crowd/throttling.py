"""The entry's rate limit per client address, kept in Django's cache (DRF's throttle,
used outside DRF: the entry is a page, not an API)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


def client_address(request) -> str:
    """The client's address. Behind `CROWD_TRUSTED_PROXIES` proxies (nginx: 1) it is the
    one the nearest trusted proxy saw; with none, X-Forwarded-For is the client's own
    claim and is ignored, so a client cannot dodge the limit by inventing addresses."""
    proxies = settings.CROWD_TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return request.META.get("REMOTE_ADDR", "")


class CrowdEntryThrottle(SimpleRateThrottle):
    scope = "crowd_entry"

    def get_rate(self) -> str:
        return settings.CROWD_ENTRY_RATE

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}
