"""A one-time password is replaced at the first sign-in: until then every page leads to the
password page and the API refuses (403).

Whether a change is due is read once, when the user signs in (one query), and kept in the
session, so that no other request pays a query for it. Setting a one-time password changes
the account's password hash, which ends its open sessions (Django checks the hash), so a
flag set later is always read at the next sign-in.
"""

from __future__ import annotations

from urllib.parse import quote

from django.db import InterfaceError, OperationalError
from django.http import JsonResponse
from django.shortcuts import redirect
from django.urls import reverse

from annotate.account_selectors import account_password_change_due

SESSION_KEY = "rw_password_change_required"
API_PREFIX = "/api/"
# What a user who must change their password may still open.
_OPEN_URL_NAMES = ("password-change", "logout", "javascript-catalog", "language-set")


def remember_password_change_on_login(sender, request, user, **kwargs):
    """Signal receiver (user_logged_in)."""
    if request is None or not hasattr(request, "session"):
        return
    if account_password_change_due(user=user):
        request.session[SESSION_KEY] = True
    else:
        request.session.pop(SESSION_KEY, None)


def password_change_done(session) -> None:
    session.pop(SESSION_KEY, None)


def _change_due(request) -> bool:
    session = getattr(request, "session", None)
    if session is None:
        return False
    try:
        return bool(session.get(SESSION_KEY)) and request.user.is_authenticated
    except (OperationalError, InterfaceError):
        return False  # the database is away: the view answers 503


class PasswordChangeRequiredMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self._open_paths: frozenset[str] | None = None

    def __call__(self, request):
        if _change_due(request) and request.path_info not in self._open():
            if request.path_info.startswith(API_PREFIX):
                return JsonResponse(
                    {
                        "detail": "change the one-time password on the website first",
                        "code": "password_change_required",
                    },
                    status=403,
                )
            return redirect(f"{reverse('password-change')}?next={quote(request.get_full_path())}")
        return self.get_response(request)

    def _open(self) -> frozenset[str]:
        if self._open_paths is None:  # the URLconf is not loaded when middleware is built
            self._open_paths = frozenset(reverse(name) for name in _OPEN_URL_NAMES)
        return self._open_paths
