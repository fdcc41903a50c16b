"""Qualification in words: gold items picked from a searchable list of the project's
items, candidates' answers carried with the item's text so the admin sees words, and a
failed attempt told to the worker before the next begins."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.models import Assignment, Document, InstructionVariant, Item
from qc.models import GoldItem
from qc.selectors import GOLD_SEARCH_MAX_LENGTH
from tests.conftest import client_for
from tests.qc.test_qualification import GOLD, take_test, test_project, worker  # noqa: F401

pytestmark = pytest.mark.django_db


def _choices(user, project, **query):
    return client_for(user).get(reverse("qc:gold-item-choices", args=[project.id]), query)


def test_the_admin_finds_items_by_id_or_text_a_page_at_a_time(test_project):  # noqa: F811
    project, people, golds = test_project
    Document.objects.filter(docid="d3").update(text="A quiet harbour at dawn .")

    everything = _choices(people["admin"], project, limit=3)
    assert everything.status_code == 200
    assert everything.data["count"] == 4 and len(everything.data["results"]) == 3
    first = everything.data["results"][0]
    # The gold already chosen comes first, with what decides whether an item can be gold.
    assert first["annotation_id"] == golds[0].annotation_id
    assert (first["is_gold"], first["has_reference"], first["served"]) == (True, True, False)
    assert first["preview"].startswith("Item number 0 is a rather good film")
    second_page = _choices(people["admin"], project, limit=3, offset=3).data["results"]
    assert [r["annotation_id"] for r in second_page] == ["i3"]
    assert [r["has_reference"] for r in second_page] == [False]

    by_text = _choices(people["admin"], project, search="HARBOUR").data
    assert [r["annotation_id"] for r in by_text["results"]] == ["i3"]
    by_id = _choices(people["admin"], project, search="i2").data
    assert [r["annotation_id"] for r in by_id["results"]] == ["i2"]
    assert _choices(people["admin"], project, search="nowhere at all").data["count"] == 0


def test_an_item_served_as_work_says_so(test_project):  # noqa: F811
    project, people, _golds = test_project
    served = Item.objects.get(project=project, annotation_id="i2")
    Assignment.objects.create(
        item=served,
        worker=people["annotator"],
        variant=InstructionVariant.objects.filter(project=project).first(),
        round=1,
        slot=0,
        lease_expires_at=timezone.now(),
    )
    row = next(
        r for r in _choices(people["admin"], project).data["results"] if r["annotation_id"] == "i2"
    )
    assert row["served"] is True


@pytest.mark.parametrize("role", ["reviewer1", "researcher", "annotator", "outsider"])
def test_only_the_projects_admins_list_the_items_to_pick_gold_from(test_project, role):  # noqa: F811
    project, people, _ = test_project

    # A member without the role is refused (403); a non-member is not told the project exists.
    assert _choices(people[role], project).status_code == (404 if role == "outsider" else 403)


def test_bad_search_and_paging_are_refused_by_name(test_project):  # noqa: F811
    project, people, _ = test_project

    too_long = _choices(people["admin"], project, search="x" * (GOLD_SEARCH_MAX_LENGTH + 1))
    assert too_long.status_code == 400 and "search" in str(too_long.data)
    nul = _choices(people["admin"], project, search="film\x00")
    assert nul.status_code == 400 and "NUL" in str(nul.data)
    bad_offset = _choices(people["admin"], project, offset="abc")
    assert bad_offset.status_code == 400 and "offset" in str(bad_offset.data)


def test_candidates_answers_carry_the_items_text_for_the_word_view(test_project):  # noqa: F811
    project, people, _golds = test_project
    candidate = worker(project, "candidate")
    take_test(project, candidate, [GOLD, (0, 2)])

    data = client_for(people["admin"]).get(reverse("qc:candidate-list", args=[project.id])).data
    answers = data["candidates"][0]["attempts"][0]["answers"]
    first = answers[0]
    (document,) = first["documents"]
    assert document["text"].startswith("Item number 0 is a rather good film")
    assert len(document["tokens"]) == Document.objects.get(docid=document["docid"]).token_count
    assert first["tokens"] == {document["docid"]: [5, 6, 7]}
    assert first["gold"] == {document["docid"]: [5, 6, 7]}


def test_a_failed_first_attempt_is_told_before_the_second_begins(test_project):  # noqa: F811
    project, _people, _ = test_project
    candidate = worker(project, "guesser")
    client = client_for(candidate)

    first = client.post(reverse("qc:qualification-next", args=[project.id])).data
    assert first["test"]["previous_failed"] is None
    take_test(project, candidate, [(0, 2), (0, 2)])

    second = client.post(reverse("qc:qualification-next", args=[project.id])).data
    assert second["test"]["attempt"] == 2
    assert second["test"]["previous_failed"] == {
        "number": 1,
        "mean_f1": 0.0,
        "pass_mark": 0.6,
        "attempts_left": 1,
    }
    assert GoldItem.objects.filter(pk=second["id"]).exists()
