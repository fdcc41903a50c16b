"""Project invitations: an admin invites an account they may not add directly
(annotate.account_rules); its owner, signed in as themselves, accepts (and becomes a
member with the invited roles) or declines; an admin of the project may withdraw it while
it is open. Every step writes an AccountEvent in the same transaction."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotate.account_rules import CROWD_ACCOUNT_ROLES
from annotate.models import (
    AccountAction,
    AccountEvent,
    Project,
    ProjectInvitation,
    ProjectMembership,
    Role,
)
from annotate.platform_accounts import platform_accounts
from annotate.services.membership_roles import membership_role_check
from config.exceptions import ConflictError, NotFoundError, PermissionDeniedError
from config.transactions import create_unless_taken


def _event(*, action: str, invitation: ProjectInvitation, actor, detail: str = "") -> None:
    AccountEvent.objects.create(
        project=invitation.project,
        actor=actor,
        subject=invitation.invited_user,
        action=action,
        detail=detail or ", ".join(invitation.roles),
    )


def _open_locked(**lookup) -> ProjectInvitation | None:
    return (
        ProjectInvitation.objects.select_for_update()
        .select_related("project", "invited_user")
        .filter(answered_at__isnull=True, withdrawn_at__isnull=True, **lookup)
        .first()
    )


@transaction.atomic
def invitation_create(
    *, project: Project, user, role: str, acting_user
) -> ProjectInvitation | None:
    """Invite `user` into `project` with `role`, or add `role` to their open invitation.
    None when there is nothing to invite to: they hold the role already, or it is a role
    their account may not hold (a crowd account beyond annotator). The caller tells the
    inviting admin the same thing either way."""
    if ProjectMembership.objects.filter(project=project, user=user, role=role).exists():
        return None
    if role not in CROWD_ACCOUNT_ROLES and platform_accounts([user.pk]):
        return None
    invitation = _open_locked(project=project, invited_user=user)
    if invitation is None:
        invitation = create_unless_taken(
            ProjectInvitation,
            project=project,
            invited_user=user,
            roles=[role],
            invited_by=acting_user,
        )
        if invitation is None:  # a concurrent invitation committed first: extend it
            invitation = _open_locked(project=project, invited_user=user)
        else:
            _event(action=AccountAction.INVITE, invitation=invitation, actor=acting_user)
            return invitation
    if invitation is None or role in invitation.roles:
        return invitation
    invitation.roles = sorted({*invitation.roles, role}, key=Role.values.index)
    invitation.invited_by = acting_user
    invitation.save(update_fields=["roles", "invited_by"])
    _event(action=AccountAction.INVITE, invitation=invitation, actor=acting_user, detail=role)
    return invitation


def _answer(*, invitation_id: int, user, accepted: bool) -> ProjectInvitation:
    invitation = _open_locked(pk=invitation_id, invited_user=user)
    if invitation is None:
        # Someone else's invitation is as unknown to the caller as a missing one.
        raise NotFoundError(f"no open invitation with id {invitation_id} for you")
    if accepted:
        for role in invitation.roles:
            membership_role_check(user=user, role=role)
        for role in invitation.roles:
            ProjectMembership.objects.get_or_create(
                project=invitation.project, user=user, role=role
            )
    invitation.accepted = accepted
    invitation.answered_at = timezone.now()
    invitation.save(update_fields=["accepted", "answered_at"])
    _event(
        action=AccountAction.INVITE_ACCEPT if accepted else AccountAction.INVITE_DECLINE,
        invitation=invitation,
        actor=user,
    )
    return invitation


@transaction.atomic
def invitation_accept(*, invitation_id: int, user) -> ProjectInvitation:
    """`user` accepts their open invitation: they hold its roles in its project."""
    return _answer(invitation_id=invitation_id, user=user, accepted=True)


@transaction.atomic
def invitation_decline(*, invitation_id: int, user) -> ProjectInvitation:
    return _answer(invitation_id=invitation_id, user=user, accepted=False)


@transaction.atomic
def invitation_withdraw(*, project: Project, invitation_id: int, acting_user) -> ProjectInvitation:
    """An admin of `project` withdraws one of its open invitations."""
    if not (
        acting_user.is_superuser
        or ProjectMembership.objects.filter(
            project=project, user=acting_user, role=Role.ADMIN
        ).exists()
    ):
        raise PermissionDeniedError(f"this needs the admin role in project {project.name!r}")
    invitation = (
        ProjectInvitation.objects.select_for_update()
        .select_related("project", "invited_user")
        .filter(pk=invitation_id, project=project)
        .first()
    )
    if invitation is None:
        raise NotFoundError(f"no invitation with id {invitation_id} in this project")
    if not invitation.is_open:
        raise ConflictError("this invitation has been answered or withdrawn already")
    invitation.withdrawn_at = timezone.now()
    invitation.save(update_fields=["withdrawn_at"])
    _event(action=AccountAction.INVITE_WITHDRAW, invitation=invitation, actor=acting_user)
    return invitation
