"""Which roles an account may hold: every way of giving a role passes here (the services,
the invitations, and ProjectMembership.clean for the Django admin's forms)."""

from __future__ import annotations

from annotate.account_rules import CROWD_ACCOUNT_ROLES, membership_role_refusal
from annotate.models import Role
from annotate.platform_accounts import platform_accounts
from config.exceptions import ApplicationError


def role_check(role: str) -> None:
    if role not in Role.values:
        raise ApplicationError(
            f"role: unknown role {role!r}; expected one of {', '.join(Role.values)}",
            extra={"field": "role"},
        )


def membership_role_check(*, user, role: str) -> None:
    """Refuse a role the account may not hold (a crowd worker's account: annotator only)."""
    role_check(role)
    if role in CROWD_ACCOUNT_ROLES:
        return  # any account may annotate: no look-up on the crowd entry's path
    refusal = membership_role_refusal(
        role=role, signs_in_through_platform=bool(platform_accounts([user.pk]))
    )
    if refusal:
        raise ApplicationError(f"role: {refusal}", extra={"field": "role"})
