"""Curating through the API: an item's annotations side by side, the gold saved by hand
(never touching an annotator's work), a batch curated by rule, the queue and its progress."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Annotation, RationaleSpan
from qc.models import AuditAction, AuditEvent, CuratedAnnotation, CurationRequest
from tests.conftest import client_for
from tests.qc.curation_helpers import item_of, make_curation_project

pytestmark = pytest.mark.django_db

# i0: all three mark tokens 0-3 (agree); i1: three different spans (disagree);
# i2: two sets each, equal across annotators (agree, two sets).
HIGHLIGHTS = {
    "i0": [[[(0, 3)]], [[(0, 3)]], [[(0, 3)]]],
    "i1": [[[(0, 2)]], [[(5, 8)]], [[(1, 6)]]],
    "i2": [[[(0, 1)], [(6, 8)]], [[(6, 8)], [(0, 1)]], [[(0, 1)], [(6, 8)]]],
}


@pytest.fixture
def curation():
    return make_curation_project(HIGHLIGHTS)


def _item_url(project, item):
    return reverse("qc:curation-item", args=[project.pk, item.pk])


def test_the_state_shows_each_annotation_and_each_tokens_share(curation):
    project, people, workers = curation
    item = item_of(project, "i1")

    state = client_for(people["curator"]).get(_item_url(project, item)).data

    assert len(state["annotations"]) == 3
    assert {a["annotator"]["id"] for a in state["annotations"]} == {w.pk for w in workers}
    # Tokens 0,1 / 5,6,7 / 1..5: token 1 is marked by two of three, token 5 by two.
    shares = state["shares"]
    assert shares[0] == pytest.approx(1 / 3)
    assert shares[1] == pytest.approx(2 / 3)
    assert shares[5] == pytest.approx(2 / 3)
    assert shares[8] == 0
    assert state["curated"] is None
    assert state["item"]["documents"][0]["first_token"] == 0


def test_saving_by_hand_stores_the_gold_and_leaves_the_annotations_as_they_were(curation):
    project, people, _ = curation
    item = item_of(project, "i1")
    spans_before = sorted(
        RationaleSpan.objects.filter(rationale_set__annotation__assignment__item=item).values_list(
            "rationale_set__annotation_id", "start_token", "end_token"
        )
    )
    body = {
        "version": 0,
        "sets": [
            [{"docid": "d1", "start_token": 1, "end_token": 3}],
            [{"docid": "d1", "start_token": 5, "end_token": 7}],
        ],
        "label": "pos",
    }

    response = client_for(people["curator"]).put(_item_url(project, item), body, format="json")

    assert response.status_code == 200, response.data
    curated = response.data["curated"]
    assert curated["version"] == 1 and curated["rule"] == "hand"
    assert curated["sets"] == [
        {"position": 0, "tokens": {"d1": [1, 2]}},
        {"position": 1, "tokens": {"d1": [5, 6]}},
    ]
    assert curated["curator"]["id"] == people["curator"].pk
    assert len(curated["sources"]) == 3
    spans_after = sorted(
        RationaleSpan.objects.filter(rationale_set__annotation__assignment__item=item).values_list(
            "rationale_set__annotation_id", "start_token", "end_token"
        )
    )
    assert spans_after == spans_before
    event = AuditEvent.objects.get(project=project, action=AuditAction.CURATE)
    assert event.actor == people["curator"]
    assert event.details["sets"] == [[["d1", 1, 3]], [["d1", 5, 7]]]


def test_a_stale_version_is_refused_with_the_current_one(curation):
    project, people, _ = curation
    item = item_of(project, "i1")
    body = {"version": 0, "sets": [[{"docid": "d1", "start_token": 1, "end_token": 3}]]}
    first = client_for(people["curator"]).put(_item_url(project, item), body, format="json")
    assert first.status_code == 200

    second = client_for(people["admin"]).put(_item_url(project, item), body, format="json")

    assert second.status_code == 409
    assert second.data["version"] == 1
    assert "version" in second.data["detail"]
    again = client_for(people["admin"]).put(
        _item_url(project, item), {**body, "version": 1}, format="json"
    )
    assert again.status_code == 200
    assert again.data["curated"]["version"] == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sets": []}, "version"),
        ({"version": -1, "sets": []}, "version"),
        ({"version": 0, "sets": [[{"docid": "d9", "start_token": 0, "end_token": 1}]]}, "docid"),
        (
            {"version": 0, "sets": [[{"docid": "d1", "start_token": 0, "end_token": 99}]]},
            "end_token",
        ),
        ({"version": 0, "sets": [], "label": "maybe"}, "label"),
        ({"version": 0, "sets": [], "sources": [999999]}, "sources"),
        ({"version": 0, "sets": [], "answer": {"text": "a plot"}}, "answer"),
        (
            {
                "version": 0,
                "sets": [[{"docid": "d1", "start_token": 0, "end_token": 2}]] * 2000,
            },
            "sets",
        ),
    ],
)
def test_bad_input_is_refused_naming_the_field(curation, body, field):
    project, people, _ = curation
    item = item_of(project, "i1")

    response = client_for(people["curator"]).put(_item_url(project, item), body, format="json")

    assert response.status_code == 400
    assert field in str(response.data)
    assert not CuratedAnnotation.objects.exists()


def test_an_item_of_another_project_is_not_found(curation):
    project, people, _ = curation
    other, _, _ = make_curation_project({"i0": HIGHLIGHTS["i0"]})

    response = client_for(people["curator"]).get(
        reverse("qc:curation-item", args=[project.pk, item_of(other, "i0").pk])
    )

    assert response.status_code == 404


def test_auto_merge_curates_agreeing_items_and_says_why_it_skipped_the_others(curation):
    project, people, _ = curation
    ids = [item_of(project, a).pk for a in ("i0", "i1", "i2")]

    response = client_for(people["curator"]).post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "unanimous"}, "ids": ids},
        format="json",
    )

    assert response.status_code == 200, response.data
    assert response.data == {
        "rule": "unanimous",
        "matched": 3,
        "merged": 2,
        "skipped": 1,
        "skipped_because": {"annotators disagree": 1},
    }
    i2 = CuratedAnnotation.objects.get(item__annotation_id="i2", item__project=project)
    assert i2.rule == "unanimous"
    spans = sorted(
        (row.curated_set.position, row.start_token, row.end_token)
        for curated_set in i2.sets.all()
        for row in curated_set.spans.all()
    )
    assert spans == [(0, 0, 1), (1, 6, 8)]
    assert i2.sources.count() == 3
    event = AuditEvent.objects.get(project=project, action=AuditAction.CURATE)
    assert event.details["merged"] == 2 and event.details["chosen_by"] == {"ids": ids}

    # A second pass changes nothing: curated items are left as they are.
    again = client_for(people["curator"]).post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "kappa", "threshold": -1, "merge": "union"}, "ids": ids},
        format="json",
    )
    assert again.data["skipped_because"]["already curated"] == 2
    assert again.data["merged"] == 1
    i1 = CuratedAnnotation.objects.get(item__annotation_id="i1", item__project=project)
    assert i1.rule == "kappa>=-1:union"


def test_auto_merge_by_filter_takes_the_items_the_filter_matches(curation):
    project, people, _ = curation

    response = client_for(people["admin"]).post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "unanimous"}, "filter": "split=train"},
        format="json",
    )

    assert response.status_code == 200, response.data
    assert response.data["matched"] == 3
    by_queue = client_for(people["admin"]).post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "unanimous"}, "queue": "state=uncurated&order=id"},
        format="json",
    )
    assert by_queue.status_code == 200, by_queue.data
    assert by_queue.data["matched"] == 1  # i1: the two others were curated just above
    assert by_queue.data["skipped_because"] == {"annotators disagree": 1}
    bad_queue = client_for(people["admin"]).post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "unanimous"}, "queue": "order=random"},
        format="json",
    )
    assert bad_queue.status_code == 400 and "queue: order" in bad_queue.data["detail"]
    bad = client_for(people["admin"]).post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "unanimous"}, "filter": "colour=red"},
        format="json",
    )
    assert bad.status_code == 400 and "colour" in bad.data["detail"]


def test_auto_merge_refuses_ids_and_filter_together_and_bad_rules(curation):
    project, people, _ = curation
    url = reverse("qc:curation-auto-merge", args=[project.pk])
    client = client_for(people["curator"])

    both = client.post(url, {"rule": {}, "ids": [1], "filter": ""}, format="json")
    bad_test = client.post(url, {"rule": {"test": "vibes"}, "ids": [1]}, format="json")
    bad_threshold = client.post(
        url, {"rule": {"test": "f1", "threshold": 7}, "ids": [1]}, format="json"
    )

    assert both.status_code == 400 and "ids" in both.data
    assert bad_test.status_code == 400 and "test" in str(bad_test.data)
    assert bad_threshold.status_code == 400 and "threshold" in str(bad_threshold.data)


def test_the_queue_puts_most_disagreement_first_and_counts_progress(curation):
    project, people, _ = curation
    client = client_for(people["curator"])
    url = reverse("qc:curation-queue", args=[project.pk])

    queue = client.get(url).data

    assert queue["results"][0]["annotation_id"] == "i1"
    assert queue["count"] == 3
    assert queue["progress"] == {
        "items": 3,
        "curated_by_hand": 0,
        "curated_by_rule": 0,
        "left": 3,
        "stale": 0,
        "queued": 0,
        "queued_left": 0,
    }
    client.post(
        reverse("qc:curation-auto-merge", args=[project.pk]),
        {"rule": {"test": "unanimous"}, "ids": [item_of(project, "i0").pk]},
        format="json",
    )
    after = client.get(url).data
    assert after["count"] == 2
    assert after["progress"]["curated_by_rule"] == 1
    assert client.get(url, {"state": "curated"}).data["count"] == 1
    assert client.get(url, {"colour": "red"}).status_code == 400
    assert client.get(url, {"order": "random"}).status_code == 400
    assert client.get(url, {"flag": "nonsense"}).status_code == 400
    assert client.get(url, {"page_size": 1000}).status_code == 400


def test_curation_start_puts_items_into_the_pass(curation):
    from annotate.services.item_bulk_actions import ITEM_BULK_ACTIONS

    project, people, _ = curation
    ids = [item_of(project, "i1").pk]

    touched = ITEM_BULK_ACTIONS["curation_start"](project, ids, people["admin"], {})
    again = ITEM_BULK_ACTIONS["curation_start"](project, ids, people["admin"], {})

    assert (touched, again) == (1, 0)
    assert CurationRequest.objects.filter(item_id__in=ids).count() == 1
    queue = (
        client_for(people["curator"])
        .get(reverse("qc:curation-queue", args=[project.pk]), {"queued": "true"})
        .data
    )
    assert [row["id"] for row in queue["results"]] == ids
    assert Annotation.objects.count() == 9


def test_a_reading_comprehension_item_takes_a_gold_answer():
    project, people, _ = make_curation_project(
        {"i0": HIGHLIGHTS["i0"]}, task_type="reading_comprehension"
    )
    item = item_of(project, "i0")
    client = client_for(people["curator"])

    saved = client.put(
        _item_url(project, item),
        {"version": 0, "sets": [], "answer": {"text": "a rather good film"}},
        format="json",
    )
    none = client.put(
        _item_url(project, item),
        {"version": 1, "sets": [], "answer": {"none": True}},
        format="json",
    )
    bad = client.put(
        _item_url(project, item), {"version": 2, "sets": [], "answer": {"text": " "}}, format="json"
    )

    assert saved.status_code == 200 and saved.data["curated"]["answer"] == {
        "text": "a rather good film"
    }
    assert none.status_code == 200 and none.data["curated"]["answer"] == {"none": True}
    assert bad.status_code == 400 and "answer" in bad.data["detail"]


@pytest.mark.parametrize("url_name", ["qc:curation-queue", "qc:curation-item"])
def test_the_queries_do_not_grow_with_the_items(url_name):
    """The queue page and one item's state each read in a fixed number of queries."""

    def queries(n_items: int) -> int:
        highlights = {f"i{n}": HIGHLIGHTS[f"i{n % 3}"] for n in range(n_items)}
        project, people, _ = make_curation_project(highlights)
        client = client_for(people["curator"])
        args = (
            [project.pk]
            if url_name == "qc:curation-queue"
            else [project.pk, item_of(project, "i1").pk]
        )
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse(url_name, args=args)).status_code == 200
        return len(captured)

    assert queries(6) == queries(3)
