"""Which language a request's pages speak: the signed-in user's choice, else the browser's.

The choice lives in `UserPreference` (frontend.models); the login signal and the header's
switcher copy it into the session, so a page request reads it with the session row it loads
anyway instead of querying for it. The JSON API stays in English: its error messages are
part of what clients read and match, and the hot path ("next", "submit") is spared the
language negotiation.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.middleware.locale import LocaleMiddleware
from django.utils import translation

# The signed-in user's language, in their session.
SESSION_KEY = "rw_language"
API_PREFIX = "/api/"


def supported_language(code: str | None) -> str | None:
    """`code` as one of settings.LANGUAGES (zh-Hans-CN -> zh-hans), or None."""
    if not code:
        return None
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None


class PageLocaleMiddleware(LocaleMiddleware):
    """Django's LocaleMiddleware (language cookie, then Accept-Language), with the user's
    stored language first, and nothing done for the API."""

    def process_request(self, request):
        if request.path_info.startswith(API_PREFIX):
            # A thread keeps the language of its last page request; the API gets the default.
            translation.deactivate()
            return
        chosen = supported_language(self._session_language(request))
        if chosen is None:
            super().process_request(request)
            return
        translation.activate(chosen)
        request.LANGUAGE_CODE = chosen

    def process_response(self, request, response):
        if request.path_info.startswith(API_PREFIX):
            return response
        response = super().process_response(request, response)
        # The page is rendered: what runs next in this thread (another request's early
        # middleware, an eager Celery task, a test) gets the default language, not this one.
        translation.deactivate()
        return response

    @staticmethod
    def _session_language(request) -> str | None:
        session = getattr(request, "session", None)
        if session is None:
            return None
        try:
            return session.get(SESSION_KEY)
        except (OperationalError, InterfaceError):
            # The database is away: the browser's language, and the view answers 503.
            return None
