"""Personal API tokens: created and revoked by their owner, kept only as a digest, and on
the API within their limits (read-only, chosen projects, expiry), every use recorded."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.apps import apps
from django.core import serializers
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.api_token_secrets import token_digest, token_prefix
from annotate.models import AccountAction, AccountEvent, ApiToken, ProjectMembership, Role
from annotate.services import assignment_next
from annotate.services.api_tokens import (
    USE_RECORD_INTERVAL,
    api_token_create,
    api_token_revoke,
    api_token_use_record,
)
from config.exceptions import ApplicationError, PermissionDeniedError
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.concurrency import run_at_once
from tests.conftest import client_for
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

TOKENS_URL = "/api/tokens/"


def bearer(token: str, keyword: str = "Bearer") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{keyword} {token}")
    return client


@pytest.fixture
def owner(project):
    user = UserFactory(username="token-owner")
    MembershipFactory(project=project, user=user, role=Role.ADMIN)
    return user


@pytest.fixture
def other_project(owner):
    other = ProjectFactory(name="the other project")
    MembershipFactory(project=other, user=owner, role=Role.ADMIN)
    return other


# ---------------------------------------------------------------- creating and revoking


def test_the_owner_creates_a_token_and_sees_it_once(owner):
    response = client_for(owner).post(TOKENS_URL, {"name": "notebook"})

    assert response.status_code == 201, response.content
    token = response.json()["token"]
    row = response.json()["api_token"]
    assert token.startswith(f"rwt_{row['prefix']}_")
    assert row["state"] == "active" and row["projects"] is None and not row["read_only"]
    listed = client_for(owner).get(TOKENS_URL).json()["results"]
    assert [t["id"] for t in listed] == [row["id"]]
    assert token not in str(listed)


def test_the_secret_is_nowhere_in_the_database(owner, project):
    issued = api_token_create(owner=owner, name="ci", project_ids=[project.pk], read_only=True)
    bearer(issued.token).get(f"/api/projects/{project.pk}/")
    api_token_revoke(owner=owner, token_id=issued.api_token.pk)

    secret = issued.token.split("_", 2)[2]
    every_row = serializers.serialize(
        "json", [row for model in apps.get_models() for row in model.objects.all()]
    )
    assert secret not in every_row
    assert issued.token not in every_row
    assert ApiToken.objects.get().secret_digest == token_digest(issued.token)


def test_creating_and_revoking_are_audited(owner):
    issued = api_token_create(owner=owner, name="nightly", read_only=True)
    response = client_for(owner).post(f"{TOKENS_URL}{issued.api_token.pk}/revoke/")

    assert response.status_code == 200 and response.json()["state"] == "revoked"
    events = list(AccountEvent.objects.filter(subject=owner).order_by("pk"))
    assert [e.action for e in events] == [AccountAction.TOKEN_CREATE, AccountAction.TOKEN_REVOKE]
    assert all(e.actor == owner for e in events)
    assert "'nightly'" in events[0].detail and "read-only" in events[0].detail
    assert issued.token not in events[0].detail + events[1].detail


def test_revoking_twice_conflicts_and_anothers_token_is_not_found(owner):
    issued = api_token_create(owner=owner, name="once")
    client = client_for(owner)
    assert client.post(f"{TOKENS_URL}{issued.api_token.pk}/revoke/").status_code == 200
    assert client.post(f"{TOKENS_URL}{issued.api_token.pk}/revoke/").status_code == 409

    stranger = client_for(UserFactory(username="stranger"))
    mine = api_token_create(owner=owner, name="mine")
    response = stranger.post(f"{TOKENS_URL}{mine.api_token.pk}/revoke/")
    assert response.status_code == 404
    assert stranger.get(TOKENS_URL).json()["results"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "t", "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
        ({"name": "t", "expires_at": "soon"}, "expires_at"),
        ({"name": "t", "read_only": "yes"}, "read_only"),
        ({"name": "t", "projects": ["one"]}, "projects"),
    ],
)
def test_bad_input_is_refused_naming_the_field(owner, body, field):
    response = client_for(owner).post(TOKENS_URL, body, format="json")

    assert response.status_code == 400
    assert field in str(response.json())
    assert not ApiToken.objects.exists()


def test_a_token_is_limited_only_to_projects_of_its_owner(owner, project):
    elsewhere = ProjectFactory(name="not theirs")
    response = client_for(owner).post(
        TOKENS_URL, {"name": "t", "projects": [project.pk, elsewhere.pk]}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["field"] == "projects"
    assert str(elsewhere.pk) in response.json()["detail"]
    assert not ApiToken.objects.exists()


def test_a_study_participants_account_cannot_have_tokens(project):
    participant = UserFactory(username="mturk.A1")
    participant.set_unusable_password()
    participant.save()
    MembershipFactory(project=project, user=participant, role=Role.ANNOTATOR)

    with pytest.raises(PermissionDeniedError):
        api_token_create(owner=participant, name="t")
    client = client_for(participant)
    assert client.post(TOKENS_URL, {"name": "t"}).status_code == 403
    assert client.get(TOKENS_URL).status_code == 403
    assert not ApiToken.objects.exists()


def test_a_token_cannot_mint_or_revoke_tokens(owner):
    issued = api_token_create(owner=owner, name="script")
    sibling = api_token_create(owner=owner, name="sibling")
    client = bearer(issued.token)

    minted = client.post(TOKENS_URL, {"name": "more"})
    revoked = client.post(f"{TOKENS_URL}{sibling.api_token.pk}/revoke/")
    listed = client.get(TOKENS_URL)

    assert minted.status_code == revoked.status_code == listed.status_code == 403
    assert "not an API token" in minted.json()["detail"]
    assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 2


def test_tokens_need_a_signed_in_caller():
    response = APIClient().post(TOKENS_URL, {"name": "t"})
    assert response.status_code == 401


# ---------------------------------------------------------------- using a token


@pytest.mark.parametrize("keyword", ["Bearer", "Token", "bearer"])
def test_a_token_signs_the_api_in_as_its_owner(owner, project, keyword):
    issued = api_token_create(owner=owner, name="t")

    response = bearer(issued.token, keyword).get(f"/api/projects/{project.pk}/")

    assert response.status_code == 200
    assert response.json()["id"] == project.pk


def test_basic_authentication_still_works(owner, project):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Basic dG9rZW4tb3duZXI6cHc=")  # token-owner:pw
    assert client.get(f"/api/projects/{project.pk}/").status_code == 200


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("Bearer rwt_nothere_xyz", "unknown API token"),
        ("Bearer not-a-token", "unknown API token"),
        ("Bearer", "after 'Bearer'"),
        ("Bearer two parts", "after 'Bearer'"),
    ],
)
def test_an_unknown_or_malformed_token_is_401(project, header, message):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)

    response = client.get(f"/api/projects/{project.pk}/")

    assert response.status_code == 401
    assert message in response.json()["detail"]
    assert response.has_header("WWW-Authenticate")


def test_a_wrong_secret_with_a_real_prefix_is_unknown(owner, project):
    issued = api_token_create(owner=owner, name="t")
    forged = f"rwt_{issued.api_token.prefix}_{'A' * 43}"

    response = bearer(forged).get(f"/api/projects/{project.pk}/")

    assert response.status_code == 401
    assert response.json()["detail"] == "unknown API token"


def test_a_revoked_token_is_401_saying_so(owner, project):
    issued = api_token_create(owner=owner, name="t")
    api_token_revoke(owner=owner, token_id=issued.api_token.pk)

    response = bearer(issued.token).get(f"/api/projects/{project.pk}/")

    assert response.status_code == 401
    assert response.json()["detail"] == "this API token was revoked"


def test_an_expired_token_is_401_saying_so(owner, project):
    issued = api_token_create(owner=owner, name="t", expires_at=timezone.now() + timedelta(days=1))
    ApiToken.objects.filter(pk=issued.api_token.pk).update(
        created_at=timezone.now() - timedelta(days=2),
        expires_at=timezone.now() - timedelta(seconds=1),
    )

    response = bearer(issued.token).get(f"/api/projects/{project.pk}/")

    assert response.status_code == 401
    assert "expired" in response.json()["detail"]
    assert client_for(owner).get(TOKENS_URL).json()["results"][0]["state"] == "expired"


def test_the_token_of_a_deactivated_account_is_401(owner, project):
    issued = api_token_create(owner=owner, name="t")
    owner.is_active = False
    owner.save()

    response = bearer(issued.token).get(f"/api/projects/{project.pk}/")

    assert response.status_code == 401
    assert "deactivated" in response.json()["detail"]


def test_a_token_never_exceeds_its_owners_rights(owner, project):
    ProjectMembership.objects.filter(user=owner).update(role=Role.ANNOTATOR)
    issued = api_token_create(owner=owner, name="t")

    response = bearer(issued.token).get(f"/api/projects/{project.pk}/imports/")

    assert response.status_code == 403


# ---------------------------------------------------------------- read-only


def test_a_read_only_token_reads_and_every_unsafe_method_is_403(owner, project):
    issued = api_token_create(owner=owner, name="t", read_only=True)
    client = bearer(issued.token)

    assert client.get(f"/api/projects/{project.pk}/").status_code == 200
    for method in ("post", "put", "patch", "delete"):
        response = getattr(client, method)(f"/api/projects/{project.pk}/policy/", {})
        assert response.status_code == 403, method
        assert response.json()["detail"] == "this token is read-only"
    created = client.post("/api/projects/", {"name": "new"})
    assert created.status_code == 403


# ---------------------------------------------------------------- limited to projects


def test_a_project_outside_the_limit_is_answered_as_to_a_non_member(owner, project, other_project):
    issued = api_token_create(owner=owner, name="t", project_ids=[project.pk])
    client = bearer(issued.token)
    non_member = client_for(UserFactory(username="outsider"))

    assert client.get(f"/api/projects/{project.pk}/").status_code == 200
    for tail in ("", "imports/", "items/", "exports/", "agreement/"):
        limited = client.get(f"/api/projects/{other_project.pk}/{tail}")
        outsider = non_member.get(f"/api/projects/{other_project.pk}/{tail}")
        assert limited.status_code == outsider.status_code == 404, tail
        assert limited.json() == outsider.json(), tail


def test_the_project_list_shows_only_the_allowed_projects(owner, project, other_project):
    limited = api_token_create(owner=owner, name="t", project_ids=[other_project.pk])
    unlimited = api_token_create(owner=owner, name="u")

    def listed(token):
        return {p["id"] for p in bearer(token).get("/api/projects/").json()["results"]}

    assert listed(limited.token) == {other_project.pk}
    assert listed(unlimited.token) == {project.pk, other_project.pk}


def test_a_limited_token_cannot_create_projects_nor_reach_site_operations(owner, project):
    owner.is_staff = True
    owner.save()
    issued = api_token_create(owner=owner, name="t", project_ids=[project.pk])
    client = bearer(issued.token)

    assert client.post("/api/projects/", {"name": "new"}).status_code == 403
    assert client.get("/api/accounts/").status_code == 403
    assert client.get("/api/invitations/").status_code == 403
    assert (
        bearer(api_token_create(owner=owner, name="u").token).get("/api/accounts/").status_code
        == 200
    )


def test_objects_addressed_by_their_own_id_do_not_leak_across_the_limit(db):
    """An annotator's assignment and an annotation to review, each in a project the token
    does not open: the same 404 as anyone who may not see them."""
    here = make_project(items=2, quota=2)
    there = make_project(items=2, quota=2)
    person = UserFactory(username="annotator-and-reviewer")
    for project in (here, there):
        for role in (Role.ANNOTATOR, Role.REVIEWER):
            ProjectMembership.objects.create(project=project, user=person, role=role)
    lease_there = assignment_next(project=there, worker=person)
    colleague = UserFactory(username="colleague")
    ProjectMembership.objects.create(project=there, user=colleague, role=Role.ANNOTATOR)
    annotation_there = submit_first_tokens(
        assignment_next(project=there, worker=colleague), colleague
    ).annotation

    limited = bearer(api_token_create(owner=person, name="t", project_ids=[here.pk]).token)
    unlimited = bearer(api_token_create(owner=person, name="u").token)

    assert unlimited.get(f"/api/assignments/{lease_there.pk}/").status_code == 200
    response = limited.get(f"/api/assignments/{lease_there.pk}/")
    assert response.status_code == 404
    assert response.json()["detail"] == "assignment not found"
    skipped = limited.post(f"/api/assignments/{lease_there.pk}/skip/")
    assert skipped.status_code == 404
    assert unlimited.get(f"/api/annotations/{annotation_there.pk}/review/").status_code == 200
    review = limited.get(f"/api/annotations/{annotation_there.pk}/review/")
    assert review.status_code == 404
    assert review.json()["detail"] == "project not found"


def test_a_limited_token_whose_projects_are_gone_opens_none(owner, project):
    doomed = ProjectFactory(name="doomed")
    MembershipFactory(project=doomed, user=owner, role=Role.ADMIN)
    issued = api_token_create(owner=owner, name="t", project_ids=[doomed.pk])
    doomed.delete()

    client = bearer(issued.token)

    assert client.get("/api/projects/").json()["results"] == []
    assert client.get(f"/api/projects/{project.pk}/").status_code == 404


# ---------------------------------------------------------------- every use recorded


def test_a_use_is_recorded_with_its_address_at_most_once_a_minute(owner, project):
    issued = api_token_create(owner=owner, name="t")
    client = bearer(issued.token)

    client.get(f"/api/projects/{project.pk}/", REMOTE_ADDR="203.0.113.7")
    first = ApiToken.objects.get()
    assert first.last_used_at is not None
    assert first.last_used_from == "203.0.113.7"

    with CaptureQueriesContext(connection) as queries:
        client.get(f"/api/projects/{project.pk}/", REMOTE_ADDR="203.0.113.8")
    assert not [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert ApiToken.objects.get().last_used_from == "203.0.113.7"

    ApiToken.objects.update(last_used_at=first.last_used_at - USE_RECORD_INTERVAL)
    client.get(f"/api/projects/{project.pk}/", REMOTE_ADDR="203.0.113.8")
    later = ApiToken.objects.get()
    assert later.last_used_at > first.last_used_at
    assert later.last_used_from == "203.0.113.8"


def test_an_address_that_is_not_one_is_recorded_as_none(owner):
    issued = api_token_create(owner=owner, name="t")
    assert api_token_use_record(api_token=issued.api_token, address="", now=timezone.now())
    assert ApiToken.objects.get().last_used_from is None


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_concurrent_uses_writes_the_last_use_once(postgres_only):
    owner = UserFactory(username="bursty")
    issued = api_token_create(owner=owner, name="t")
    now = timezone.now()
    written = []

    def use():
        row = ApiToken.objects.get(pk=issued.api_token.pk)
        written.append(api_token_use_record(api_token=row, address="192.0.2.1", now=now))

    errors = run_at_once(use, [()] * 8)

    assert errors == []
    assert sorted(written) == [False] * 7 + [True]


# ---------------------------------------------------------------- the token's parts


def test_token_parts_are_random_and_the_prefix_finds_the_row(owner):
    first = api_token_create(owner=owner, name="a")
    second = api_token_create(owner=owner, name="b")

    assert first.token != second.token
    assert token_prefix(first.token) == first.api_token.prefix
    assert len(first.token.split("_", 2)[2]) >= 43  # 256 bits in URL-safe base64
    assert token_prefix("rwt__x") is None and token_prefix("abc_def_ghi") is None


def test_the_service_refuses_an_expiry_in_the_past(owner):
    with pytest.raises(ApplicationError, match="expires_at"):
        api_token_create(owner=owner, name="t", expires_at=timezone.now())


# ---------------------------------------------------------------- the command line


def test_the_command_prints_a_working_token_audited_as_made_by_nobody(owner, project):
    out = io.StringIO()

    call_command(
        "create_api_token",
        owner.username,
        "--name",
        "ci",
        "--read-only",
        "--projects",
        str(project.pk),
        "--expires-in-days",
        "7",
        stdout=out,
    )

    token = out.getvalue().strip()
    row = ApiToken.objects.get()
    assert row.read_only and row.limited_to_projects and row.expires_at is not None
    assert bearer(token).get(f"/api/projects/{project.pk}/").status_code == 200
    event = AccountEvent.objects.get(action=AccountAction.TOKEN_CREATE)
    assert event.subject == owner and event.actor is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["nobody"], "no active user"),
        (["token-owner", "--expires-in-days", "0"], "--expires-in-days"),
        (["token-owner", "--projects", "999999"], "not a member"),
    ],
)
def test_the_command_refuses_with_a_reason(owner, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("create_api_token", *arguments, stdout=io.StringIO())
    assert not ApiToken.objects.exists()


def test_a_signed_in_browser_never_reaches_the_token_authentication(owner, project, monkeypatch):
    """The annotators' hot path pays nothing for tokens: the session is accepted first."""
    from annotate.api_token_auth import ApiTokenAuthentication

    def never(self, request):
        raise AssertionError("a session request reached the token authentication")

    monkeypatch.setattr(ApiTokenAuthentication, "authenticate", never)
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(owner)

    with CaptureQueriesContext(connection) as queries:
        response = browser.get(f"/api/projects/{project.pk}/")

    assert response.status_code == 200
    assert not [q for q in queries.captured_queries if "apitoken" in q["sql"]]
