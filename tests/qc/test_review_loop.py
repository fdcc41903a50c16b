"""The score-and-revise loop through the API: fail, revise, pass; discard after the
last round; blind review; history and the change between rounds."""

import json

import pytest
from django.urls import reverse

from annotate.models import Annotation, Assignment
from qc.models import ReviewVerdict, WorkerRecord
from tests.conftest import client_for
from tests.qc.helpers import make_review_project, next_assignment, review, submit


@pytest.fixture
def loop(db, django_capture_on_commit_callbacks):
    project, people = make_review_project(items=1)
    with django_capture_on_commit_callbacks(execute=True):
        first = next_assignment(project, people["annotator"])
        submitted = submit(first, people["annotator"], 0, 3)
    return project, people, first, submitted["annotation_id"]


def test_a_failed_review_sends_the_annotation_back_with_scores_and_comments(loop):
    project, people, first, annotation_id = loop

    assert (
        review(people["reviewer1"], annotation_id, compactness=2, comment="drop 'Item'").status_code
        == 201
    )
    second = review(people["reviewer2"], annotation_id, compactness=3)
    assert second.status_code == 201
    assert second.data["verdict"] == {"outcome": "revise", "failed": ["compactness"]}

    revision = next_assignment(project, people["annotator"])
    assert revision["round"] == 2 and revision["item"] == first["item"]
    # The previous highlights come back as the draft to edit.
    assert revision["draft"]["sets"] == [[[first["item"]["documents"][0]["docid"], [0, 1, 2]]]]
    feedback = (
        client_for(people["annotator"])
        .get(reverse("qc:revision-feedback", args=[revision["id"]]))
        .data
    )
    assert feedback["verdict"]["failed"] == ["compactness"]
    assert feedback["verdict"]["means"]["compactness"] == 2.5
    assert [r["reviewer"] for r in feedback["reviews"]] == ["Reviewer A", "Reviewer B"]
    assert feedback["reviews"][0]["comment"] == "drop 'Item'"
    assert "rev1" not in str(feedback) and "rev2" not in str(feedback)


def test_revise_then_pass_accepts_and_keeps_every_round(loop, django_capture_on_commit_callbacks):
    project, people, first, annotation_id = loop
    review(people["reviewer1"], annotation_id, sufficiency=2)
    review(people["reviewer2"], annotation_id, sufficiency=2)
    with django_capture_on_commit_callbacks(execute=True):
        revision = next_assignment(project, people["annotator"])
        resubmitted = submit(revision, people["annotator"], 1, 5)["annotation_id"]

    detail = (
        client_for(people["reviewer1"]).get(reverse("qc:review-detail", args=[resubmitted])).data
    )
    assert detail["round"] == 2 and len(detail["history"]) == 1
    assert detail["history"][0]["verdict"]["outcome"] == "revise"
    docid = first["item"]["documents"][0]["docid"]
    assert detail["diff"] == {docid: {"added": [3, 4], "removed": [0]}}

    review(people["reviewer1"], resubmitted)
    passed = review(people["reviewer2"], resubmitted)

    assert passed.data["verdict"] == {"outcome": "accepted", "failed": []}
    assert Annotation.objects.get(pk=resubmitted).revision_of_id == annotation_id
    pipeline = client_for(people["admin"]).get(reverse("qc:pipeline", args=[project.id])).data
    assert pipeline["stages"] == {
        "submitted": 0,
        "in_review": 0,
        "revising": 0,
        "accepted": 1,
        "discarded": 0,
    }
    # Our own outcomes update the project's record of the worker: one rejected, one approved.
    record = WorkerRecord.objects.get(project=project, profile__user=people["annotator"])
    assert (record.approved_count, record.judged_count, record.approval_rate) == (1, 2, 50.0)


def test_three_failed_rounds_discard_the_item(loop, django_capture_on_commit_callbacks):
    project, people, _, annotation_id = loop
    for round_number in (1, 2, 3):
        review(people["reviewer1"], annotation_id, sufficiency=1)
        outcome = review(people["reviewer2"], annotation_id, sufficiency=1).data["verdict"]
        if round_number < 3:
            assert outcome["outcome"] == "revise"
            with django_capture_on_commit_callbacks(execute=True):
                revision = next_assignment(project, people["annotator"])
                annotation_id = submit(revision, people["annotator"])["annotation_id"]

    assert outcome["outcome"] == "discarded"
    assert not Assignment.objects.filter(round=4).exists()
    done = client_for(people["annotator"]).post(
        reverse("annotate:assignment-next", args=[project.id])
    )
    assert "id" not in done.data  # nothing more: the item is not offered again
    pipeline = client_for(people["admin"]).get(reverse("qc:pipeline", args=[project.id])).data
    assert pipeline["stages"]["discarded"] == 1
    assert pipeline["by_round"] == {"3": {"discarded": 1}}


def test_review_is_blind_and_read_only(loop):
    project, people, _, annotation_id = loop
    client = client_for(people["reviewer1"])

    queued = client.post(reverse("qc:review-next", args=[project.id])).data
    assert queued["id"] == annotation_id
    payload = json.dumps(queued, default=str)
    assert "zq7" not in payload, "the annotator's username reaches the reviewer"
    assert not {"worker", "annotator", "username", "user"} & set(queued)

    # A review carries scores only: highlights sent along are ignored, not applied.
    detail = client.get(reverse("qc:review-detail", args=[annotation_id])).data
    client.post(
        reverse("qc:review-submit", args=[annotation_id]),
        {
            "comprehensiveness": 3,
            "set_scores": [
                {"rationale_set": detail["sets"][0]["id"], "sufficiency": 3, "compactness": 4}
            ],
            "rationale_sets": [[{"docid": "d0", "start_token": 5, "end_token": 9}]],
        },
        format="json",
    )
    after = client.get(reverse("qc:review-detail", args=[annotation_id])).data
    assert after["sets"][0]["tokens"] == detail["sets"][0]["tokens"]


def test_reviewers_cannot_review_twice_or_their_own_work_or_past_the_count(loop):
    _project, people, _, annotation_id = loop
    assert review(people["reviewer1"], annotation_id).status_code == 201
    assert review(people["reviewer1"], annotation_id).status_code == 409
    assert review(people["reviewer2"], annotation_id).status_code == 201
    late = review(people["reviewer3"], annotation_id)
    assert late.status_code == 409 and late.data["code"] == "decided"
    assert ReviewVerdict.objects.filter(annotation_id=annotation_id).count() == 1


def test_scores_out_of_scale_or_missing_sets_are_refused(loop):
    _, people, _, annotation_id = loop
    client = client_for(people["reviewer1"])
    url = reverse("qc:review-submit", args=[annotation_id])
    set_id = client.get(reverse("qc:review-detail", args=[annotation_id])).data["sets"][0]["id"]

    too_high = client.post(
        url,
        {
            "comprehensiveness": 3,
            "set_scores": [{"rationale_set": set_id, "sufficiency": 4, "compactness": 4}],
        },
        format="json",
    )
    missing = client.post(url, {"comprehensiveness": 3, "set_scores": []}, format="json")
    foreign = client.post(
        url,
        {
            "comprehensiveness": 3,
            "set_scores": [{"rationale_set": 999999, "sufficiency": 3, "compactness": 4}],
        },
        format="json",
    )

    assert too_high.status_code == 400 and "sufficiency" in str(too_high.data)
    assert missing.status_code == 400 and "score every rationale set" in missing.data["detail"]
    assert foreign.status_code == 400 and "set_scores[0].rationale_set" in foreign.data["detail"]


def test_an_admin_who_also_annotates_cannot_review_their_own_annotation(
    db, django_capture_on_commit_callbacks
):
    from annotate.models import ProjectMembership, Role

    project, people = make_review_project(items=1)
    ProjectMembership.objects.create(project=project, user=people["admin"], role=Role.ANNOTATOR)
    with django_capture_on_commit_callbacks(execute=True):
        own = submit(next_assignment(project, people["admin"]), people["admin"])["annotation_id"]

    assert review(people["admin"], own).status_code == 403
    assert (
        client_for(people["admin"]).post(reverse("qc:review-next", args=[project.id])).data["queue"]
        == 0
    )


def test_the_queue_lists_what_a_reviewer_may_score_without_names(loop):
    project, people, _, annotation_id = loop
    client = client_for(people["reviewer1"])

    before = client.get(reverse("qc:review-queue", args=[project.id])).data
    review(people["reviewer1"], annotation_id)
    after = client.get(reverse("qc:review-queue", args=[project.id])).data

    assert before["count"] == 1 and before["results"][0]["id"] == annotation_id
    # The annotator by id only, for the queue's filter: never a name.
    assert set(before["results"][0]) == {
        "id",
        "item",
        "round",
        "variant",
        "variant_id",
        "annotator",
        "submitted_at",
        "reviews_done",
    }
    assert after["count"] == 0 and after["results"] == []
    other = client_for(people["reviewer2"]).get(reverse("qc:review-queue", args=[project.id])).data
    assert other["results"][0]["reviews_done"] == 1
