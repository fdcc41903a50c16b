"""The signed-in user's personal API tokens (annotate.services.api_tokens): a form to
create one, shown once in the answer to that form, and the list with a revoke button.

The new token is rendered into the response to the form's POST, never stored to be shown
after a redirect: the session is kept in the database, where the token must never be.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import timedelta

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from annotate import selectors
from annotate.api_token_selectors import api_token_list, api_token_owner_refusal, api_token_state
from annotate.models import ApiToken
from annotate.services import api_tokens as api_token_services
from config.exceptions import ApplicationError, ConflictError

EXPIRY_CHOICES = [
    ("7", _("in 7 days")),
    ("30", _("in 30 days")),
    ("90", _("in 90 days")),
    ("365", _("in a year")),
    ("", _("never")),
]


class ApiTokenCreateForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=ApiToken._meta.get_field("name").max_length,
        help_text=_("What the token is for, such as the notebook or job that uses it."),
    )
    expires_in_days = forms.TypedChoiceField(
        label=_("Expires"), choices=EXPIRY_CHOICES, coerce=int, empty_value=None, initial="90"
    )
    read_only = forms.BooleanField(
        label=_("Read-only: it may read, never change anything"), required=False
    )
    projects = forms.TypedMultipleChoiceField(
        label=_("Only these projects"),
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("none ticked: every project you belong to"),
    )

    def __init__(self, *args, owner, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["projects"].choices = [
            (project.pk, project.name) for project in selectors.project_list_for_user(user=owner)
        ]


def _refuse_study_participants(user) -> None:
    if api_token_owner_refusal(user):
        raise PermissionDenied


def _rows(owner) -> list[dict]:
    now = timezone.now()
    return [
        {"token": api_token, "state": api_token_state(api_token, now=now)}
        for api_token in api_token_list(owner=owner)
    ]


@login_required
def api_tokens_page(request):
    _refuse_study_participants(request.user)
    form = ApiTokenCreateForm(request.POST or None, owner=request.user)
    issued = None
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data["expires_in_days"]
        try:
            issued = api_token_services.api_token_create(
                owner=request.user,
                name=form.cleaned_data["name"],
                expires_at=timezone.now() + timedelta(days=days) if days else None,
                read_only=form.cleaned_data["read_only"],
                project_ids=form.cleaned_data["projects"] or None,
            )
        except ApplicationError as error:
            field = error.extra.get("field")
            form.add_error(field if field in form.fields else None, error.message)
        else:
            form = ApiTokenCreateForm(owner=request.user)
    response = render(
        request,
        "frontend/api_tokens.html",
        {
            "form": form,
            "issued": issued,
            "rows": _rows(request.user),
            "api_base": request.build_absolute_uri("/api/"),
        },
        status=400 if request.method == "POST" and issued is None else 200,
    )
    if issued is not None:
        response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def api_token_revoke(request, token_id: int):
    _refuse_study_participants(request.user)
    # Revoked already (a second click, another tab): the list says so.
    with suppress(ConflictError):
        api_token_services.api_token_revoke(owner=request.user, token_id=token_id)
    return redirect("api-tokens")
