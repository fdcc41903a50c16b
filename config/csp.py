"""The Content Security Policy header (django-csp), with the site's policy built once per
process.

django-csp builds the header afresh for every response: a copy of every directive, a
merge with the response's own changes, then the string. For almost every response the
result is the same string, the site's policy from settings; only the few crowd pages that
widen a directive (`response._csp_update` / `_csp_replace`, crowd/views.py) or a page that
used a nonce differ. Those still go through django-csp's builder; every other response
gets the string built once, which is what the builder would have returned.
"""

from __future__ import annotations

import http.client

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings

# What a response sets to have a policy of its own (django-csp's decorators and views).
_OWN_POLICY_ATTRIBUTES = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)
_DEBUG_EXEMPT_STATUSES = (http.client.INTERNAL_SERVER_ERROR, http.client.NOT_FOUND)


class SitePolicy:
    """The site's policies as headers, rebuilt only when the settings object changes
    (tests override it)."""

    def __init__(self):
        self._built_from: tuple | None = None
        self._headers: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    def headers(self) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """(header, policy, excluded path prefixes) for each policy that is set."""
        enforced = getattr(settings, "CONTENT_SECURITY_POLICY", None)
        report_only = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
        if self._built_from is None or (
            self._built_from[0] is not enforced or self._built_from[1] is not report_only
        ):
            headers = []
            for header, policy, config in (
                (HEADER, build_policy(), enforced),
                (HEADER_REPORT_ONLY, build_policy(report_only=True), report_only),
            ):
                if policy:
                    prefixes = tuple((config or {}).get("EXCLUDE_URL_PREFIXES", None) or ())
                    headers.append((header, policy, prefixes))
            self._headers = tuple(headers)
            self._built_from = (enforced, report_only)
        return self._headers


class SitePolicyCSPMiddleware(CSPMiddleware):
    """django-csp's middleware; responses without a policy of their own and pages that
    used no nonce get the site's policy built once (see the module's docstring)."""

    def __init__(self, get_response):
        super().__init__(get_response)
        self._site_policy = SitePolicy()

    def process_response(self, request, response):
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in _OWN_POLICY_ATTRIBUTES
        ):
            return super().process_response(request, response)
        if settings.DEBUG and response.status_code in _DEBUG_EXEMPT_STATUSES:
            return response
        for header, policy, excluded in self._site_policy.headers():
            exempt_attribute = "_csp_exempt" if header == HEADER else "_csp_exempt_ro"
            if (
                header not in response
                and not getattr(response, exempt_attribute, False)
                and not request.path_info.startswith(excluded)
            ):
                response[header] = policy
        # As django-csp does: a nonce asked for after the header is written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
