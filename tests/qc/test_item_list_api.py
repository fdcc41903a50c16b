"""The data manager's list (GET /api/projects/{id}/items/): every filter, sort, search and
page, bad input, who may read it, and that deleted items never show."""

import pytest
from django.utils import timezone

from annotate.models import Item
from qc.item_list_selectors import COUNT_EXACT_LIMIT
from tests.qc.data_manager_helpers import flag, make_world, refresh, variant_ids, work_on


@pytest.fixture
def world(db):
    world = make_world(items=8)
    first, second, _third = world.annotators
    # Bound to variants by the allocator; each submits on the items "next" gives.
    world.work = {
        "first": work_on(world, first, 3, tokens=2),
        "second": work_on(world, second, 2, tokens=4),
    }
    flag(world.work["first"][0], "too_fast")
    flag(world.work["second"][0], "empty")
    return world


def ids(response) -> list[int]:
    assert response.status_code == 200, response.json()
    return [row["id"] for row in response.json()["results"]]


def all_ids(world) -> list[int]:
    return [item.pk for item in world.items]


def summaries(world) -> dict:
    refresh(world)
    return {row["id"]: row for row in world.list(page_size=200).json()["results"]}


def test_the_list_shows_every_column_of_the_contract(world):
    row = world.list().json()["results"][0]

    assert set(row) == {
        "id",
        "annotation_id",
        "split",
        "label",
        "majority_label",
        "texts",
        "query_preview",
        "status",
        "variants",
        "submitted",
        "annotators",
        "kappa",
        "f1",
        "open_flags",
        "flag_kinds",
        "review_score",
        "perturbation",
        "excluded",
        "marked_gold",
        "curated",
        "curated_stale",
        "last_activity",
    }
    assert row["query_preview"] == "Is item 0 about a dog?"
    assert set(row["perturbation"]) == {"role", "types", "original_id", "perturbed_ids"}


def test_without_parameters_the_list_is_every_item_by_id(world):
    response = world.list()

    assert ids(response) == all_ids(world)
    assert response.json()["count"] == 8
    assert response.json()["count_is_estimate"] is False


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"split": "train"}, lambda items: [i for i in items if i.split == "train"]),
        ({"split": "val,unassigned"}, lambda items: [i for i in items if i.split in ("val", "")]),
        ({"label": "neg"}, lambda items: [i for i in items if i.label == "neg"]),
        ({"search": "dog"}, lambda items: [i for i in items if "dog" in i.query]),
        ({"search": "rather good film"}, lambda items: items),
        ({"search": "zebra"}, lambda items: []),
    ],
)
def test_item_column_filters(world, query, expected):
    assert ids(world.list(**query)) == [i.pk for i in expected(world.items)]


def test_derived_column_filters_match_the_summaries(world):
    rows = summaries(world)

    def where(test):
        return sorted(pk for pk, row in rows.items() if test(row))

    assert ids(world.list(status="in_progress")) == where(lambda r: r["status"] == "in_progress")
    assert ids(world.list(status="waiting,in_progress")) == where(
        lambda r: r["status"] in ("waiting", "in_progress")
    )
    assert ids(world.list(submitted_min=1)) == where(lambda r: r["submitted"] >= 1)
    assert ids(world.list(submitted_min=2, submitted_max=2)) == where(lambda r: r["submitted"] == 2)
    assert ids(world.list(flag="any")) == where(lambda r: r["open_flags"] > 0)
    assert ids(world.list(flag="none")) == where(lambda r: r["open_flags"] == 0)
    assert ids(world.list(flag="empty")) == where(lambda r: "empty" in r["flag_kinds"])
    assert ids(world.list(flag="empty,too_fast")) == where(lambda r: r["flag_kinds"])
    pair = where(lambda r: r["kappa"] is not None)
    assert ids(world.list(f1_min=0)) == pair
    assert ids(world.list(kappa_min=-1, kappa_max=1)) == pair
    assert ids(world.list(review_score_min=0)) == []
    later = timezone.now() + timezone.timedelta(minutes=1)
    assert ids(world.list(last_activity_after=later.isoformat())) == []
    assert ids(world.list(last_activity_before=later.isoformat())) == where(
        lambda r: r["last_activity"] is not None
    )


def test_people_and_variant_filters(world):
    first, second, third = world.annotators
    rows = summaries(world)
    by_first = sorted(a.assignment.item_id for a in world.work["first"])

    assert ids(world.list(annotator=first.pk)) == by_first
    assert ids(world.list(annotator=f"{first.pk},{second.pk}")) == sorted(
        pk for pk, row in rows.items() if row["submitted"]
    )
    assert ids(world.list(annotator=third.pk)) == []
    variants = variant_ids(world)
    used = {a.assignment.variant_id for a in world.work["first"]}
    (variant_id,) = used
    assert ids(world.list(variant=variant_id)) == sorted(
        pk
        for pk, row in rows.items()
        if any(v["id"] == variant_id and v["submitted"] for v in row["variants"])
    )
    unused = [
        pk
        for pk in variants.values()
        if pk not in {a.assignment.variant_id for work in world.work.values() for a in work}
    ]
    for pk in unused:
        assert ids(world.list(variant=pk)) == []


def test_majority_label_filter(world):
    Item.objects.filter(pk=world.items[0].pk)
    from annotate.models import Annotation

    Annotation.objects.filter(pk=world.work["first"][0].pk).update(label="pos")
    refresh_ids = [world.work["first"][0].assignment.item_id]
    from qc.services.item_summaries import item_summaries_refresh

    item_summaries_refresh(project=world.project, item_ids=refresh_ids)

    assert ids(world.list(majority_label="pos")) == refresh_ids
    assert ids(world.list(majority_label="neg")) == []


def test_perturbation_filters(world):
    original, other = world.items[0], world.items[1]
    copy = Item.objects.create(
        project=world.project,
        annotation_id="copy",
        perturbation_of=original,
        perturbation_types=["negation"],
        label="neg",
    )
    refresh(world)

    assert ids(world.list(perturbation="perturbed")) == [copy.pk]
    assert ids(world.list(perturbation="original")) == [original.pk]
    assert other.pk in ids(world.list(perturbation="none"))
    assert copy.pk not in ids(world.list(perturbation="none", page_size=200))
    assert ids(world.list(perturbation_type="negation")) == [copy.pk]
    assert ids(world.list(perturbation_type="syntax")) == []
    row = next(r for r in world.list(perturbation="original").json()["results"])
    assert row["perturbation"] == {
        "role": "original",
        "types": ["negation"],
        "original_id": None,
        "perturbed_ids": [copy.pk],
    }


def test_filters_combine_with_and(world):
    rows = summaries(world)
    expected = sorted(
        pk
        for pk, row in rows.items()
        if row["split"] == "train" and row["submitted"] >= 1 and row["label"] == "pos"
    )

    assert ids(world.list(split="train", submitted_min=1, label="pos")) == expected


@pytest.mark.parametrize(
    "column",
    [
        "id",
        "annotation_id",
        "split",
        "label",
        "status",
        "submitted",
        "kappa",
        "f1",
        "open_flags",
        "review_score",
        "last_activity",
    ],
)
def test_every_column_sorts_both_ways_with_ties_by_id(world, column):
    rows = summaries(world)

    def key(row):
        value = row[column]
        # PostgreSQL puts nulls last going up, first going down.
        return (value is None, value if value is not None else 0)

    ascending = sorted(rows.values(), key=lambda r: (key(r), r["id"]))
    descending = sorted(rows.values(), key=lambda r: (key(r), r["id"]), reverse=True)

    if column == "id":
        assert ids(world.list(ordering="id")) == [r["id"] for r in ascending]
    assert [r["id"] for r in world.list(ordering=column, page_size=200).json()["results"]] == [
        r["id"] for r in ascending
    ]
    assert [
        r["id"] for r in world.list(ordering=f"-{column}", page_size=200).json()["results"]
    ] == [r["id"] for r in descending]


def test_pages(world):
    first = world.list(page_size=3).json()
    second = world.client().get(first["next"]).json()
    last = world.list(page_size=3, page=3).json()

    assert first["count"] == 8 and first["previous"] is None
    assert [r["id"] for r in first["results"]] == all_ids(world)[:3]
    assert [r["id"] for r in second["results"]] == all_ids(world)[3:6]
    assert "page=1" not in second["previous"] and "page_size=3" in second["previous"]
    assert [r["id"] for r in last["results"]] == all_ids(world)[6:]
    assert last["next"] is None
    assert world.list(page=9).json()["results"] == []


def test_a_large_count_is_estimated_and_says_so(world, monkeypatch):
    from qc import item_list_selectors

    monkeypatch.setattr(item_list_selectors, "COUNT_EXACT_LIMIT", 3)
    response = world.list(page_size=2).json()

    assert COUNT_EXACT_LIMIT > 3
    assert response["count"] >= 4
    from django.db import connection

    assert response["count_is_estimate"] is (connection.vendor == "postgresql")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"status": "finished"}, "status"),
        ({"split": "dev"}, "split"),
        ({"variant": "abc"}, "variant"),
        ({"annotator": "0"}, "annotator"),
        ({"flag": "any,empty"}, "flag"),
        ({"flag": "sloppy"}, "flag"),
        ({"perturbation": "both"}, "perturbation"),
        ({"kappa_min": "high"}, "kappa_min"),
        ({"kappa_min": "0.5", "kappa_max": "0.1"}, "kappa_max"),
        ({"f1_min": "1", "f1_max": "0"}, "f1_max"),
        ({"review_score_min": "1", "review_score_max": "0"}, "review_score_max"),
        ({"submitted_min": "3", "submitted_max": "1"}, "submitted_max"),
        ({"submitted_min": "-1"}, "submitted_min"),
        ({"submitted_min": "1.5"}, "submitted_min"),
        ({"last_activity_after": "yesterday"}, "last_activity_after"),
        (
            {
                "last_activity_after": "2026-01-02T00:00:00Z",
                "last_activity_before": "2026-01-01T00:00:00Z",
            },
            "last_activity_before",
        ),
        ({"ordering": "colour"}, "ordering"),
        ({"ordering": "--id"}, "ordering"),
        ({"page": "0"}, "page"),
        ({"page": "x"}, "page"),
        ({"page_size": "201"}, "page_size"),
        ({"search": "x" * 501}, "search"),
        ({"label": ",".join(["x"] * 201)}, "label"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(world, query, field):
    response = world.list(**query)

    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_a_parameter_given_twice_is_refused(world):
    response = world.client().get(world.url() + "?split=train&split=val")

    assert response.status_code == 400
    assert "split" in response.json()


def test_deleted_items_never_show(world):
    gone = world.items[0]
    Item.objects.filter(pk=gone.pk).update(deleted_at=timezone.now())

    assert gone.pk not in ids(world.list(page_size=200))
    assert world.list().json()["count"] == 7


def test_a_deleted_project_is_not_found(world):
    type(world.project).objects.filter(pk=world.project.pk).update(deleted_at=timezone.now())

    assert world.list().status_code == 404


def test_new_work_shows_on_the_next_load(world):
    (annotation,) = work_on(world, world.annotators[2], 1)
    item_id = annotation.assignment.item_id

    assert item_id in ids(world.list(annotator=world.annotators[2].pk))


@pytest.mark.parametrize(("who", "status"), [("admin", 200), ("researcher", 200), ("curator", 200)])
def test_admins_researchers_and_curators_read_it(world, who, status):
    assert world.list(who).status_code == status


def test_a_page_costs_a_fixed_number_of_queries(world, monkeypatch, django_assert_max_num_queries):
    from qc.services import item_summaries

    monkeypatch.setattr(item_summaries, "COMMIT_GRACE", timezone.timedelta(0))
    world.list()  # brings the summaries up to date; nothing changes after it
    # A refresh that finds nothing new (watermark, six id scans, leases that ran out),
    # the page, its perturbation links, and the count.
    with django_assert_max_num_queries(15):
        response = world.list(page_size=2, ordering="-kappa", status="in_progress,waiting")
    assert response.status_code == 200
