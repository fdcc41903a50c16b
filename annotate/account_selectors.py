"""Reads for account management: a project's members, every account (site staff), what
the caller may do to each, and the accounts' audit trail."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from annotate.account_rules import (
    AccountOperation,
    Actor,
    Subject,
    account_refusal,
    membership_change_refusal,
)
from annotate.models import (
    AccountAction,
    AccountEvent,
    PasswordChangeRequired,
    Project,
    ProjectInvitation,
    ProjectMembership,
    Role,
)
from annotate.platform_accounts import (  # noqa: F401 - crowd registers through here
    platform_account_check_register,
    platform_accounts,
)
from config.exceptions import NotFoundError


def project_member_accounts(*, project: Project) -> QuerySet:
    """The project's members, each once, by user name."""
    members = ProjectMembership.objects.filter(project=project).values("user")
    return get_user_model().objects.filter(pk__in=members).order_by("username")


def account_list(
    *, search: str = "", active: bool | None = None, staff: bool | None = None
) -> QuerySet:
    """Every account, for site staff: by user name, optionally narrowed."""
    users = get_user_model().objects.all()
    if search:
        users = users.filter(Q(username__icontains=search) | Q(email__icontains=search))
    if active is not None:
        users = users.filter(is_active=active)
    if staff is not None:
        users = users.filter(is_staff=staff)
    return users.order_by("username")


def account_get(*, user_id: int, project: Project | None = None):
    """The account, if it exists and (with `project`) is one of its members; a user outside
    the project is not found, so that a project admin learns nothing of other accounts."""
    users = get_user_model().objects.filter(pk=user_id)
    if project is not None:
        users = users.filter(project_memberships__project=project)
    user = users.distinct().first()
    if user is None:
        raise NotFoundError(
            f"no member with id {user_id} in this project"
            if project
            else f"no user with id {user_id}"
        )
    return user


def account_actor(user) -> Actor:
    admin_of = ProjectMembership.objects.filter(user=user, role=Role.ADMIN).values_list(
        "project_id", flat=True
    )
    return Actor(
        user_id=user.pk,
        is_staff=user.is_staff,
        is_superuser=user.is_superuser,
        admin_project_ids=frozenset(admin_of),
    )


def account_subjects(users: Iterable) -> dict[int, Subject]:
    """The facts the rules read about each account, in two queries whatever their number."""
    users = list(users)
    ids = [user.pk for user in users]
    projects: dict[int, set[int]] = defaultdict(set)
    roles: dict[int, set[str]] = defaultdict(set)
    for user_id, project_id, role in ProjectMembership.objects.filter(user_id__in=ids).values_list(
        "user_id", "project_id", "role"
    ):
        projects[user_id].add(project_id)
        roles[user_id].add(role)
    on_platform = platform_accounts(ids)
    return {
        user.pk: Subject(
            user_id=user.pk,
            is_staff=user.is_staff,
            is_superuser=user.is_superuser,
            is_active=user.is_active,
            project_ids=frozenset(projects[user.pk]),
            roles=frozenset(roles[user.pk]),
            signs_in_through_platform=user.pk in on_platform,
        )
        for user in users
    }


def account_sign_in_kind(user, *, on_platform: bool, change_due: bool) -> str:
    """How the account signs in: "password", "change_due" (a one-time password to replace),
    "link" (waiting for its owner to choose a password from a link) or "platform"."""
    if on_platform:
        return "platform"
    if change_due:
        return "change_due"
    return "password" if user.has_usable_password() else "link"


def account_project_roles(*, project: Project, users: Iterable) -> dict[int, list[str]]:
    roles: dict[int, list[str]] = defaultdict(list)
    for user_id, role in (
        ProjectMembership.objects.filter(project=project, user__in=[u.pk for u in users])
        .order_by("role")
        .values_list("user_id", "role")
    ):
        roles[user_id].append(role)
    return roles


def account_event_list(*, project: Project | None = None) -> QuerySet[AccountEvent]:
    """The accounts' audit trail, newest first: one project's, or (None) the whole site's."""
    events = AccountEvent.objects.select_related("actor", "subject", "project")
    if project is not None:
        events = events.filter(project=project)
    return events


def account_password_change_due(*, user) -> bool:
    return PasswordChangeRequired.objects.filter(user=user).exists()


def account_link_project(*, user) -> Project | None:
    """The project whose admin last gave the account a link or a password (None: staff did,
    from the users page, or nobody)."""
    event = (
        AccountEvent.objects.filter(
            subject=user,
            action__in=(AccountAction.ACCOUNT_CREATE, AccountAction.PASSWORD_RESET),
        )
        .select_related("project")
        .first()
    )
    return event.project if event else None


def account_rows(*, acting_user, users: Iterable, project: Project | None = None) -> list[dict]:
    """The accounts as the pages list them (AccountOutputSerializer), with what the caller
    may do to each and, for a project, each one's roles in it: four queries a page."""
    users = list(users)
    subjects = account_subjects(users)
    actor = account_actor(acting_user)
    roles = account_project_roles(project=project, users=users) if project is not None else {}
    change_due = set(
        PasswordChangeRequired.objects.filter(user__in=[user.pk for user in users]).values_list(
            "user_id", flat=True
        )
    )
    rows = []
    for user in users:
        subject = subjects[user.pk]
        row = {
            "id": user.pk,
            "username": user.get_username(),
            "email": user.email,
            "is_active": user.is_active,
            "is_staff": user.is_staff,
            "is_superuser": user.is_superuser,
            "last_login": user.last_login,
            "date_joined": user.date_joined,
            "sign_in": account_sign_in_kind(
                user,
                on_platform=subject.signs_in_through_platform,
                change_due=user.pk in change_due,
            ),
            "refusals": {
                operation.value: account_refusal(actor=actor, subject=subject, operation=operation)
                for operation in AccountOperation
            },
        }
        if project is not None:
            row["roles"] = roles.get(user.pk, [])
            row["refusals"]["membership"] = membership_change_refusal(
                actor=actor, subject=subject, subject_project_roles=frozenset(row["roles"])
            )
        rows.append(row)
    return rows


def account_project_choices() -> QuerySet:
    """Every project by name, for site staff to put a new account in."""
    return Project.objects.order_by("name").values("id", "name")


def invitation_list_open_for_user(*, user) -> QuerySet[ProjectInvitation]:
    """The invitations `user` has not answered yet, newest first."""
    return ProjectInvitation.objects.filter(
        invited_user=user, answered_at__isnull=True, withdrawn_at__isnull=True
    ).select_related("project", "invited_by")


def invitation_list_open_for_project(*, project: Project) -> QuerySet[ProjectInvitation]:
    """The project's invitations waiting for an answer, newest first."""
    return ProjectInvitation.objects.filter(
        project=project, answered_at__isnull=True, withdrawn_at__isnull=True
    ).select_related("invited_user", "invited_by")
