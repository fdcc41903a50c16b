"""Reads for personal API tokens: an owner's tokens, the token a request carries, and
whether an account may hold tokens at all."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from annotate.api_token_secrets import token_matches, token_prefix
from annotate.models import ApiToken
from annotate.platform_accounts import platform_accounts
from config.exceptions import NotFoundError


def api_token_owner_refusal(user) -> str | None:
    """Why `user` may not hold API tokens, or None. A study participant's account has no
    password (their platform's ids sign them in) and is meant for one study's work pages;
    a token would open the API to it from anywhere, for as long as the token lives."""
    if platform_accounts([user.pk]):
        return "a study participant's account cannot have API tokens"
    if not user.has_usable_password():
        # A participant's account, or one whose owner has yet to choose a password from
        # an invitation or reset link.
        return "an account without a password cannot have API tokens; choose a password first"
    return None


def api_token_list(*, owner) -> QuerySet[ApiToken]:
    """The owner's tokens, revoked ones included, newest first."""
    return ApiToken.objects.filter(owner=owner).prefetch_related("projects")


def api_token_get(*, owner, token_id: int) -> ApiToken:
    """The owner's token; anyone else's is not found."""
    token = ApiToken.objects.filter(owner=owner, pk=token_id).first()
    if token is None:
        raise NotFoundError("API token not found")
    return token


def api_token_find(token: str) -> ApiToken | None:
    """The token row whose secret `token` is (with its owner), or None: one indexed query
    by the prefix, then the digests compared in constant time."""
    prefix = token_prefix(token)
    if prefix is None:
        return None
    found = ApiToken.objects.select_related("owner").filter(prefix=prefix).first()
    if found is None or not token_matches(token, found.secret_digest):
        return None
    return found


def api_token_refusal(token: ApiToken, *, now: datetime) -> str | None:
    """Why a token that checks out is not accepted now, or None."""
    if token.revoked_at is not None:
        return "this API token was revoked"
    if token.expires_at is not None and token.expires_at <= now:
        return f"this API token expired at {token.expires_at.isoformat()}"
    if not token.owner.is_active:
        return "the account this API token belongs to is deactivated"
    return None


def api_token_state(api_token: ApiToken, *, now: datetime) -> str:
    """ "revoked", "expired" or "active", as the owner's page and the API show it."""
    if api_token.revoked_at is not None:
        return "revoked"
    if api_token.expires_at is not None and api_token.expires_at <= now:
        return "expired"
    return "active"


def api_token_project_ids(token: ApiToken) -> frozenset[int] | None:
    """The projects a limited token opens, or None for a token limited to none."""
    if not token.limited_to_projects:
        return None
    return frozenset(token.projects.values_list("pk", flat=True))
