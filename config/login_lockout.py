"""Sign-in lock-out after repeated failures (django-axes): what a locked-out sign-in is told,
on the sign-in form (AXES_LOCKOUT_CALLABLE) and on the API (config.api_auth's Basic
authentication). The counting, the cool-off and the audit rows are axes' own."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import render
from rest_framework import exceptions, status


def _cool_off_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def lockout_message() -> str:
    minutes = max(1, _cool_off_seconds() // 60)
    return (
        "Too many failed sign-ins for this account or from this address: signing in is "
        f"locked for {minutes} minutes, even with the right password. "
        "An admin can unlock it sooner."
    )


def lockout_response(request, original_response=None, credentials=None):
    """The sign-in form's answer while locked out (429, and when to retry)."""
    response = render(
        request,
        "registration/locked_out.html",
        {"message": lockout_message()},
        status=status.HTTP_429_TOO_MANY_REQUESTS,
    )
    response["Retry-After"] = str(_cool_off_seconds())
    return response


class SignInLockedOut(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self):
        super().__init__({"detail": lockout_message(), "code": self.default_code})
        self.wait = _cool_off_seconds()  # DRF's handler turns it into Retry-After
