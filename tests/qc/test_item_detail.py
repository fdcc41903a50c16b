"""The data manager's item detail: the item's texts once, every annotation of every round
with its annotator, variant, flags and reviews, and the per-token agreement strip."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Item, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from qc.item_detail_selectors import item_detail_get
from qc.models import QualityFlag
from qc.services.item_summaries import item_summaries_refresh
from rationale_metrics.agreement import token_highlight_shares
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.conftest import client_for
from tests.factories import UserFactory
from tests.qc.helpers import make_review_project, next_assignment, review, submit


def _detail(user, project, item_id):
    return client_for(user).get(reverse("qc:item-detail", args=[project.id, item_id]))


def test_token_highlight_shares_count_each_annotator_once_per_token():
    shares = token_highlight_shares([{0, 1}, {1, 2}, set(), {1, 9}], 4)

    assert shares == [0.25, 0.75, 0.25, 0.0]
    assert token_highlight_shares([], 3) == [0.0, 0.0, 0.0]


@pytest.fixture
def revised(db, django_capture_on_commit_callbacks):
    """One item: round 1 (tokens 0-2) fails review with comments, round 2 (tokens 1-4)."""
    project, people = make_review_project(items=1)
    with django_capture_on_commit_callbacks(execute=True):
        first = next_assignment(project, people["annotator"])
        first_id = submit(first, people["annotator"], 0, 3)["annotation_id"]
    review(people["reviewer1"], first_id, sufficiency=1, comment="too little")
    review(people["reviewer2"], first_id, sufficiency=2)
    with django_capture_on_commit_callbacks(execute=True):
        second = next_assignment(project, people["annotator"])
        second_id = submit(second, people["annotator"], 1, 5)["annotation_id"]
    item_id = Item.objects.get(project=project).pk
    return project, people, item_id, first_id, second_id


def test_every_round_is_listed_with_its_reviews_and_the_revision_it_makes(revised):
    project, people, item_id, first_id, second_id = revised

    response = _detail(people["admin"], project, item_id)

    assert response.status_code == 200, response.data
    data = response.data
    assert data["item"]["id"] == item_id
    # The list's row of the item comes with it.
    assert data["item"]["status"] == "complete"
    assert data["item"]["submitted"] == 1
    assert data["item"]["annotators"] == [
        {"id": people["annotator"].pk, "username": "annotator-zq7"}
    ]
    (text,) = data["item"]["texts"]
    assert text["role"] == "text" and text["text"].startswith("Item number 0")
    assert len(text["tokens"]) == 14 and text["tokens"][0] == [0, 4]
    rounds = {a["id"]: a for a in data["annotations"]}
    assert set(rounds) == {first_id, second_id}
    first, second = rounds[first_id], rounds[second_id]
    assert (first["round"], second["round"]) == (1, 2)
    assert second["revision_of"] == first_id and first["revision_of"] is None
    assert first["annotator"]["username"] == "annotator-zq7"
    assert first["variant"]["name"] == "plain"
    assert first["time_spent_ms"] == 30_000
    docid = text["docid"]
    assert first["sets"] == [
        {"position": 0, "spans": [{"docid": docid, "start_token": 0, "end_token": 3}]}
    ]
    assert first["review"]["verdict"] == "revise"
    assert sorted(r["reviewer"] for r in first["review"]["scores"]) == ["rev1", "rev2"]
    assert {"reviewer": "rev1", "set": None, "text": "too little"} in first["review"]["comments"]
    assert second["review"] == {"scores": [], "comments": [], "verdict": None}
    # One annotator: their latest round alone speaks for them.
    assert data["token_agreement"][docid][:6] == [0.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    assert data["curated"] is None


def test_agreement_is_the_share_of_annotators_and_flags_say_whether_open(
    db, django_capture_on_commit_callbacks
):
    project = make_project(items=1, quota=3)
    workers = [UserFactory(username=f"agree{n}") for n in range(3)]
    for worker in workers:
        ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    spans = [(0, 2), (1, 3), (1, 2)]
    for worker, (start, end) in zip(workers, spans, strict=True):
        with django_capture_on_commit_callbacks(execute=True):
            assignment = assignment_next(project=project, worker=worker)
            annotation_submit(
                assignment_id=assignment.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=[
                    [{"docid": text_docid(assignment), "start_token": start, "end_token": end}]
                ],
                time_spent_ms=20_000,
            )
    item = Item.objects.get(project=project)
    flagged = item.assignments.get(worker=workers[0]).annotation
    QualityFlag.objects.get_or_create(annotation=flagged, kind="first_tokens")
    item_summaries_refresh(project=project, item_ids=[item.pk])

    data = item_detail_get(project=project, item_id=item.pk)

    shares = data["token_agreement"]["d0"]
    assert shares[:4] == [pytest.approx(1 / 3), 1.0, pytest.approx(1 / 3), 0.0]
    by_annotator = {a["annotator"]["username"]: a for a in data["annotations"]}
    assert {"kind": "first_tokens", "open": True} in by_annotator["agree0"]["flags"]


def test_the_queries_do_not_grow_with_the_annotations(db, django_capture_on_commit_callbacks):
    def queries_for(annotators: int) -> int:
        project = make_project(items=1, quota=annotators)
        for n in range(annotators):
            worker = UserFactory(username=f"q{annotators}-{n}")
            ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
            with django_capture_on_commit_callbacks(execute=True):
                assignment = assignment_next(project=project, worker=worker)
                annotation_submit(
                    assignment_id=assignment.pk,
                    worker=worker,
                    client_uuid=uuid.uuid4(),
                    rationale_sets=[
                        [{"docid": text_docid(assignment), "start_token": 0, "end_token": 2}],
                        [{"docid": text_docid(assignment), "start_token": 4, "end_token": 5}],
                    ],
                    time_spent_ms=20_000,
                )
        item = Item.objects.get(project=project)
        item_summaries_refresh(project=project, item_ids=[item.pk])
        with CaptureQueriesContext(connection) as queries:
            item_detail_get(project=project, item_id=item.pk)
        return len(queries)

    assert queries_for(1) == queries_for(4)


def test_who_may_read_an_item(revised):
    project, people, item_id, *_ = revised
    curator = UserFactory(username="cura")
    ProjectMembership.objects.create(project=project, user=curator, role=Role.CURATOR)

    answers = {
        name: _detail(user, project, item_id).status_code
        for name, user in [
            ("admin", people["admin"]),
            ("researcher", people["researcher"]),
            ("curator", curator),
            ("reviewer", people["reviewer1"]),
            ("annotator", people["annotator"]),
            ("outsider", people["outsider"]),
        ]
    }
    anonymous = client_for(None).get(reverse("qc:item-detail", args=[project.id, item_id]))

    assert answers == {
        "admin": 200,
        "researcher": 200,
        "curator": 200,
        "reviewer": 403,
        "annotator": 403,
        "outsider": 404,
    }
    assert anonymous.status_code == 401


def test_an_item_of_another_project_or_a_deleted_one_is_not_found(revised):
    project, people, item_id, *_ = revised
    other = make_project(items=1)
    other_item = Item.objects.get(project=other)

    assert _detail(people["admin"], project, other_item.pk).status_code == 404
    Item.objects.filter(pk=item_id).update(deleted_at="2026-01-01T00:00:00Z")
    assert _detail(people["admin"], project, item_id).status_code == 404


def test_a_curated_item_shows_its_gold_in_the_list_and_on_its_page(revised):
    """The data manager's row says the item is curated, and its page gets the curated sets
    as spans, shaped like an annotation's, with who curated them."""
    from qc.item_list_selectors import item_list_items, item_list_rows
    from qc.services.curation import curated_annotation_save

    project, people, item_id, _, _ = revised
    docid = Item.objects.get(pk=item_id).item_documents.get().document.docid
    rows_before = item_list_rows(list(item_list_items(project=project).filter(pk=item_id)))
    curated_annotation_save(
        project=project,
        item_id=item_id,
        curator=people["admin"],
        sets=[[{"docid": docid, "start_token": 1, "end_token": 3}]],
        version=0,
    )

    row = item_list_rows(list(item_list_items(project=project).filter(pk=item_id)))[0]
    curated = _detail(people["admin"], project, item_id).data["curated"]

    assert (rows_before[0]["curated"], row["curated"]) == (False, True)
    assert curated["rule"] == "hand"
    assert curated["curator"]["username"] == people["admin"].username
    assert curated["sets"] == [
        {"position": 0, "spans": [{"docid": docid, "start_token": 1, "end_token": 3}]}
    ]
