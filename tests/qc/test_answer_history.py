"""An annotator's previous answers: the list, one answer, and changing it while it is open
(a new version each time, the latest in the annotation row, every version kept)."""

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.models import (
    AnnotationVersion,
    AnswersEditableUntil,
    Assignment,
    MemberConsent,
    ProjectMembership,
    RationaleSpan,
    Role,
)
from annotate.services import assignment_next
from qc.models import AuditAction, AuditEvent
from qc.services import review_submit
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _member(project, role=Role.ANNOTATOR, name=None):
    user = UserFactory(username=name) if name else UserFactory()
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _submitted(project, worker, tokens=2):
    lease = assignment_next(project=project, worker=worker)
    submit_first_tokens(lease, worker, tokens=tokens)
    return Assignment.objects.get(pk=lease.pk)


def _change(client, answer, *, base=1, end=5, label=None):
    docid = answer.item.documents.get().docid
    body = {
        "base_version": base,
        "rationale_sets": [[{"docid": docid, "start_token": 1, "end_token": end}]],
        "label": label,
        "time_spent_ms": 900,
    }
    return client.post(f"/api/answers/{answer.pk}/change/", body, format="json")


def _review(annotation):
    reviewer = _member(annotation.assignment.item.project, Role.REVIEWER)
    review_submit(
        annotation_id=annotation.pk,
        reviewer=reviewer,
        comprehensiveness=2,
        set_scores=[
            {"rationale_set": s.pk, "sufficiency": 2, "compactness": 2}
            for s in annotation.rationale_sets.all()
        ],
    )


def test_the_list_is_the_callers_own_answers_newest_first_summarised_and_paged():
    project = make_project(items=4, quota=2)
    worker, other = _member(project), _member(project)
    first = _submitted(project, worker, tokens=2)
    second = _submitted(project, worker, tokens=3)
    Assignment.objects.filter(pk=first.pk).update(submitted_at=timezone.now().replace(year=2020))
    _submitted(project, other)

    body = _client(worker).get(f"/api/projects/{project.pk}/answers/").json()
    assert body["count"] == 2
    assert [row["id"] for row in body["results"]] == [second.pk, first.pk]
    newest = body["results"][0]
    assert (newest["set_count"], newest["tokens"], newest["version"]) == (1, 3, 1)
    assert newest["closed"] is None
    assert newest["snippet"].startswith("Item number")

    page = _client(worker).get(f"/api/projects/{project.pk}/answers/?limit=1&offset=1").json()
    assert [row["id"] for row in page["results"]] == [first.pk]


def test_a_bad_page_is_refused_naming_the_parameter():
    project = make_project(items=1)
    worker = _member(project)
    response = _client(worker).get(f"/api/projects/{project.pk}/answers/?limit=abc")
    assert response.status_code == 400
    assert "limit" in response.content.decode()


def test_a_change_is_a_new_version_and_the_submitted_one_is_kept():
    project = make_project(items=2, quota=2, labels=("neg", "pos"))
    worker = _member(project)
    answer = _submitted(project, worker, tokens=2)
    annotation = answer.annotation

    response = _change(_client(worker), answer, end=5, label="neg")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 2
    assert body["rationale_sets"] == [[{"docid": "d0", "start_token": 1, "end_token": 5}]]
    assert [v["number"] for v in body["versions"]] == [1, 2]
    assert body["versions"][0]["rationale_sets"] == [
        [{"docid": "d0", "start_token": 0, "end_token": 2}]
    ]
    annotation.refresh_from_db()
    assert annotation.label == "neg"
    spans = RationaleSpan.objects.filter(rationale_set__annotation=annotation)
    assert [(s.start_token, s.end_token) for s in spans] == [(1, 5)]
    event = AuditEvent.objects.get(action=AuditAction.ANSWER_CHANGE)
    assert (event.actor, event.details["version"]) == (worker, 2)

    again = _change(_client(worker), answer, base=2, end=3)
    assert again.json()["version"] == 3
    assert AnnotationVersion.objects.filter(annotation=annotation).count() == 3


def test_a_change_from_an_old_version_is_refused_as_stale():
    project = make_project(items=1, quota=2)
    worker = _member(project)
    answer = _submitted(project, worker)
    assert _change(_client(worker), answer, base=1).status_code == 200

    response = _change(_client(worker), answer, base=1, end=3)

    assert response.status_code == 409
    assert response.json()["code"] == "stale"


def test_another_annotators_answer_is_not_found_to_read_or_change():
    project = make_project(items=2, quota=2)
    worker, other = _member(project), _member(project)
    answer = _submitted(project, worker)

    assert _client(other).get(f"/api/answers/{answer.pk}/").status_code == 404
    assert _change(_client(other), answer).status_code == 404
    assert AnnotationVersion.objects.count() == 0


def test_an_open_lease_is_not_an_answer():
    project = make_project(items=2, quota=2)
    worker = _member(project)
    lease = assignment_next(project=project, worker=worker)
    assert _client(worker).get(f"/api/answers/{lease.pk}/").status_code == 404


@pytest.mark.parametrize("until", AnswersEditableUntil.values)
def test_a_reviewed_answer_is_shown_but_cannot_change(until):
    project = make_project(items=1, quota=2, answers_editable_until=until)
    worker = _member(project)
    answer = _submitted(project, worker)
    _review(answer.annotation)

    shown = _client(worker).get(f"/api/answers/{answer.pk}/").json()
    response = _change(_client(worker), answer)

    assert shown["closed"] == "reviewed"
    assert response.status_code == 409
    assert response.json()["code"] == "reviewed"
    assert AnnotationVersion.objects.count() == 0


def test_a_complete_item_closes_its_answers_only_under_the_complete_setting():
    for until, wanted in (("reviewed", 200), ("complete", 409)):
        project = make_project(items=1, quota=2, answers_editable_until=until)
        worker, other = _member(project), _member(project)
        answer = _submitted(project, worker)
        _submitted(project, other)  # the item now has both its annotations

        response = _change(_client(worker), answer)

        assert response.status_code == wanted, until
        if wanted == 409:
            assert response.json()["code"] == "complete"


def test_an_item_still_short_of_annotations_stays_open_under_the_complete_setting():
    project = make_project(items=1, quota=2, answers_editable_until="complete")
    worker = _member(project)
    answer = _submitted(project, worker)
    assert _change(_client(worker), answer).status_code == 200


def test_an_archived_project_closes_every_answer():
    project = make_project(items=1, quota=2)
    worker = _member(project)
    answer = _submitted(project, worker)
    project.archived_at = timezone.now()
    project.save(update_fields=["archived_at"])

    response = _change(_client(worker), answer)

    assert response.status_code == 409
    assert response.json()["code"] == "project_archived"


def test_a_deleted_items_answer_is_gone_from_the_list_and_not_found():
    project = make_project(items=1, quota=2)
    worker = _member(project)
    answer = _submitted(project, worker)
    answer.item.deleted_at = timezone.now()
    answer.item.save(update_fields=["deleted_at"])

    listed = _client(worker).get(f"/api/projects/{project.pk}/answers/").json()
    assert listed["count"] == 0
    assert _change(_client(worker), answer).status_code == 404


def test_a_bad_body_is_refused_and_nothing_changes():
    project = make_project(items=1, quota=2)
    worker = _member(project)
    answer = _submitted(project, worker)
    client = _client(worker)
    url = f"/api/answers/{answer.pk}/change/"

    assert client.post(url, {"rationale_sets": []}, format="json").status_code == 400
    beyond = {
        "base_version": 1,
        "rationale_sets": [[{"docid": "d0", "start_token": 0, "end_token": 999}]],
    }
    assert client.post(url, beyond, format="json").status_code == 400
    unknown_label = {
        **beyond,
        "rationale_sets": [[{"docid": "d0", "start_token": 0, "end_token": 1}]],
        "label": "maybe",
    }
    assert client.post(url, unknown_label, format="json").status_code == 400
    assert AnnotationVersion.objects.count() == 0


def test_the_detail_links_the_newer_and_older_answers():
    project = make_project(items=3, quota=2)
    worker = _member(project)
    first, second, third = (_submitted(project, worker) for _ in range(3))
    stamps = {first.pk: 2020, second.pk: 2021, third.pk: 2022}
    for pk, year in stamps.items():
        Assignment.objects.filter(pk=pk).update(submitted_at=timezone.now().replace(year=year))

    middle = _client(worker).get(f"/api/answers/{second.pk}/").json()

    assert (middle["newer"], middle["older"]) == (third.pk, first.pk)


def test_reviewers_read_the_latest_version():
    project = make_project(items=1, quota=2)
    worker = _member(project)
    answer = _submitted(project, worker, tokens=2)
    _change(_client(worker), answer, end=6)
    reviewer = _member(project, Role.REVIEWER)

    shown = _client(reviewer).get(f"/api/annotations/{answer.annotation.pk}/review/").json()

    assert [rset["tokens"] for rset in shown["sets"]] == [{"d0": [1, 2, 3, 4, 5]}]


@pytest.mark.parametrize("until", AnswersEditableUntil.values)
def test_a_study_participant_sees_their_answers_but_never_changes_them(until):
    project = make_project(items=1, quota=2, answers_editable_until=until)
    participant = UserFactory()
    ProjectMembership.objects.create(
        project=project, user=participant, role=Role.ANNOTATOR, consent=MemberConsent.GIVEN
    )
    answer = _submitted(project, participant)

    listed = _client(participant).get(f"/api/projects/{project.pk}/answers/").json()
    response = _change(_client(participant), answer)

    assert listed["results"][0]["closed"] == "participant"
    assert response.status_code == 409
    assert response.json()["code"] == "participant"
    assert AnnotationVersion.objects.count() == 0


def test_members_who_do_not_annotate_are_refused_the_list():
    project = make_project(items=1)
    reviewer = _member(project, Role.REVIEWER)
    assert _client(reviewer).get(f"/api/projects/{project.pk}/answers/").status_code == 403


def test_the_admin_chooses_until_when_answers_may_change():
    project = make_project(items=1)
    admin = _member(project, Role.ADMIN)
    url = f"/api/projects/{project.pk}/policy/"

    assert (
        _client(admin).patch(url, {"answers_editable_until": "complete"}, format="json").status_code
        == 200
    )
    project.refresh_from_db()
    assert project.answers_editable_until == "complete"
    refused = _client(admin).patch(url, {"answers_editable_until": "never"}, format="json")
    assert refused.status_code == 400
    assert "answers_editable_until" in refused.content.decode()
