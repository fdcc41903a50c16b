"""A study link signs in only a crowd worker's own annotator account: never an account
with more than an annotator's role (platform ids are not secret), and never over a
member's or staff's session already open in the browser."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotate.models import ProjectMembership, Role
from crowd.models import CrowdSession
from tests.crowd.conftest import arrive, entry_url, mturk_params
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()


def signed_in_as(client) -> str | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id).username if user_id else None


@pytest.mark.parametrize("role", [Role.RESEARCHER, Role.ADMIN, Role.REVIEWER])
def test_the_entry_refuses_a_crowd_id_whose_account_holds_more_than_annotator(mturk_link, role):
    """Given a crowd account that was given another role behind the services' back (a
    database edit), its worker id no longer signs anyone in."""
    worker = arrive(mturk_link, worker="A1ROLE").worker
    ProjectMembership.objects.create(project=mturk_link.project, user=worker, role=role)
    client = Client()

    response = client.get(entry_url(mturk_link), mturk_params(worker="A1ROLE", assignment="A2"))

    assert response.status_code == 403
    page = response.content.decode()
    assert "more than an annotator" in page
    assert signed_in_as(client) is None
    assert not CrowdSession.objects.filter(platform_session_id="A2").exists()


def test_a_plain_crowd_annotator_still_comes_back(mturk_link):
    arrive(mturk_link, worker="A1BACK")
    client = Client()

    response = client.get(entry_url(mturk_link), mturk_params(worker="A1BACK", assignment="A3"))

    assert response.status_code == 302 and signed_in_as(client) == "mturk.A1BACK"


@pytest.mark.parametrize("who", ["member", "staff", "no_project"])
def test_a_study_link_in_a_signed_in_browser_asks_to_sign_out_first(mturk_link, who):
    user = UserFactory(username=f"signed-{who}", is_staff=who == "staff")
    if who == "member":
        ProjectMembership.objects.create(project=mturk_link.project, user=user, role=Role.ADMIN)
    client = Client()
    client.force_login(user)

    response = client.get(entry_url(mturk_link), mturk_params(worker="A1SIGNED"))

    assert response.status_code == 409
    page = response.content.decode()
    assert 'id="crowd-sign-out-first"' in page
    assert 'action="/accounts/logout/"' in page
    assert f"signed in as {user.username}" in page
    assert signed_in_as(client) == user.username
    assert not User.objects.filter(username="mturk.A1SIGNED").exists()


def test_signing_out_from_that_page_leads_back_to_the_study(mturk_link):
    client = Client()
    client.force_login(UserFactory(username="researcher-here"))
    url = entry_url(mturk_link)
    params = mturk_params(worker="A1AFTER")
    page = client.get(url, params).content.decode()
    study_url = page.split('name="next" value="')[1].split('"')[0].replace("&amp;", "&")

    signed_out = client.post("/accounts/logout/", {"next": study_url})
    entered = client.get(signed_out["Location"])

    assert signed_out.status_code == 302 and signed_out["Location"] == study_url
    assert entered.status_code == 302 and signed_in_as(client) == "mturk.A1AFTER"


def test_a_crowd_worker_signed_in_as_themselves_goes_on(mturk_link):
    client = Client()
    client.get(entry_url(mturk_link), mturk_params(worker="A1SELF", assignment="S1"))

    again = client.get(entry_url(mturk_link), mturk_params(worker="A1SELF", assignment="S2"))

    assert again.status_code == 302 and signed_in_as(client) == "mturk.A1SELF"
