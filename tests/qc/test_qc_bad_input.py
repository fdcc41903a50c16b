"""Bad input to every quality-control endpoint and command: a clear error naming what is
wrong, and nothing written."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.models import Item, Project
from qc.models import (
    AuditEvent,
    ProjectWorker,
    QualificationAnswer,
    QualityPolicy,
    WorkerProfile,
)
from qc.services import gold_items_set, quality_policy_update
from tests.conftest import client_for
from tests.qc.helpers import add_reference, make_review_project


@pytest.fixture
def setup(db):
    return make_review_project(items=3)


def test_quality_policy_out_of_range_or_unknown_is_refused_and_unchanged(setup):
    project, people = setup
    url = reverse("qc:quality-policy", args=[project.id])
    client = client_for(people["admin"])

    out_of_range = client.patch(url, {"test_pass_f1": 2, "min_approval_rate": 150}, format="json")
    wrong_type = client.patch(url, {"masters_only": "perhaps"}, format="json")

    assert out_of_range.status_code == 400
    assert set(out_of_range.data) == {"test_pass_f1", "min_approval_rate"}
    assert wrong_type.status_code == 400 and "masters_only" in wrong_type.data
    assert not QualityPolicy.objects.filter(project=project).exists()


def test_review_policy_out_of_scale_is_refused_and_unchanged(setup):
    project, people = setup
    response = client_for(people["admin"]).patch(
        reverse("annotate:project-policy", args=[project.id]),
        {"compactness_threshold": 5, "reviewers_per_annotation": 0},
        format="json",
    )

    assert response.status_code == 400
    assert set(response.data) == {"compactness_threshold", "reviewers_per_annotation"}
    project.refresh_from_db()
    assert (project.compactness_threshold, project.reviewers_per_annotation) == (11 / 3, 2)


def test_a_bad_csv_upload_names_its_rows_and_writes_nothing(setup):
    project, people = setup
    upload = SimpleUploadedFile("w.csv", b"worker_id,approval_rate\nA1,97\nA2,abc\n", "text/csv")

    response = client_for(people["admin"]).post(
        reverse("qc:worker-import", args=[project.id]), {"file": upload}, format="multipart"
    )

    assert response.status_code == 400
    assert response.data["problems"] == [
        "w.csv, line 3, field approval_rate: 'abc' is not a percentage between 0 and 100"
    ]
    assert WorkerProfile.objects.count() == 0


def test_unblocking_someone_not_blocked_or_unknown_is_refused(setup):
    project, people = setup
    admin = client_for(people["admin"])
    client_for(people["annotator"]).post(reverse("annotate:assignment-next", args=[project.id]))

    not_blocked = admin.post(
        reverse("qc:worker-unblock", args=[project.id, people["annotator"].pk]),
        {"reason": "r"},
        format="json",
    )
    stranger = admin.post(
        reverse("qc:worker-block", args=[project.id, people["outsider"].pk]),
        {"reason": "r"},
        format="json",
    )

    assert not_blocked.status_code == 400 and "not blocked" in not_blocked.data["detail"]
    assert (
        stranger.status_code == 404 and "has not worked on this project" in stranger.data["detail"]
    )
    assert not AuditEvent.objects.exists()


def test_a_decision_needs_accept_and_leaves_the_candidate_as_they_were(setup):
    project, people = setup
    client_for(people["annotator"]).post(reverse("annotate:assignment-next", args=[project.id]))

    response = client_for(people["admin"]).post(
        reverse("qc:candidate-decision", args=[project.id, people["annotator"].pk]),
        {"reason": "no verdict given"},
        format="json",
    )

    assert response.status_code == 400 and "accept" in response.data
    assert ProjectWorker.objects.get(worker=people["annotator"]).status == "qualified"
    assert not AuditEvent.objects.exists()


def test_a_bad_test_answer_is_refused_and_not_stored(setup):
    project, people = setup
    gold = Item.objects.filter(project=project).order_by("pk").first()
    add_reference(gold, 1, 3)
    gold_items_set(project=project, annotation_ids=[gold.annotation_id])
    quality_policy_update(project=project, test_enabled=True)
    client = client_for(people["annotator"])
    item = client.post(reverse("qc:qualification-next", args=[project.id])).data
    url = reverse("qc:qualification-answer", args=[project.id])

    outside = client.post(
        url,
        {
            "gold_item": item["id"],
            "rationale_sets": [[{"docid": "d0", "start_token": 5, "end_token": 500}]],
        },
        format="json",
    )
    foreign_doc = client.post(
        url,
        {
            "gold_item": item["id"],
            "rationale_sets": [[{"docid": "nope", "start_token": 0, "end_token": 1}]],
        },
        format="json",
    )
    unknown_item = client.post(url, {"gold_item": 999999, "rationale_sets": []}, format="json")

    assert outside.status_code == 400 and "rationale_sets[0][0]" in outside.data["detail"]
    assert (
        foreign_doc.status_code == 400 and "'nope' is not a document" in foreign_doc.data["detail"]
    )
    assert unknown_item.status_code == 404
    assert not QualificationAnswer.objects.exists()


def test_review_detail_of_an_unknown_annotation_is_a_404(setup):
    _, people = setup
    response = client_for(people["reviewer1"]).get(reverse("qc:review-detail", args=[999999]))

    assert response.status_code == 404 and response.data["detail"] == "annotation not found"


def test_demo_quality_refuses_without_debug_or_without_the_demo_project(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="refusing with DEBUG off"):
        call_command("demo_quality")
    settings.DEBUG = True
    with pytest.raises(CommandError, match=r"run `manage\.py demo_setup` first"):
        call_command("demo_quality")
    assert not Project.objects.exists()


def test_fill_counters_rebuild_names_an_unknown_project(db):
    with pytest.raises(CommandError, match="no project named 'ghost'"):
        call_command("fill_counters_rebuild", "ghost")
