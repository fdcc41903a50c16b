"""A large list's estimated count is close to its true count, for every kind of filter
(PostgreSQL only: elsewhere every count is exact).

How: a project of 3,000 items beside another of 27,000 (a tenth of the items, as a 100k
project beside a 1M one), with planner statistics, and the limits scaled down so that
3,000 items is a large project. The planner's own estimate of a list filtered through
another table (variant, annotator) is a semi-join's, taken over every project's items:
a tenth of the truth here, as 8,725 for 100,000 at 100k items in the bench. The count
now comes from a sample of the project (item_list_estimate).
"""

from __future__ import annotations

import random

import pytest
from django.db import connection, transaction
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, InstructionVariant, Item, Project
from qc.filters import ItemListFilter
from qc.item_list_selectors import item_list_count, item_list_estimate, item_list_items
from qc.models import ItemSummary
from tests.conftest import skip_or_fail
from tests.factories import UserFactory

pytestmark = pytest.mark.usefixtures("postgres_only")

ITEMS = 3_000
OTHER_ITEMS = 27_000
STATUSES = ["waiting", "complete", "accepted"]


def _copies(model, seed_pk: int, source: str, overrides: dict[str, str], where="TRUE") -> None:
    """Rows of `model` copied from the seed row, one per row of `source` (SQL) that passes
    `where`, with `overrides` (column -> SQL expression): thousands in one statement."""
    table = model._meta.db_table
    columns = [f.column for f in model._meta.concrete_fields if not f.primary_key]
    if model is ItemSummary:
        columns.append("item_id")
    select = [overrides.get(c, f"s.{c}") for c in columns]
    statement = (
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(select)} "  # noqa: S608 - the test's own SQL
        f"FROM {table} s, {source} WHERE s.{model._meta.pk.column} = %s AND ({where})"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, [seed_pk])


def _other_project() -> None:
    """27,000 items with their summaries, without work: only their number counts."""
    other = Project.objects.create(name="estimates-other", labels=["neg", "pos"])
    seed = Item.objects.create(project=other, annotation_id="o0", label="pos")
    ItemSummary.objects.create(item=seed, project=other, status="waiting")
    _copies(
        Item, seed.pk, f"generate_series(1, {OTHER_ITEMS - 1}) g", {"annotation_id": "'o' || g"}
    )
    _copies(
        ItemSummary,
        seed.pk,
        "annotate_item i",
        {"item_id": "i.id"},
        where=f"i.project_id = {other.pk} AND i.id <> {seed.pk}",
    )


def _project(rng: random.Random) -> dict:
    """3,000 items: every one has work under the first variant, every second one under
    the second too; three annotators take turns."""
    project = Project.objects.create(name="estimates", labels=["neg", "pos"])
    variants = [
        InstructionVariant.objects.create(project=project, name=f"v{n}", text="Highlight.")
        for n in range(3)
    ]
    workers = [UserFactory(username=f"estimates-w{n}") for n in range(3)]
    items = Item.objects.bulk_create(
        Item(
            project=project,
            annotation_id=f"i{n}",
            label=rng.choice(["neg", "pos"]),
            split=rng.choice(["train", "val", "test"]),
        )
        for n in range(ITEMS)
    )
    now = timezone.now()
    Assignment.objects.bulk_create(
        Assignment(
            item=item,
            worker=workers[(k + n) % len(workers)],
            variant=variants[n],
            slot=0,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=now,
            submitted_at=now,
        )
        for k, item in enumerate(items)
        for n in range(1 if k % 2 else 2)
    )
    ItemSummary.objects.bulk_create(
        ItemSummary(
            item=item,
            project=project,
            status=rng.choice(STATUSES),
            kappa=rng.random(),
            open_flags=rng.choice([0, 0, 1]),
        )
        for item in items
    )
    return {"project": project, "variants": variants, "workers": workers}


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    # Module-scoped, so built before the function-scoped postgres_only could skip.
    if connection.vendor != "postgresql":
        skip_or_fail("needs PostgreSQL: set DATABASE_URL=postgres://...")
    with django_db_blocker.unblock(), transaction.atomic():
        built = _project(random.Random(11))
        _other_project()
        with connection.cursor() as cursor:
            for table in ("annotate_item", "qc_itemsummary", "annotate_assignment"):
                cursor.execute(f"ANALYZE {table}")
        yield built
        transaction.set_rollback(True)


@pytest.fixture
def small_limits(monkeypatch):
    """3,000 items is a large project: estimated above 600, counted exactly up to 400, a
    sample of 300 items."""
    from qc import item_list_selectors

    monkeypatch.setattr(item_list_selectors, "COUNT_EXACT_LIMIT", 400)
    monkeypatch.setattr(item_list_selectors, "COUNT_ESTIMATE_ABOVE", 600)
    monkeypatch.setattr(item_list_selectors, "COUNT_SAMPLE_ROWS", 300)


def _items(world, query: str):
    query = query.format(
        v0=world["variants"][0].pk, v1=world["variants"][1].pk, w2=world["workers"][2].pk
    )
    filters = ItemListFilter(
        data=QueryDict(query), queryset=item_list_items(project=world["project"])
    )
    assert filters.is_valid(), filters.errors
    return filters.qs


@pytest.mark.parametrize(
    "query",
    [
        "",
        "variant={v0}",
        "variant={v1}",
        "annotator={w2}",
        "status=complete",
        "split=test,val",
        "label=pos",
        "flag=none",
        "kappa_min=0.5",
    ],
)
def test_a_large_count_is_estimated_close_to_the_true_one(world, db, small_limits, query):
    items = _items(world, query)
    exact = items.count()
    assert exact > 900, "the filter should match many items"

    count, estimated = item_list_count(items, project=world["project"])

    assert estimated, (count, exact)
    assert 0.8 * exact <= count <= 1.25 * exact, (count, exact)


def test_a_variant_of_few_items_is_counted_exactly(world, db, small_limits):
    items = _items(world, "variant={v1}&status=complete&label=pos")

    count, estimated = item_list_count(items, project=world["project"])

    assert (count, estimated) == (items.count(), False)


def test_the_estimate_reads_a_sample_not_the_list(world, db, small_limits):
    items = _items(world, "variant={v1}")

    with CaptureQueriesContext(connection) as queries:
        first = item_list_estimate(items, project=world["project"])
    second = item_list_estimate(items, project=world["project"])

    # The same figure on a reload: the sample is the same.
    assert first == second
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    # One count, of the sampled items by id.
    assert len(counts) == 1 and " IN (" in counts[0], counts
