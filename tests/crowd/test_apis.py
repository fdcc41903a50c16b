"""Every crowd endpoint against every role (anonymous, outsider, annotator, researcher,
admin), another project's link, the worker's own session only, and bad input."""

import pytest
from django.urls import reverse

from annotate.models import ProjectMembership
from crowd.models import CrowdEvent, StudyLink
from crowd.platforms import completion_token
from crowd.services import crowd_session_finish
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.crowd.conftest import CONSENT, arrive_and_consent, make_link, work_items
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
ROLES = ("outsider", "annotator", "researcher", "admin")


@pytest.fixture
def people(study):
    project, admin = study
    users = {"admin": admin, "outsider": UserFactory(username="nobody")}
    for role in ("annotator", "researcher"):
        users[role] = UserFactory(username=f"{role}-x")
        ProjectMembership.objects.create(project=project, user=users[role], role=role)
    return users


def endpoints(project, link):
    one = lambda name: reverse(f"crowd:{name}", args=[project.id, link.id])  # noqa: E731
    admin = {"admin"}
    return [
        ("get", reverse("crowd:link-list", args=[project.id]), None, admin),
        (
            "post",
            reverse("crowd:link-list", args=[project.id]),
            {"name": "n", "platform": "mturk", "consent_text": "c", "items_required": 2},
            admin,
        ),
        ("get", one("link-detail"), None, admin),
        ("patch", one("link-detail"), {"active": False}, admin),
        ("get", one("link-external-question"), None, admin),
        ("get", one("link-sessions"), None, admin),
        ("get", one("link-bonuses"), None, admin),
        ("post", one("link-verify"), {"worker_id": "A1", "token": "ab"}, admin),
        ("get", reverse("crowd:earnings", args=[project.id]), None, admin),
        ("get", reverse("crowd:pay-report", args=[project.id]), None, {"admin", "researcher"}),
    ]


def test_every_admin_endpoint_checks_the_role(study, people, mturk_link):
    project, _ = study
    checked = 0
    for method, url, body, allowed in endpoints(project, mturk_link):
        for role in ROLES:
            response = getattr(client_for(people[role]), method)(url, body, format="json")
            where = f"{method.upper()} {url} as {role}: {response.status_code}"
            if role in allowed:
                assert response.status_code in (200, 201), where
            elif role == "outsider":
                assert response.status_code == 404, where
            else:
                assert response.status_code == 403, where
            checked += 1
    assert checked == 10 * len(ROLES)


def test_anonymous_requests_are_refused(study, mturk_link, api_client):
    for method, url, body, _ in endpoints(study[0], mturk_link):
        response = getattr(api_client, method)(url, body, format="json")
        assert response.status_code == 401, url


def test_a_link_of_another_project_is_not_found(study, people, mturk_link):
    project, _ = study
    elsewhere = make_project(items=1)
    foreign = make_link(elsewhere, people["admin"], "mturk")
    admin = client_for(people["admin"])
    for _, url, body, _ in endpoints(project, foreign):
        if f"/links/{foreign.id}/" not in url:
            continue
        method = "post" if url.endswith("/verify/") else "get"
        assert getattr(admin, method)(url, body, format="json").status_code == 404, url
    response = admin.patch(
        reverse("crowd:link-detail", args=[project.id, foreign.id]),
        {"active": False},
        format="json",
    )
    assert response.status_code == 404
    foreign.refresh_from_db()
    assert foreign.active


def test_creating_a_link_through_the_api(study, people):
    project, _ = study
    variant = project.variants.get(name="plain")
    response = client_for(people["admin"]).post(
        reverse("crowd:link-list", args=[project.id]),
        {
            "name": "Prolific main",
            "platform": "prolific",
            "variant": variant.pk,
            "consent_text": CONSENT,
            "items_required": 10,
            "completion_code": "ABC123",
            "currency": "GBP",
            "reward_per_session": "1.50",
            "bonus_per_accepted": "0.05",
        },
        format="json",
    )
    assert response.status_code == 201, response.data
    data = response.data
    assert data["variant"] == {"id": variant.pk, "name": "plain", "version": 1}
    assert data["reward_per_session"] == "1.50"
    key = StudyLink.objects.get().key
    assert data["entry_url"] == f"http://testserver/crowd/s/{key}/"
    assert data["platform_url"] == (
        f"http://testserver/crowd/s/{key}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert data["sessions"]["completed"] == 0
    assert CrowdEvent.objects.get(kind="link_created").actor == people["admin"]


VALID = {"name": "x", "platform": "mturk", "consent_text": "c", "items_required": 2}
OMIT = object()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": OMIT}, "name"),
        ({"platform": "upwork"}, "platform"),
        ({"items_required": 0}, "items_required"),
        ({"items_required": "many"}, "items_required"),
        ({"consent_text": OMIT}, "consent_text"),
        ({"consent_text": "x" * 20001}, "consent_text"),
        ({"reward_per_session": "-0.10"}, "reward_per_session"),
        ({"reward_per_item": "0.001"}, "reward_per_item"),
        ({"reward_per_item": "abc"}, "reward_per_item"),
        ({"variant": 999999}, "variant"),
        ({"currency": "EUR"}, "currency"),
        ({"platform": "other", "id_parameter": "pid"}, "completion_url_template"),
        ({"platform": "prolific"}, "completion_code"),
        ({"frame_height": -1}, "frame_height"),
    ],
)
def test_bad_link_input_names_the_field(study, people, changes, field):
    project, _ = study
    body = {k: v for k, v in {**VALID, **changes}.items() if v is not OMIT}
    response = client_for(people["admin"]).post(
        reverse("crowd:link-list", args=[project.id]), body, format="json"
    )
    assert response.status_code == 400, response.data
    assert field in str(response.data), response.data
    assert not StudyLink.objects.exists()


def test_bad_updates_are_refused(study, people, mturk_link):
    project, _ = study
    url = reverse("crowd:link-detail", args=[project.id, mturk_link.id])
    admin = client_for(people["admin"])
    assert admin.patch(url, {"items_required": -3}, format="json").status_code == 400
    assert admin.patch(url, {"currency": "GBP"}, format="json").status_code == 400
    other = make_link(project, people["admin"], "mturk", name="second")
    response = admin.patch(url, {"name": other.name}, format="json")
    assert response.status_code == 400 and "already has" in response.data["detail"]


def test_the_external_question_download(study, people, mturk_link, prolific_link):
    project, _ = study
    admin = client_for(people["admin"])
    response = admin.get(reverse("crowd:link-external-question", args=[project.id, mturk_link.id]))
    assert response["Content-Type"].startswith("application/xml")
    assert "attachment" in response["Content-Disposition"]
    body = response.content.decode()
    assert f"<ExternalURL>http://testserver/crowd/s/{mturk_link.key}/</ExternalURL>" in body
    assert "<FrameHeight>800</FrameHeight>" in body
    not_mturk = admin.get(
        reverse("crowd:link-external-question", args=[project.id, prolific_link.id])
    )
    assert not_mturk.status_code == 400


def test_the_public_base_url_setting_names_the_entry(study, people, mturk_link, settings):
    settings.CROWD_PUBLIC_BASE_URL = "https://study.example.org/"
    project, _ = study
    data = (
        client_for(people["admin"])
        .get(reverse("crowd:link-detail", args=[project.id, mturk_link.id]))
        .data
    )
    assert data["platform_url"] == f"https://study.example.org/crowd/s/{mturk_link.key}/"


def test_checking_a_completion_token(study, people, mturk_link):
    project, _ = study
    session, worker = arrive_and_consent(mturk_link, worker="A1", session="AS1")
    work_items(project, worker, 3)
    session = crowd_session_finish(session=session)
    url = reverse("crowd:link-verify", args=[project.id, mturk_link.id])
    admin = client_for(people["admin"])
    good = {"worker_id": "A1", "assignment_id": "AS1", "token": session.completion_token}
    data = admin.post(url, good, format="json").data
    assert data["valid"] and data["session"]["status"] == "completed"
    assert data["session"]["items_done"] == 3
    assert not admin.post(url, {**good, "assignment_id": "AS2"}, format="json").data["valid"]
    forged = completion_token(
        link_id=mturk_link.pk + 1, platform="mturk", worker_id="A1", session_id="AS1"
    )
    assert not admin.post(url, {**good, "token": forged}, format="json").data["valid"]
    for bad in (
        {"worker_id": "A 1"},
        {"token": "<script>"},
        {"token": ""},
        {"worker_id": "W" * 65},
    ):
        assert admin.post(url, {**good, **bad}, format="json").status_code == 400, bad


def test_the_sessions_list(study, people, mturk_link):
    project, _ = study
    arrive_and_consent(mturk_link, worker="A1", session="AS1")
    data = (
        client_for(people["admin"])
        .get(reverse("crowd:link-sessions", args=[project.id, mturk_link.id]))
        .data
    )
    assert data["count"] == 1
    assert (data["results"][0]["external_id"], data["results"][0]["status"]) == ("A1", "working")


def test_a_workers_session_endpoints_answer_only_that_worker(study, people, mturk_link):
    session, worker = arrive_and_consent(mturk_link, worker="A1", session="AS1")
    _, other = arrive_and_consent(mturk_link, worker="A2", session="AS2")
    for url, method in (
        (reverse("crowd:session", args=[session.pk]), "get"),
        (reverse("crowd:session-finish", args=[session.pk]), "post"),
    ):
        assert getattr(client_for(worker), method)(url, {}, format="json").status_code == 200
        for stranger in (other, people["admin"], people["outsider"]):
            response = getattr(client_for(stranger), method)(url, {}, format="json")
            assert response.status_code == 404, (url, stranger)


def test_finish_input_is_checked_and_counts_come_from_the_server(study, mturk_link):
    session, worker = arrive_and_consent(mturk_link, worker="A1", session="AS1")
    url = reverse("crowd:session-finish", args=[session.pk])
    client = client_for(worker)
    assert client.post(url, {"finish_now": "perhaps"}, format="json").status_code == 400
    # Whatever the browser claims, no items were stored: the session stays open
    data = client.post(url, {"items_done": 99, "finish_now": True}, format="json").data
    assert (data["ended"], data["items_done"], data["next_url"]) == (
        False,
        0,
        reverse("crowd:work", args=[session.pk]),
    )


def test_finishing_before_consent_is_a_conflict(study, mturk_link):
    from tests.crowd.conftest import arrive

    entry = arrive(mturk_link)
    response = client_for(entry.worker).post(
        reverse("crowd:session-finish", args=[entry.session.pk]), {}, format="json"
    )
    assert response.status_code == 409 and response.data["code"] == "consent_first"
