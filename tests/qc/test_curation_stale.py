"""Curated gold goes stale when an annotation of its item changes after it was curated (a
revision after a send-back, or a new annotation), and says so on the curation queue, the
curation page and the item page, and to the data manager's filter, until a curator
confirms it as it is or curates it again."""

import uuid

import pytest
from django.urls import reverse

from annotate.models import Annotation
from annotate.services import annotation_submit
from annotate.services.assignments import assignment_revision_create
from qc.models import AuditAction, AuditEvent, CuratedAnnotation
from tests.conftest import client_for
from tests.qc.curation_helpers import item_of, make_curation_project

pytestmark = pytest.mark.django_db

HIGHLIGHTS = {
    "i0": [[[(0, 3)]], [[(0, 3)]]],
    "i1": [[[(0, 2)]], [[(5, 8)]]],
}


@pytest.fixture
def curated():
    """A project whose item i1 is curated by hand (version 1)."""
    project, people, workers = make_curation_project(HIGHLIGHTS, annotators=2)
    item = item_of(project, "i1")
    response = client_for(people["curator"]).put(
        reverse("qc:curation-item", args=[project.pk, item.pk]),
        {"version": 0, "sets": [[{"docid": "d1", "start_token": 0, "end_token": 2}]]},
        format="json",
    )
    assert response.status_code == 200, response.data
    return project, people, workers, item


def _revise(item, worker, end: int = 4):
    """The worker's annotation of the item sent back and revised."""
    annotation = Annotation.objects.filter(
        assignment__item=item, assignment__worker=worker, revisions__isnull=True
    ).get()
    revision = assignment_revision_create(annotation=annotation)
    return annotation_submit(
        assignment_id=revision.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [{"docid": item.documents.get().docid, "start_token": 0, "end_token": end}]
        ],
        time_spent_ms=5_000,
    ).annotation


def _state(project, people, item):
    return client_for(people["curator"]).get(
        reverse("qc:curation-item", args=[project.pk, item.pk])
    )


def _everywhere(project, people, item) -> dict:
    """Whether the item's gold is stale, as each page and list says it."""
    curator = client_for(people["curator"])
    queue = curator.get(reverse("qc:curation-queue", args=[project.pk]), {"state": "all"}).data
    [row] = [r for r in queue["results"] if r["id"] == item.pk]
    stale_queue = curator.get(reverse("qc:curation-queue", args=[project.pk]), {"state": "stale"})
    listed = client_for(people["admin"]).get(
        reverse("qc:item-list", args=[project.pk]), {"curation": "stale"}
    )
    detail = client_for(people["admin"]).get(reverse("qc:item-detail", args=[project.pk, item.pk]))
    return {
        "curation page": _state(project, people, item).data["curated"]["stale"],
        "queue row": row["curated_stale"],
        "queue filter": [r["id"] for r in stale_queue.data["results"]] == [item.pk],
        "progress": queue["progress"]["stale"] == 1,
        "data manager": [(r["id"], r["curated_stale"]) for r in listed.data["results"]]
        == [(item.pk, True)],
        "item page": detail.data["curated"]["stale"],
    }


def test_fresh_gold_is_not_stale_anywhere(curated):
    project, people, _, item = curated

    assert set(_everywhere(project, people, item).values()) == {False}


def test_a_revision_after_curation_makes_the_gold_stale_everywhere(curated):
    project, people, workers, item = curated
    gold_before = list(
        CuratedAnnotation.objects.get(item=item).sets.values_list("spans__end_token")
    )

    _revise(item, workers[0])

    assert set(_everywhere(project, people, item).values()) == {True}
    assert list(CuratedAnnotation.objects.get(item=item).sets.values_list("spans__end_token")) == (
        gold_before
    )
    # The other item, never curated, is not stale.
    other = item_of(project, "i0")
    assert _state(project, people, other).data["curated"] is None


def test_confirming_clears_it_until_the_next_change(curated):
    project, people, workers, item = curated
    _revise(item, workers[0])
    url = reverse("qc:curation-item-confirm", args=[project.pk, item.pk])

    response = client_for(people["curator"]).post(url, {"version": 1}, format="json")

    assert response.status_code == 200, response.data
    assert response.data["curated"]["stale"] is False
    assert response.data["curated"]["version"] == 1
    assert response.data["curated"]["confirmed_at"] is not None
    event = AuditEvent.objects.filter(project=project, action=AuditAction.CURATE).latest("pk")
    assert (event.actor, event.details["confirmed"]) == (people["curator"], True)
    _revise(item, workers[1])
    assert _state(project, people, item).data["curated"]["stale"] is True


def test_curating_again_clears_it(curated):
    project, people, workers, item = curated
    _revise(item, workers[0])

    response = client_for(people["curator"]).put(
        reverse("qc:curation-item", args=[project.pk, item.pk]),
        {"version": 1, "sets": [[{"docid": "d1", "start_token": 0, "end_token": 4}]]},
        format="json",
    )

    assert response.status_code == 200
    assert response.data["curated"]["stale"] is False
    assert CuratedAnnotation.objects.get(item=item).confirmed_at is None


def test_a_rule_curated_item_goes_stale_too(db):
    project, people, workers = make_curation_project(HIGHLIGHTS, annotators=2)
    item = item_of(project, "i0")
    client_for(people["curator"]).post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "unanimous"}, "ids": [item.pk]},
        format="json",
    )

    _revise(item, workers[1])

    assert _state(project, people, item).data["curated"]["stale"] is True


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({}, 400, "version"),
        ({"version": 0}, 400, "version"),
        ({"version": "1"}, 400, "version"),
        ({"version": 2}, 409, "version"),
    ],
)
def test_bad_confirmations_are_refused_naming_the_field(curated, body, status, field):
    project, people, _, item = curated

    response = client_for(people["curator"]).post(
        reverse("qc:curation-item-confirm", args=[project.pk, item.pk]), body, format="json"
    )

    assert response.status_code == status
    assert field in str(response.data)
    assert CuratedAnnotation.objects.get(item=item).confirmed_at is None


def test_an_item_without_gold_has_nothing_to_confirm(curated):
    project, people, _, _ = curated
    other = item_of(project, "i0")

    response = client_for(people["curator"]).post(
        reverse("qc:curation-item-confirm", args=[project.pk, other.pk]),
        {"version": 1},
        format="json",
    )

    assert response.status_code == 409
    assert "curate it first" in response.data["detail"]
