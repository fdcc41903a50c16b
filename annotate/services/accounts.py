"""Account management without the Django admin: project admins and site staff create
accounts, reset passwords and deactivate or reactivate accounts; every action writes an
AccountEvent in the same transaction. Who may act on whom is annotate.account_rules.

An account gets either a one-time password, shown once to the admin, which its owner
must replace at their next sign-in (PasswordChangeRequired), or a link (a signed, dated,
single-use token, annotate.account_tokens) that opens a page to choose a password.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import BaseUserManager
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import get_random_string
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotate import account_selectors
from annotate.account_rules import AccountOperation, account_refusal
from annotate.account_tokens import account_link_tokens
from annotate.models import (
    AccountAction,
    AccountEvent,
    PasswordChangeRequired,
    Project,
    ProjectMembership,
    Role,
)
from config.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from config.transactions import create_unless_taken

# Letters and digits that cannot be mistaken for one another when read out or copied.
ONE_TIME_PASSWORD_CHARS = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # noqa: S105
ONE_TIME_PASSWORD_LENGTH = 14
# Crowd accounts are named "<platform>.<id>" (crowd.services.crowd_username); an account
# made here under such a name would stop that worker's platform entry from signing in.
PLATFORM_USERNAME_PREFIXES = ("mturk.", "prolific.", "other.")


class Credential(StrEnum):
    ONE_TIME_PASSWORD = "one_time_password"  # noqa: S105 - a name, not a password
    LINK = "link"


@dataclass(frozen=True)
class AccountIssued:
    """What the admin passes on to the account's owner, shown once and never stored."""

    user: object
    one_time_password: str | None = None
    link_uid: str | None = None
    link_token: str | None = None
    link_expires_at: datetime | None = None


def _issue(user, credential: Credential) -> AccountIssued:
    """Give `user` a new one-time password or a new link; whatever they had stops working
    (a changed password also ends their sessions, as Django checks its hash)."""
    if credential is Credential.ONE_TIME_PASSWORD:
        password = get_random_string(ONE_TIME_PASSWORD_LENGTH, ONE_TIME_PASSWORD_CHARS)
        user.set_password(password)
        user.save(update_fields=["password"])
        PasswordChangeRequired.objects.get_or_create(user=user)
        _sign_in_unlock(user)
        return AccountIssued(user=user, one_time_password=password)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    PasswordChangeRequired.objects.filter(user=user).delete()
    return AccountIssued(
        user=user,
        link_uid=urlsafe_base64_encode(force_bytes(user.pk)),
        link_token=account_link_tokens.make_token(user),
        link_expires_at=timezone.now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT),
    )


def _sign_in_unlock(user) -> int:
    """A new password lifts the sign-in lock-out of the account's name (django-axes), from
    every address; returns how many (name, address) counters went."""
    from axes.utils import reset

    return reset(username=user.get_username())


def _check_acting_in(acting_user, project: Project | None) -> None:
    if acting_user.is_staff or acting_user.is_superuser:
        return
    if project is None:
        raise PermissionDeniedError("managing accounts outside a project needs site staff status")
    if not ProjectMembership.objects.filter(
        project=project, user=acting_user, role=Role.ADMIN
    ).exists():
        raise PermissionDeniedError(f"this needs the admin role in project {project.name!r}")


def _check_may(acting_user, subject, operation: AccountOperation) -> None:
    refusal = account_refusal(
        actor=account_selectors.account_actor(acting_user),
        subject=account_selectors.account_subjects([subject])[subject.pk],
        operation=operation,
    )
    if refusal:
        raise PermissionDeniedError(refusal)


def _locked(subject):
    return get_user_model().objects.select_for_update().get(pk=subject.pk)


def _event(*, action: str, subject, actor=None, project=None, detail: str = "") -> AccountEvent:
    return AccountEvent.objects.create(
        project=project, actor=actor, subject=subject, action=action, detail=detail
    )


def _check_username(username: str) -> None:
    user_model = get_user_model()
    lowered = username.lower()
    if lowered.startswith(PLATFORM_USERNAME_PREFIXES):
        raise ApplicationError(
            f"username: {username!r} is how crowd workers' accounts are named; choose another",
            extra={"field": "username"},
        )
    if user_model.objects.filter(username__iexact=username).exists():
        raise ConflictError(
            f"username: an account named {username!r} (or differing only in case) exists "
            "already; add it as a member instead",
            extra={"field": "username"},
        )


@transaction.atomic
def account_create(
    *,
    acting_user,
    username: str,
    credential: Credential,
    email: str = "",
    project: Project | None = None,
    role: str | None = None,
) -> AccountIssued:
    """A new account, member of `project` with `role` when given (project admins must give
    both: their own project)."""
    _check_acting_in(acting_user, project)
    if (project is None) != (role is None):
        raise ApplicationError(
            "role: give a project and a role together, or neither", extra={"field": "role"}
        )
    if role is not None and role not in Role.values:
        raise ApplicationError(
            f"role: unknown role {role!r}; expected one of {', '.join(Role.values)}",
            extra={"field": "role"},
        )
    _check_username(username)
    user_model = get_user_model()
    user = create_unless_taken(
        user_model, username=username, email=BaseUserManager.normalize_email(email)
    )
    if user is None:  # created by a concurrent request since the check
        raise ConflictError(
            f"username: an account named {username!r} exists already", extra={"field": "username"}
        )
    if project is not None:
        ProjectMembership.objects.create(project=project, user=user, role=role)
    issued = _issue(user, credential)
    how = "one-time password" if credential is Credential.ONE_TIME_PASSWORD else "invitation link"
    _event(
        action=AccountAction.ACCOUNT_CREATE,
        subject=user,
        actor=acting_user,
        project=project,
        detail=f"{role}, {how}" if role else how,
    )
    return issued


@transaction.atomic
def account_password_reset(
    *, acting_user, subject, credential: Credential, project: Project | None = None
) -> AccountIssued:
    _check_acting_in(acting_user, project)
    subject = _locked(subject)
    _check_may(acting_user, subject, AccountOperation.PASSWORD_RESET)
    issued = _issue(subject, credential)
    _event(
        action=AccountAction.PASSWORD_RESET,
        subject=subject,
        actor=acting_user,
        project=project,
        detail="one-time password" if credential is Credential.ONE_TIME_PASSWORD else "reset link",
    )
    return issued


@transaction.atomic
def account_active_set(*, acting_user, subject, active: bool, project: Project | None = None):
    """Deactivate (the account can no longer sign in, and its sessions end) or reactivate."""
    _check_acting_in(acting_user, project)
    subject = _locked(subject)
    operation = AccountOperation.REACTIVATE if active else AccountOperation.DEACTIVATE
    _check_may(acting_user, subject, operation)
    if subject.is_active == active:
        raise ConflictError(
            "this account is already active" if active else "this account is already deactivated"
        )
    subject.is_active = active
    subject.save(update_fields=["is_active"])
    _event(
        action=AccountAction.REACTIVATE if active else AccountAction.DEACTIVATE,
        subject=subject,
        actor=acting_user,
        project=project,
    )
    return subject


@transaction.atomic
def account_password_set_from_link(*, user, password: str):
    """The owner chose a password from an invitation or reset link (already checked)."""
    user = _locked(user)
    user.set_password(password)
    user.save(update_fields=["password"])
    PasswordChangeRequired.objects.filter(user=user).delete()
    _sign_in_unlock(user)
    _event(
        action=AccountAction.PASSWORD_SET,
        subject=user,
        actor=user,
        project=account_selectors.account_link_project(user=user),
    )
    return user


@transaction.atomic
def account_password_change(*, user, password: str):
    """The owner replaced their password (a one-time password they had to replace, or
    any other: the form checked the old one)."""
    user = _locked(user)
    was_one_time = PasswordChangeRequired.objects.filter(user=user).delete()[0] > 0
    user.set_password(password)
    user.save(update_fields=["password"])
    _event(
        action=AccountAction.PASSWORD_CHANGE,
        subject=user,
        actor=user,
        project=account_selectors.account_link_project(user=user) if was_one_time else None,
        detail="replaced a one-time password" if was_one_time else "",
    )
    return user


@transaction.atomic
def account_sign_in_unlock(*, acting_user, subject):
    """Site staff lift the account's sign-in lock-out from every address before its
    cool-off ends (a locked address, whatever the name, is lifted with axes_reset_ip)."""
    if not (acting_user.is_staff or acting_user.is_superuser):
        raise PermissionDeniedError("lifting a sign-in lock-out needs site staff status")
    subject = _locked(subject)
    cleared = _sign_in_unlock(subject)
    _event(
        action=AccountAction.SIGN_IN_UNLOCK,
        subject=subject,
        actor=acting_user,
        detail=f"{cleared} failure counter(s) cleared",
    )
    return subject
