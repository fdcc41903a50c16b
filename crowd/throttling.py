"""The entry's rate limit per client address, kept in Django's cache (DRF's throttle,
used outside DRF: the entry is a page, not an API)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from config.client_address import client_address


class CrowdEntryThrottle(SimpleRateThrottle):
    scope = "crowd_entry"

    def get_rate(self) -> str:
        return settings.CROWD_ENTRY_RATE

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}
