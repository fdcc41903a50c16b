"""What accepting a personal API token means (annotate.api_token_auth reads the header):
the token checks out, is neither revoked nor expired, its owner is active, its use is
recorded, and the request stays within its limits.

A token's limits are enforced here, as part of accepting it. Authentication is the one
step every API view goes through whatever permission classes it names, so a limit checked
here cannot be forgotten by a view, and requests signed in any other way (the annotators'
sessions) pay nothing for it:

- read-only: every unsafe method is refused (403);
- limited to chosen projects: an address naming another project is answered exactly as
  a non-member is answered (404), and so is an address naming an object of another
  project by its own id (OBJECT_PROJECTS). An operation that is neither project-scoped
  nor listed in OUTSIDE_PROJECTS (site accounts, invitations, tokens) is refused (403): a
  new one is closed to limited tokens until someone decides otherwise.
"""

from __future__ import annotations

from django.utils import timezone
from rest_framework import exceptions
from rest_framework.permissions import SAFE_METHODS, BasePermission

from annotate.api_token_selectors import api_token_find, api_token_project_ids, api_token_refusal
from annotate.models import Annotation, ApiToken, Assignment
from annotate.services.api_tokens import api_token_use_record
from config.client_address import client_address

# Objects addressed by their own id outside a project's address: how to find their
# project, and what a caller outside that project is told (the same as a non-member).
OBJECT_PROJECTS = {
    "assignment_id": (Assignment, "item__project_id", "assignment not found"),
    "annotation_id": (Annotation, "assignment__item__project_id", "project not found"),
}
# Operations outside any one project that a limited token may call: its project list
# (which shows only its projects) and the schema.
OUTSIDE_PROJECTS = {("annotate:project-list", "GET"), ("schema", "GET")}
NOT_IN_LIMIT = (
    "this API token is limited to chosen projects, and this operation is not within one of "
    "them; use a token without a project limit"
)


def api_token_accept(request, token: str) -> ApiToken:
    """The token's row, if `request` may go ahead with it; else AuthenticationFailed (401)
    saying why, or the refusal of a limit (403, or 404 as to a non-member)."""
    api_token = api_token_find(token)
    if api_token is None:
        raise exceptions.AuthenticationFailed("unknown API token")
    now = timezone.now()
    refusal = api_token_refusal(api_token, now=now)
    if refusal:
        raise exceptions.AuthenticationFailed(refusal)
    api_token_use_record(api_token=api_token, address=client_address(request), now=now)
    _check_limits(api_token, request)
    return api_token


def _check_limits(api_token: ApiToken, request) -> None:
    if api_token.read_only and request.method not in SAFE_METHODS:
        raise exceptions.PermissionDenied("this token is read-only")
    allowed = api_token_project_ids(api_token)
    if allowed is None:
        return
    match = request.resolver_match
    kwargs = match.kwargs if match else {}
    if "project_id" in kwargs:
        if kwargs["project_id"] not in allowed:
            raise exceptions.NotFound("project not found")
        return
    for key, (model, project_field, not_found) in OBJECT_PROJECTS.items():
        if key in kwargs:
            project_id = (
                model.objects.filter(pk=kwargs[key]).values_list(project_field, flat=True).first()
            )
            if project_id is not None and project_id not in allowed:
                raise exceptions.NotFound(not_found)
            return
    if match is None or (match.view_name, request.method) not in OUTSIDE_PROJECTS:
        raise exceptions.PermissionDenied(NOT_IN_LIMIT)


def api_token_of(request) -> ApiToken | None:
    """The token the request was authenticated with, or None."""
    return request.auth if isinstance(request.auth, ApiToken) else None


def api_token_project_limit(request) -> frozenset[int] | None:
    """The projects the request's token is limited to, or None (no token, or no limit)."""
    api_token = api_token_of(request)
    return api_token_project_ids(api_token) if api_token is not None else None


class NotWithApiToken(BasePermission):
    """Token management takes a session or a password: a token cannot mint tokens, nor
    revoke its siblings, so that a leaked token cannot outlive its own revocation."""

    message = "managing API tokens needs a signed-in session or a password, not an API token"

    def has_permission(self, request, view) -> bool:
        return api_token_of(request) is None
