"""What surrounds a participant's work: a platform account has no password, so the page
chrome offers neither the password page nor the API, and the password page refuses it;
the page MTurk's frame shows names the platform's task in every language."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotate.models import ApiToken, ProjectMembership, Role
from tests.crowd.conftest import entry_url, make_link, mturk_params, prolific_params
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _participant_at_work(link) -> tuple[Client, str]:
    client = Client()
    arrived = client.get(entry_url(link), prolific_params())
    working = client.post(arrived["Location"], {"answer": "agree"})
    page = client.get(working["Location"])
    assert page.status_code == 200
    return client, page.content.decode()


def test_a_participant_sees_no_password_or_api_links(study, prolific_link):
    project, _admin = study
    client, work_page = _participant_at_work(prolific_link)
    workspace_page = client.get(reverse("workspace", args=[project.pk])).content.decode()
    for page in (work_page, workspace_page):
        assert 'id="password-link"' not in page
        assert reverse("password-change") not in page
        assert reverse("api-docs") not in page
        assert reverse("api-tokens") not in page


def test_a_participant_can_have_no_api_token(study, prolific_link):
    client, _page = _participant_at_work(prolific_link)

    assert client.get(reverse("api-tokens")).status_code == 403
    assert (
        client.post(reverse("api-tokens"), {"name": "t", "expires_in_days": "7"}).status_code == 403
    )
    refused = client.post("/api/tokens/", {"name": "t"}, content_type="application/json")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "a study participant's account cannot have API tokens"
    assert not ApiToken.objects.exists()


def test_the_password_page_refuses_a_participant(study, prolific_link):
    client, _page = _participant_at_work(prolific_link)
    assert client.get(reverse("password-change")).status_code == 403
    response = client.post(
        reverse("password-change"),
        {
            "old_password": "",
            "new_password1": "S0me-long-pass!",
            "new_password2": "S0me-long-pass!",
        },
    )
    assert response.status_code == 403
    user = prolific_link.sessions.get().worker
    user.refresh_from_db()
    assert not user.has_usable_password()


def test_members_with_a_password_keep_both_links(study):
    project, _admin = study
    annotator = UserFactory()
    ProjectMembership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    client = Client()
    client.force_login(annotator)
    page = client.get(reverse("workspace", args=[project.pk])).content.decode()
    assert 'id="password-link"' in page and reverse("api-docs") in page
    assert client.get(reverse("password-change")).status_code == 200


SUBMITTED = {
    ("en", "mturk"): "When you have finished it there, the HIT is submitted for you.",
    ("en", "prolific"): "When you have finished it there, you are taken back to Prolific.",
    ("en", "other"): "When you have finished it there, you are taken back to the platform.",
    ("zh-hans", "mturk"): "你在那里完成后，HIT 会自动为你提交。",
    ("zh-hans", "prolific"): "你在那里完成后，会带你返回 Prolific。",
    ("zh-hans", "other"): "你在那里完成后，会带你返回 平台。",
}


@pytest.mark.parametrize(("language", "platform"), sorted(SUBMITTED))
def test_the_framed_page_names_the_platforms_task(study, language, platform):
    project, admin = study
    link = make_link(project, admin, platform)
    params = {
        "mturk": mturk_params(),
        "prolific": prolific_params(),
        "other": {"pid": "W1"},
    }[platform]
    with translation.override(language):
        response = Client().get(
            entry_url(link),
            params,
            HTTP_SEC_FETCH_DEST="iframe",
            HTTP_ACCEPT_LANGUAGE=language,
        )
    assert response.status_code == 200
    text = re.sub(r"\s+", " ", unescape(response.content.decode()))
    assert SUBMITTED[(language, platform)] in text
    assert "the  is" not in text and "， 会" not in text and "to ." not in text
