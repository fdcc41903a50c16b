"""Property: the data manager's list, for any combination of filters and any sort, is the
same rows in the same order as a plain Python filter and sort of the same rows."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.db import transaction
from django.http import QueryDict
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.models import Item, Project
from qc.filters import ORDERING_FIELDS, ItemListFilter
from qc.item_list_selectors import item_list_items
from qc.models import ItemStatus, ItemSummary
from tests.hypothesis_budget import examples

ITEMS = 40
BASE = timezone.now().replace(microsecond=0)
LABELS = ["neg", "pos", "neutral"]
SPLITS = ["train", "val", "test", ""]


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    rng = random.Random(11)
    with django_db_blocker.unblock(), transaction.atomic():
        project = Project.objects.create(name="property", labels=LABELS)
        other = Project.objects.create(name="property-other", labels=LABELS)
        rows = []
        for owner in (project, other):
            items = Item.objects.bulk_create(
                Item(
                    project=owner,
                    annotation_id=f"a{rng.randrange(1000):03d}-{n}",
                    label=rng.choice(LABELS),
                    split=rng.choice(SPLITS),
                )
                for n in range(ITEMS)
            )
            for item in items:
                # Few distinct values, so that ties and nulls are common.
                summary = ItemSummary(
                    item=item,
                    project=owner,
                    status=rng.choice(ItemStatus.values),
                    submitted=rng.randint(0, 3),
                    kappa=rng.choice([None, -0.5, 0.0, 0.25, 0.5, 1.0]),
                    f1=rng.choice([None, 0.0, 0.5, 1.0]),
                    open_flags=rng.choice([0, 0, 1, 2]),
                    review_score=rng.choice([None, 0.25, 0.75]),
                    majority_label=rng.choice([None, *LABELS]),
                    last_activity=rng.choice([None, BASE, BASE - timedelta(days=1)]),
                )
                summary.save()
                if owner == project:
                    rows.append(
                        {
                            "id": item.pk,
                            "annotation_id": item.annotation_id,
                            "split": item.split,
                            "label": item.label,
                            **{
                                name: getattr(summary, name)
                                for name in (
                                    "status",
                                    "submitted",
                                    "kappa",
                                    "f1",
                                    "open_flags",
                                    "review_score",
                                    "majority_label",
                                    "last_activity",
                                )
                            },
                        }
                    )
        yield project, rows
        transaction.set_rollback(True)


def _some(values):
    return st.lists(st.sampled_from(values), min_size=1, max_size=3, unique=True)


def _bound(values):
    return st.one_of(st.none(), st.sampled_from(values))


queries = st.fixed_dictionaries(
    {},
    optional={
        "status": _some(ItemStatus.values),
        "split": _some(["train", "val", "test", "unassigned"]),
        "label": _some(LABELS),
        "majority_label": _some(LABELS),
        "flag": st.sampled_from(["any", "none"]),
        "kappa": st.tuples(_bound([-1.0, 0.0, 0.25, 0.5]), _bound([0.0, 0.5, 1.0])),
        "f1": st.tuples(_bound([0.0, 0.5]), _bound([0.5, 1.0])),
        "review_score": st.tuples(_bound([0.0, 0.5]), _bound([0.5, 1.0])),
        "submitted": st.tuples(_bound([0, 1, 2]), _bound([1, 2, 3])),
        "last_activity": st.tuples(
            _bound([BASE - timedelta(days=2), BASE]), _bound([BASE - timedelta(hours=1), BASE])
        ),
        "ordering": st.sampled_from([f"{s}{c}" for c in ORDERING_FIELDS for s in ("", "-")]),
    },
)


def _query_string(query: dict) -> QueryDict:
    data = QueryDict(mutable=True)
    for name, value in query.items():
        if name in ("status", "split", "label", "majority_label"):
            data[name] = ",".join(value)
        elif name in ("flag", "ordering"):
            data[name] = value
        else:
            low, high = value
            low_name, high_name = (
                ("last_activity_after", "last_activity_before")
                if name == "last_activity"
                else (f"{name}_min", f"{name}_max")
            )
            if low is not None:
                data[low_name] = low.isoformat() if name == "last_activity" else str(low)
            if high is not None:
                data[high_name] = high.isoformat() if name == "last_activity" else str(high)
    return data


def _python_list(rows: list[dict], query: dict) -> list[int]:
    def keep(row) -> bool:
        for name in ("status", "label", "majority_label"):
            if name in query and row[name] not in query[name]:
                return False
        if "split" in query and (row["split"] or "unassigned") not in query["split"]:
            return False
        if query.get("flag") == "any" and not row["open_flags"]:
            return False
        if query.get("flag") == "none" and row["open_flags"]:
            return False
        for name in ("kappa", "f1", "review_score", "submitted", "last_activity"):
            if name not in query:
                continue
            low, high = query[name]
            value = row[name]
            if (low is not None or high is not None) and value is None:
                return False
            if low is not None and value < low:
                return False
            if high is not None and value > high:
                return False
        return True

    kept = [row for row in rows if keep(row)]
    ordering = query.get("ordering", "id")
    column = ordering.lstrip("-")
    descending = ordering.startswith("-")

    def key(row):
        value = row[column]
        # PostgreSQL and SQLite alike here: nulls sort as the largest value.
        return (value is None, value if value is not None else 0, row["id"])

    return [row["id"] for row in sorted(kept, key=key, reverse=descending)]


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(query=queries)
def test_the_list_is_a_plain_filter_and_sort_of_the_rows(world, db, query):
    project, rows = world
    data = _query_string(query)
    bounds_ok = all(
        not (isinstance(query.get(n), tuple) and None not in query[n] and query[n][0] > query[n][1])
        for n in ("kappa", "f1", "review_score", "submitted", "last_activity")
    )

    filters = ItemListFilter(data=data, queryset=item_list_items(project=project))

    assert filters.is_valid() is bounds_ok, filters.errors
    if bounds_ok:
        assert list(filters.qs.values_list("pk", flat=True)) == _python_list(rows, query)
