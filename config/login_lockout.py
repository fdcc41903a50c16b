"""Sign-in lock-out after repeated failures (django-axes): what counts towards a lock, and
what a locked-out sign-in is told, on the sign-in form (AXES_LOCKOUT_CALLABLE) and on the
API (config.api_auth's Basic authentication). The cool-off and the audit rows are axes'.

A lock holds a (user name, address) pair: AXES_FAILURE_LIMIT failures for one name from
one address lock that name from that address only, so that nobody can lock an annotator
out from elsewhere by typing wrong passwords for their name. An address that fails
LOGIN_ADDRESS_FAILURE_LIMIT times, whatever the names, is locked for every name: someone
trying many names from one place is slowed down to that many guesses per cool-off.
"""

from __future__ import annotations

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Q, Sum
from django.shortcuts import render
from rest_framework import exceptions, status


class PairAndAddressLockoutHandler(AxesDatabaseHandler):
    """axes' database handler, counting failures per (user name, address) against
    AXES_FAILURE_LIMIT and per address against LOGIN_ADDRESS_FAILURE_LIMIT."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        """The failures that count towards locking this sign-in: the pair's own, or the
        failure limit itself once the address has used up its allowance."""
        attempts = AccessAttempt.objects.filter(ip_address=request.axes_ip_address)
        if settings.AXES_COOLOFF_TIME is not None:
            attempts = attempts.filter(attempt_time__gte=get_cool_off_threshold(request))
        username = get_client_username(request, credentials)
        totals = attempts.aggregate(
            address=Sum("failures_since_start"),
            pair=Sum("failures_since_start", filter=Q(username=username)),
        )
        pair, address = totals["pair"] or 0, totals["address"] or 0
        if address >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            return max(pair, get_failure_limit(request, credentials))
        return pair


def _cool_off_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def lockout_message() -> str:
    minutes = max(1, _cool_off_seconds() // 60)
    return (
        "Too many failed sign-ins for this account from your address, or from your address "
        f"in all: signing in from here is locked for {minutes} minutes, even with the right "
        "password. Site staff can unlock it sooner."
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
