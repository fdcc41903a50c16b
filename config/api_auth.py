"""How the API authenticates, and what it answers when it cannot: 401 with a challenge.

DRF answers a request without credentials 401 only when its first authentication class
names a challenge (`authenticate_header`), else 403. Session authentication comes first,
so that a browser's signed-in requests keep DRF's CSRF check; this subclass names the
challenge. Scripts and curl get `Basic`, which they can answer. Browsers do not: a Basic
challenge makes a browser ask for a password and then send it by itself with every
later request to the site, forged cross-site ones included, and Basic authentication
checks no CSRF token. Browsers mark every request with `Sec-Fetch-Mode` (the page
scripts' fetch calls and navigations alike), so they get a challenge naming the session
instead, which no browser prompts for.
"""

from __future__ import annotations

from rest_framework import authentication, exceptions

from config.login_lockout import SignInLockedOut

REALM = "Rationale Workbench API"
BASIC_CHALLENGE = f'Basic realm="{REALM}", charset="UTF-8"'
SESSION_CHALLENGE = f'Session realm="{REALM}"'


def _from_a_browser(request) -> bool:
    return "HTTP_SEC_FETCH_MODE" in request.META


class SessionAuthentication(authentication.SessionAuthentication):
    def authenticate(self, request):
        found = super().authenticate(request)
        if found is None:
            return None
        # DRF keeps the user it is given as `request.user`: the user itself, which the
        # page request holds once its lazy user is resolved (config/auth.py), rather than
        # the lazy object DRF read before resolving it.
        return request._request.user, found[1]

    def authenticate_header(self, request) -> str:
        return SESSION_CHALLENGE if _from_a_browser(request) else BASIC_CHALLENGE


class BasicAuthentication(authentication.BasicAuthentication):
    """DRF's Basic authentication, saying so when sign-in is locked out: axes refuses
    the attempt inside Django's `authenticate`, which DRF reports as wrong credentials,
    and marks the request it was given (DRF's, so the middleware never sees it)."""

    www_authenticate_realm = REALM

    def authenticate_credentials(self, userid, password, request=None):
        try:
            user, auth = super().authenticate_credentials(userid, password, request)
        except exceptions.AuthenticationFailed:
            if getattr(request, "axes_locked_out", False):
                raise SignInLockedOut() from None
            raise
        # A one-time password that an admin chose is for signing in on the website once,
        # where its owner must replace it; it opens nothing else (as the session's pages).
        from annotate.account_selectors import account_password_change_due

        if account_password_change_due(user=user):
            raise exceptions.PermissionDenied(
                "change the one-time password on the website first", code="password_change_required"
            )
        return user, auth
