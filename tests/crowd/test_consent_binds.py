"""Consent binds: a participant who has not answered the consent form yet, or declined
it, is served no work and can store none, through "next" and "submit" on both of their
paths (the prepared statements and the general services), drafts and the workspace
pages. Members who never arrived through a study link are not asked."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Annotation, Assignment, MemberConsent, ProjectMembership, Role
from annotate.services import assignment_next
from crowd.models import CrowdSession, SessionStatus
from crowd.services import crowd_consent_record
from tests.annotate.workflow_helpers import text_docid
from tests.crowd.conftest import arrive, entry_url, prolific_params
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
JSON = {"content_type": "application/json"}


def _signed_in(worker) -> Client:
    client = Client()
    client.force_login(worker)
    return client


def _submit_body(assignment) -> dict:
    return {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": text_docid(assignment), "start_token": 0, "end_token": 2}]],
        "time_spent_ms": 1500,
    }


def _lease_behind_the_consent(project, worker):
    """A lease the participant holds although they have not consented: made through the
    service, as one left from before a new platform session asked for consent again."""
    return assignment_next(project=project, worker=worker)


def _refusals(client, project, assignment) -> dict:
    answers = {
        "next": client.post(reverse("annotate:assignment-next", args=[project.pk])),
        "submit": client.post(
            reverse("annotate:assignment-submit", args=[assignment.pk]),
            json.dumps(_submit_body(assignment)),
            **JSON,
        ),
        "draft": client.put(
            reverse("annotate:assignment-draft", args=[assignment.pk]),
            json.dumps({"draft": {"sets": [], "current": 0}}),
            **JSON,
        ),
        "assignment": client.get(reverse("annotate:assignment-detail", args=[assignment.pk])),
    }
    return {name: (r.status_code, r.json().get("code")) for name, r in answers.items()}


def test_before_consent_no_work_is_served_or_stored(hot_path, study, prolific_link):
    project, _admin = study
    entry = arrive(prolific_link, worker="P1", session="S1")
    assignment = _lease_behind_the_consent(project, entry.worker)
    client = _signed_in(entry.worker)

    refused = _refusals(client, project, assignment)

    assert refused == {name: (403, "consent_required") for name in refused}
    assert not Annotation.objects.exists()
    assert Assignment.objects.get().draft is None
    detail = client.post(reverse("annotate:assignment-next", args=[project.pk])).json()["detail"]
    assert "consent" in detail


def test_after_a_decline_no_work_is_served_or_stored_for_good(hot_path, study, prolific_link):
    project, _admin = study
    entry = arrive(prolific_link, worker="P1", session="S1")
    assignment = _lease_behind_the_consent(project, entry.worker)
    crowd_consent_record(session=entry.session, agree=False)
    client = _signed_in(entry.worker)

    refused = _refusals(client, project, assignment)

    assert refused == {name: (403, "consent_declined") for name in refused}
    assert not Annotation.objects.exists()
    # Coming back with a new platform session does not reopen the study to them.
    again = arrive(prolific_link, worker="P1", session="S2")
    assert again.session.status == SessionStatus.DECLINED
    assert _refusals(client, project, assignment)["next"] == (403, "consent_declined")


def test_once_consent_is_given_the_work_goes_through(hot_path, study, prolific_link):
    project, _admin = study
    entry = arrive(prolific_link, worker="P1", session="S1")
    assignment = _lease_behind_the_consent(project, entry.worker)
    crowd_consent_record(session=entry.session, agree=True)
    client = _signed_in(entry.worker)

    lease = client.post(reverse("annotate:assignment-next", args=[project.pk]))
    submitted = client.post(
        reverse("annotate:assignment-submit", args=[assignment.pk]),
        json.dumps(_submit_body(assignment)),
        **JSON,
    )

    assert lease.status_code == 200 and lease.json()["id"] == assignment.pk
    assert submitted.status_code == 201
    assert Annotation.objects.filter(assignment=assignment).exists()


def test_a_new_platform_session_asks_for_consent_again(hot_path, study, prolific_link):
    project, _admin = study
    first = arrive(prolific_link, worker="P1", session="S1")
    crowd_consent_record(session=first.session, agree=True)
    client = _signed_in(first.worker)
    assert client.post(reverse("annotate:assignment-next", args=[project.pk])).status_code == 200

    arrive(prolific_link, worker="P1", session="S2")

    refused = client.post(reverse("annotate:assignment-next", args=[project.pk]))
    assert (refused.status_code, refused.json()["code"]) == (403, "consent_required")


def test_the_qualification_test_is_not_served_or_answered_before_consent(study, prolific_link):
    project, _admin = study
    entry = arrive(prolific_link, worker="P1", session="S1")
    client = _signed_in(entry.worker)
    answer = {
        "gold_item": 1,
        "rationale_sets": [[{"docid": "d0", "start_token": 0, "end_token": 1}]],
        "time_spent_ms": 1000,
    }

    served = client.post(reverse("qc:qualification-next", args=[project.pk]))
    answered = client.post(
        reverse("qc:qualification-answer", args=[project.pk]), json.dumps(answer), **JSON
    )

    assert (served.status_code, served.json()["code"]) == (403, "consent_required")
    assert (answered.status_code, answered.json()["code"]) == (403, "consent_required")


def test_members_who_did_not_arrive_through_a_study_are_not_asked(hot_path, study):
    project, _admin = study
    annotator = UserFactory()
    ProjectMembership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    client = _signed_in(annotator)

    lease = client.post(reverse("annotate:assignment-next", args=[project.pk]))
    assignment = Assignment.objects.get(pk=lease.json()["id"])
    submitted = client.post(
        reverse("annotate:assignment-submit", args=[assignment.pk]),
        json.dumps(_submit_body(assignment)),
        **JSON,
    )

    assert lease.status_code == 200 and submitted.status_code == 201
    membership = ProjectMembership.objects.get(user=annotator)
    assert membership.consent == MemberConsent.NOT_ASKED


def test_the_workspace_pages_refuse_and_lead_to_the_consent_form(study, prolific_link):
    project, _admin = study
    client = Client()
    arrived = client.get(entry_url(prolific_link), prolific_params())
    session = CrowdSession.objects.get()
    assignment = _lease_behind_the_consent(project, session.worker)

    for url in (
        reverse("workspace", args=[project.pk]),
        reverse("assignment-page", args=[assignment.pk]),
    ):
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 403, url
        assert 'id="consent-required"' in page
        assert f'href="{arrived["Location"]}"' in page, "the way to the consent form"
        assert 'id="workspace"' not in page

    client.post(arrived["Location"], {"answer": "decline"})
    response = client.get(reverse("workspace", args=[project.pk]))
    page = response.content.decode()
    assert response.status_code == 403
    assert 'id="consent-declined"' in page
    assert arrived["Location"] not in page


def test_the_study_work_page_refuses_while_another_session_awaits_consent(prolific_link):
    client = Client()
    arrived = client.get(entry_url(prolific_link), prolific_params(session="S1"))
    working = client.post(arrived["Location"], {"answer": "agree"})
    assert client.get(working["Location"]).status_code == 200

    again = client.get(entry_url(prolific_link), prolific_params(session="S2"))

    response = client.get(working["Location"])
    assert response.status_code == 403
    assert f'href="{again["Location"]}"' in response.content.decode()
