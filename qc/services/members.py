"""A project's members after they joined: their roles changed, or removed altogether.

Who may act on whom follows the accounts page (annotate.account_rules). Their work stays:
annotations, reviews and the audit trail keep naming them; only their open leases end, so
that their slots go back to the others. A project keeps at least one admin: every change
locks the project's admin memberships (and the member's own) first, so two admins demoting
each other at once are served one after the other, and the second finds the last admin.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from annotate import account_selectors
from annotate.account_rules import membership_change_refusal
from annotate.models import Project, ProjectMembership, Role
from annotate.services import worker_leases_release
from annotate.services.membership_roles import membership_role_check
from config.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from qc.models import AuditAction
from qc.services.workers import audit_record

LAST_ADMIN = "a project keeps at least one admin: make someone else admin first"


def _locked_roles(project: Project, user_id: int) -> tuple[set[str], int]:
    """The member's roles and the number of admins, with the project's admin memberships
    and the member's own locked until the transaction ends (in one order: no deadlock)."""
    rows = list(
        ProjectMembership.objects.filter(project=project)
        .filter(Q(role=Role.ADMIN) | Q(user_id=user_id))
        .select_for_update()
        .order_by("pk")
        .values_list("user_id", "role")
    )
    roles = {role for member, role in rows if member == user_id}
    admins = {member for member, role in rows if role == Role.ADMIN}
    return roles, len(admins)


def _refusal_check(*, project: Project, subject_user, roles: set[str], acting_user) -> None:
    actor = account_selectors.account_actor(acting_user)
    subject = account_selectors.account_subjects([subject_user])[subject_user.pk]
    refusal = membership_change_refusal(
        actor=actor, subject=subject, subject_project_roles=frozenset(roles)
    )
    if refusal:
        raise PermissionDeniedError(refusal)


@transaction.atomic
def membership_roles_set(*, project: Project, user, roles: list[str], acting_user) -> list[str]:
    """Give the member exactly `roles` in the project; returns them, sorted. Losing the
    annotator role ends their open leases here."""
    wanted = set(roles)
    if not wanted:
        raise ApplicationError(
            "roles: give at least one role; to take every role away, remove the member",
            extra={"field": "roles"},
        )
    for role in sorted(wanted):
        membership_role_check(user=user, role=role)
    held, admins = _locked_roles(project, user.pk)
    if not held:
        raise ConflictError("this account is no longer a member of the project")
    _refusal_check(project=project, subject_user=user, roles=held, acting_user=acting_user)
    if Role.ADMIN in held and Role.ADMIN not in wanted and admins <= 1:
        raise ConflictError(LAST_ADMIN)
    if wanted == held:
        return sorted(held)
    ProjectMembership.objects.filter(project=project, user=user, role__in=held - wanted).delete()
    ProjectMembership.objects.bulk_create(
        [ProjectMembership(project=project, user=user, role=role) for role in wanted - held]
    )
    if Role.ANNOTATOR in held - wanted:
        worker_leases_release(project=project, worker=user)
    audit_record(
        project=project,
        actor=acting_user,
        worker=user,
        action=AuditAction.ROLE_CHANGE,
        reason=f"roles {', '.join(sorted(held))} -> {', '.join(sorted(wanted))}",
        details={"before": sorted(held), "after": sorted(wanted)},
    )
    return sorted(wanted)


@transaction.atomic
def membership_remove(*, project: Project, user, acting_user) -> int:
    """Take every role of the member in the project away; their work stays, attributed to
    them, and their open leases end. Returns how many leases ended."""
    held, admins = _locked_roles(project, user.pk)
    if not held:
        raise ConflictError("this account is no longer a member of the project")
    _refusal_check(project=project, subject_user=user, roles=held, acting_user=acting_user)
    if Role.ADMIN in held and admins <= 1:
        raise ConflictError(LAST_ADMIN)
    ProjectMembership.objects.filter(project=project, user=user).delete()
    released = worker_leases_release(project=project, worker=user)
    audit_record(
        project=project,
        actor=acting_user,
        worker=user,
        action=AuditAction.MEMBER_REMOVE,
        reason=f"removed (held {', '.join(sorted(held))}); {released} open lease(s) ended",
        details={"roles": sorted(held), "leases_released": released},
    )
    return released
