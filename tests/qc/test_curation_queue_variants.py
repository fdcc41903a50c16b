"""The curation queue under a variant filter orders its items by the agreement among the
chosen variants' annotations, the one its rows show, not by the agreement over all of an
item's annotations; summaries written before they held it are written again by beat's
sweep."""

import pytest
from django.urls import reverse

from annotate.models import Assignment, InstructionVariant
from qc.curation_selectors import queue_filter_from, queue_items, queue_ordered
from qc.models import ItemSummary
from qc.services.item_summaries import item_summaries_complete, item_summaries_refresh
from tests.conftest import client_for
from tests.qc.curation_helpers import item_of, make_curation_project

pytestmark = pytest.mark.django_db

# Four annotators an item; the first two work under variant a, the last two under b.
# i0: a's two agree exactly, b's two mark elsewhere, apart: the item as a whole disagrees
#    most, and so does b, but a agrees perfectly.
# i1: a's two overlap in part, and so do b's, each like one of a's: the item as a whole
#    agrees more than i0, a less than i0's.
HIGHLIGHTS = {
    "i0": [[[(0, 3)]], [[(0, 3)]], [[(5, 8)]], [[(9, 12)]]],
    "i1": [[[(0, 3)]], [[(1, 4)]], [[(0, 3)]], [[(1, 4)]]],
}


@pytest.fixture
def world():
    project, people, workers = make_curation_project(HIGHLIGHTS, annotators=4, variants=("a",))
    a = project.variants.get()
    b = InstructionVariant.objects.create(project=project, name="b", text="Highlight.")
    Assignment.objects.filter(item__project=project, worker__in=workers[2:]).update(variant=b)
    item_summaries_refresh(project=project, item_ids=project.items.values_list("pk", flat=True))
    return project, people, a, b


def _queue(world, **query) -> list[dict]:
    project, people, _, _ = world
    response = client_for(people["curator"]).get(
        reverse("qc:curation-queue", args=[project.pk]), query
    )
    assert response.status_code == 200, response.data
    return response.data["results"]


def test_without_a_variant_the_queue_orders_by_all_annotations(world):
    rows = _queue(world)

    assert [row["annotation_id"] for row in rows] == ["i0", "i1"]
    assert rows[0]["kappa"] < rows[1]["kappa"]


def test_a_variant_orders_the_queue_by_its_own_annotations_agreement(world):
    _, _, a, b = world

    under_a = _queue(world, variant=a.pk)
    under_b = _queue(world, variant=b.pk)

    # Under a, i1 disagrees more (i0's two agree exactly): the opposite of the whole items.
    assert [row["annotation_id"] for row in under_a] == ["i1", "i0"]
    assert under_a[0]["kappa"] < under_a[1]["kappa"] == pytest.approx(1.0)
    assert all(row["annotations"] == 2 and row["variants"] == ["a"] for row in under_a)
    assert [row["annotation_id"] for row in under_b] == ["i0", "i1"]
    assert under_b[0]["kappa"] < under_b[1]["kappa"]


def test_two_variants_order_the_queue_as_their_annotations_together(world):
    _, _, a, b = world

    rows = _queue(world, variant=f"{a.pk},{b.pk}")

    assert [row["annotation_id"] for row in rows] == ["i0", "i1"]
    assert all(row["annotations"] == 4 for row in rows)


def test_the_order_follows_the_agreement_the_rows_show(world):
    _, _, a, _ = world

    rows = _queue(world, variant=a.pk, state="all", page_size=1) + _queue(
        world, variant=a.pk, state="all", page_size=1, page=2
    )

    assert [row["annotation_id"] for row in rows] == ["i1", "i0"]
    assert [row["kappa"] for row in rows] == sorted(row["kappa"] for row in rows)


def test_a_summary_without_the_sums_by_variant_goes_last_until_the_sweep_writes_it(world):
    project, _, a, _ = world
    ItemSummary.objects.filter(item=item_of(project, "i1")).update(variant_pairs=None)
    chosen = queue_filter_from({"variant": str(a.pk)})

    def in_order() -> list[str]:
        # The selectors, not the API: a request first refreshes the summaries of young rows.
        items = queue_ordered(queue_items(project=project, chosen=chosen), chosen)
        return list(items.values_list("annotation_id", flat=True))

    before = in_order()
    written = item_summaries_complete(project=project)
    after = in_order()

    # Without its sums, i1's agreement under a is unknown: after every known one.
    assert before == ["i0", "i1"]
    assert written == 1
    assert after == ["i1", "i0"]
    assert item_summaries_complete(project=project) == 0


def test_too_many_variants_are_refused_naming_the_filter(world):
    project, people, _, _ = world

    response = client_for(people["curator"]).get(
        reverse("qc:curation-queue", args=[project.pk]),
        {"variant": ",".join(str(n) for n in range(1, 30))},
    )

    assert response.status_code == 400 and "variant" in str(response.data)
