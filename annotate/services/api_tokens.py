"""Personal API tokens: their owner creates and revokes them (each an AccountEvent in the
same transaction), and every use of one is recorded on it. What a token is made of, and
why it is kept as a SHA-256 digest, is annotate.api_token_secrets."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotate.api_token_secrets import token_digest, token_generate
from annotate.api_token_selectors import api_token_get, api_token_owner_refusal
from annotate.models import AccountAction, AccountEvent, ApiToken, Project, ProjectMembership
from config.exceptions import ApplicationError, ConflictError, PermissionDeniedError

# A script's burst of requests writes the token's last use once, not once a request.
USE_RECORD_INTERVAL = timedelta(minutes=1)
NAME_MAX_CHARS = ApiToken._meta.get_field("name").max_length


@dataclass(frozen=True)
class ApiTokenIssued:
    """The new token's row and the token itself, which is shown once and never stored."""

    api_token: ApiToken
    token: str


def _projects_of(owner, project_ids: list[int]) -> list[Project]:
    """The projects a token may be limited to: those its owner belongs to (any, for a
    superuser), so that the limit never reads as a grant."""
    projects = Project.objects.filter(pk__in=project_ids)
    if not owner.is_superuser:
        member_of = ProjectMembership.objects.filter(user=owner).values("project_id")
        projects = projects.filter(pk__in=member_of)
    found = list(projects)
    missing = sorted(set(project_ids) - {project.pk for project in found})
    if missing:
        raise ApplicationError(
            f"projects: you are not a member of project {', '.join(map(str, missing))}",
            extra={"field": "projects"},
        )
    return found


@transaction.atomic
def api_token_create(
    *,
    owner,
    name: str,
    expires_at: datetime | None = None,
    read_only: bool = False,
    project_ids: list[int] | None = None,
    by_owner: bool = True,
) -> ApiTokenIssued:
    """A new token of `owner`'s. `project_ids` None: every project the owner belongs to;
    a list: only those of them. `by_owner` False: made on the server's command line
    (create_api_token), which the audit trail shows as made by nobody signed in."""
    refusal = api_token_owner_refusal(owner)
    if refusal:
        raise PermissionDeniedError(refusal)
    name = name.strip()
    if not name:
        raise ApplicationError("name: give the token a name", extra={"field": "name"})
    if len(name) > NAME_MAX_CHARS:
        raise ApplicationError(
            f"name: at most {NAME_MAX_CHARS} characters", extra={"field": "name"}
        )
    if expires_at is not None and expires_at <= timezone.now():
        raise ApplicationError(
            "expires_at: the expiry must be in the future", extra={"field": "expires_at"}
        )
    projects = _projects_of(owner, project_ids) if project_ids is not None else []
    parts = token_generate()
    api_token = ApiToken.objects.create(
        owner=owner,
        name=name,
        prefix=parts.prefix,
        secret_digest=token_digest(parts.token),
        expires_at=expires_at,
        read_only=read_only,
        limited_to_projects=project_ids is not None,
    )
    api_token.projects.set(projects)
    AccountEvent.objects.create(
        actor=owner if by_owner else None,
        subject=owner,
        action=AccountAction.TOKEN_CREATE,
        detail=_event_detail(api_token, projects),
    )
    return ApiTokenIssued(api_token=api_token, token=parts.token)


def _event_detail(api_token: ApiToken, projects: list[Project]) -> str:
    limits = []
    if api_token.read_only:
        limits.append("read-only")
    if api_token.limited_to_projects:
        limits.append("projects " + ",".join(str(p.pk) for p in projects) if projects else "none")
    if api_token.expires_at is not None:
        limits.append(f"expires {api_token.expires_at:%Y-%m-%d %H:%M}")
    detail = f"{api_token.name!r} ({api_token.prefix})"
    if limits:
        detail += ": " + "; ".join(limits)
    return detail[: AccountEvent._meta.get_field("detail").max_length]


@transaction.atomic
def api_token_revoke(*, owner, token_id: int) -> ApiToken:
    """The token stops working at once; its row stays, so its owner sees what it was."""
    api_token = api_token_get(owner=owner, token_id=token_id)
    api_token = ApiToken.objects.select_for_update().get(pk=api_token.pk)
    if api_token.revoked_at is not None:
        raise ConflictError("this API token is revoked already")
    api_token.revoked_at = timezone.now()
    api_token.save(update_fields=["revoked_at"])
    AccountEvent.objects.create(
        actor=owner,
        subject=owner,
        action=AccountAction.TOKEN_REVOKE,
        detail=f"{api_token.name!r} ({api_token.prefix})"[:200],
    )
    return api_token


def _address_or_none(address: str) -> str | None:
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def api_token_use_record(*, api_token: ApiToken, address: str, now: datetime) -> bool:
    """Record that the token was used now, from `address`, unless that was recorded less
    than USE_RECORD_INTERVAL ago. The row as the request read it answers most calls with
    no query; the UPDATE's own condition keeps concurrent requests to one write. Returns
    whether this call wrote."""
    last = api_token.last_used_at
    if last is not None and now - last < USE_RECORD_INTERVAL:
        return False
    due = Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - USE_RECORD_INTERVAL)
    written = (
        ApiToken.objects.filter(due, pk=api_token.pk).update(
            last_used_at=now, last_used_from=_address_or_none(address)
        )
        > 0
    )
    if written:
        api_token.last_used_at = now
    return written
