"""Who may act on whose account: plain data in, a refusal (or None) out; no ORM.

Site staff act on any account but a superuser's. A project admin acts only on people who
belong to nothing but projects they administer: an annotator of theirs who also works in
someone else's project would otherwise be locked out of that project by them. Other
admins and staff are out of a project admin's reach too, so that no admin can lock out
a peer (site staff can). Nobody resets or deactivates their own account here: the
password page changes one's own password, and deactivating oneself could not be undone.
A crowd worker's account signs in through its platform and has no password; giving it
one would stop the platform's entry from signing it in.

Who joins a project: a project admin adds directly only people who already belong to a
project they administer (site staff: anyone). Anyone else is invited and joins only by
accepting, signed in as themselves; otherwise an admin could pull any account into their
project, reset its password and sign in as it.

A crowd worker's account holds no role but annotator, anywhere: its platform id is its
only credential and platforms' ids are not secret, so any other role would be open to
whoever knows the id.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from django.utils.translation import gettext as _


class AccountOperation(Enum):
    PASSWORD_RESET = "password_reset"  # noqa: S105 - an operation's name
    DEACTIVATE = "deactivate"
    REACTIVATE = "reactivate"


@dataclass(frozen=True)
class Actor:
    user_id: int
    is_staff: bool
    is_superuser: bool
    admin_project_ids: frozenset[int]

    @property
    def acts_site_wide(self) -> bool:
        return self.is_staff or self.is_superuser


@dataclass(frozen=True)
class Subject:
    user_id: int
    is_staff: bool
    is_superuser: bool
    is_active: bool
    project_ids: frozenset[int]
    # Roles held in any project, e.g. {"admin", "annotator"}.
    roles: frozenset[str]
    signs_in_through_platform: bool


CROWD_ACCOUNT_ROLES = frozenset({"annotator"})


def member_addable_directly(*, actor: Actor, subject: Subject) -> bool:
    """Whether `actor` may give `subject` a role without `subject` accepting an invitation."""
    return actor.acts_site_wide or bool(subject.project_ids & actor.admin_project_ids)


def membership_role_refusal(*, role: str, signs_in_through_platform: bool) -> str | None:
    """Why an account may not hold `role`, or None if it may."""
    if signs_in_through_platform and role not in CROWD_ACCOUNT_ROLES:
        return _(
            "a crowd worker's account can only be an annotator: its platform id is its only "
            "credential, and platform ids are not secret"
        )
    return None


def account_refusal(*, actor: Actor, subject: Subject, operation: AccountOperation) -> str | None:
    """Why `actor` may not do `operation` to `subject`'s account, or None if they may."""
    if subject.is_superuser:
        return _("superuser accounts are managed on the command line, not here")
    if subject.user_id == actor.user_id:
        if operation is AccountOperation.PASSWORD_RESET:
            return _("change your own password on the password page")
        return _("you cannot deactivate or reactivate your own account")
    if not actor.acts_site_wide:
        if subject.is_staff:
            return _("site staff accounts are managed by site staff")
        if not subject.project_ids & actor.admin_project_ids:
            return _("this account is not a member of a project you administer")
        if subject.project_ids - actor.admin_project_ids:
            return _(
                "this account also belongs to a project you do not administer; "
                "ask site staff, so that you do not lock them out of it"
            )
        if "admin" in subject.roles:
            return _("another admin's account is managed by site staff")
    if operation is AccountOperation.PASSWORD_RESET and subject.signs_in_through_platform:
        return _("a crowd worker signs in through their platform; a password would stop that")
    return None


def membership_change_refusal(
    *, actor: Actor, subject: Subject, subject_project_roles: frozenset[str]
) -> str | None:
    """Why `actor` may not change `subject`'s roles in a project or remove them from it, or
    None if they may. The accounts page's rules: nobody acts on a superuser or on
    themselves; a project admin does not act on site staff or on another admin of the
    project (site staff may, so that a project's admins can be changed at all)."""
    if subject.is_superuser:
        return _("superuser accounts are managed on the command line, not here")
    if subject.user_id == actor.user_id:
        return _("you cannot change your own roles or remove yourself; ask another admin")
    if not actor.acts_site_wide:
        if subject.is_staff:
            return _("site staff accounts are managed by site staff")
        if "admin" in subject_project_roles:
            return _("another admin's roles are changed by site staff")
    return None
