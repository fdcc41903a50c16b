"""In Chromium: a user opens API tokens from the account menu, creates a read-only token
limited to one project, sees it once, uses it on the API, and revokes it; a study
participant sees no link. Screenshots go to test-artifacts/screenshots/."""

from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.test import APIClient

from annotate.models import AccountAction, AccountEvent, ApiToken, Role
from tests.e2e.conftest import login
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"api-tokens-{name}.png"), full_page=True)


def _api(token: str, path: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.get(path)


def test_a_token_is_created_shown_once_used_and_revoked(live_server, page):
    owner = UserFactory(username="scripter")
    chosen = MembershipFactory(
        user=owner, role=Role.ADMIN, project=ProjectFactory(name="Chosen <b>study</b>")
    ).project
    other = MembershipFactory(
        user=owner, role=Role.ADMIN, project=ProjectFactory(name="Other study")
    ).project
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    login(page, live_server.url, "scripter")

    page.click("#api-tokens-link")
    page.wait_for_selector("#token-none")
    _shot(page, "empty")
    page.fill("input[name=name]", "nightly <job>")
    page.select_option("select[name=expires_in_days]", "30")
    page.check("input[name=read_only]")
    page.get_by_label("Chosen <b>study</b>").check()
    page.click("#token-create button[type=submit]")

    secret = page.input_value("#token-secret")
    assert secret.startswith("rwt_")
    assert page.locator("#token-list tbody tr").count() == 1
    row = page.locator("#token-list tbody tr").first
    assert "nightly <job>" in row.inner_text()
    assert "Chosen <b>study</b>" in row.inner_text()  # a project's name is text, not markup
    assert "read-only" in row.inner_text()
    _shot(page, "created")

    assert _api(secret, f"/api/projects/{chosen.pk}/").status_code == 200
    assert _api(secret, f"/api/projects/{other.pk}/").status_code == 404

    page.goto(f"{live_server.url}/accounts/tokens/")
    assert page.locator("#token-secret").count() == 0  # shown once, never again
    assert secret not in page.content()
    assert "127.0.0.1" in page.locator("#token-list tbody tr").first.inner_text()  # last use

    questions = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    page.click("#token-list button.danger")
    page.wait_for_selector("#token-list tr.token-revoked")
    _shot(page, "revoked")
    assert "nightly <job>" in questions[0]

    assert _api(secret, f"/api/projects/{chosen.pk}/").status_code == 401
    assert ApiToken.objects.get().revoked_at is not None
    assert list(AccountEvent.objects.filter(subject=owner).values_list("action", flat=True)) == [
        AccountAction.TOKEN_REVOKE,
        AccountAction.TOKEN_CREATE,
    ]
    assert problems == []


def test_a_form_error_names_the_field_and_keeps_what_was_typed(live_server, page):
    UserFactory(username="hasty")
    login(page, live_server.url, "hasty")
    page.goto(f"{live_server.url}/accounts/tokens/")

    page.select_option("select[name=expires_in_days]", "7")
    page.click("#token-create button[type=submit]")

    assert page.locator(".field-error").first.is_visible()
    assert page.input_value("select[name=expires_in_days]") == "7"
    assert not ApiToken.objects.exists()


def test_a_study_participant_has_no_link_and_no_page(live_server, page):
    participant = UserFactory(username="prolific.P1")
    participant.set_unusable_password()
    participant.save()
    signed_in = Client()
    signed_in.force_login(participant)  # as the study link signs a participant in
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": signed_in.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )

    page.goto(f"{live_server.url}/")
    assert page.locator("#api-tokens-link").count() == 0
    response = page.goto(f"{live_server.url}/accounts/tokens/")
    assert response.status == 403
