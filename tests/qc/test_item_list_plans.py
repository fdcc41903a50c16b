"""The data manager's first pages use an index, never a sequential scan of the big tables
(PostgreSQL only, as bench/explain.py checks the hot path).

How: a project of a few thousand items with summaries, assignments and flags, beside
another project, with planner statistics (ANALYZE). Then, for the first page of each
single filter and each sort, the plan under `enable_seqscan = off`: the planner still
answers with a sequential scan when no index can serve the query, so a plan free of them
proves one can. Sorts also run with `enable_sort = off`: an index then delivers the rows
in order, where a missing index shows as a Sort node (an Incremental Sort, which orders
only the ties within the index's order, is fine). The curation queue's disagreement order
is checked the same way. Timings are bench/data_manager.py's.

The counts: a project the planner expects to be large has its matches estimated from a
sample of its items, not counted, and a count below the exact limit is exact
(tests/qc/test_item_list_estimates.py checks the estimates filter by filter).
"""

from __future__ import annotations

import random
import re

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    Document,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
)
from qc.curation_selectors import queue_filter_from, queue_items, queue_ordered
from qc.filters import ORDERING_FIELDS, ItemListFilter
from qc.item_list_selectors import count_estimate, item_list_count, item_list_items
from qc.models import ItemSummary, QualityFlag
from tests.conftest import skip_or_fail
from tests.factories import UserFactory

pytestmark = pytest.mark.usefixtures("postgres_only")

ITEMS = 3_000
BIG_TABLES = (
    "annotate_item",
    "qc_itemsummary",
    "annotate_assignment",
    "annotate_annotation",
    "qc_qualityflag",
    "annotate_itemdocument",
)
STATUSES = ["waiting", "in_progress", "complete", "in_review", "accepted"]


def _project(name: str, rng: random.Random) -> tuple[Project, list[int], list[int], list[int]]:
    project = Project.objects.create(name=name, labels=["neg", "pos"])
    variants = [
        InstructionVariant.objects.create(project=project, name=f"v{n}", text="Highlight.").pk
        for n in range(3)
    ]
    workers = [UserFactory(username=f"{name}-w{n}").pk for n in range(9)]
    documents = Document.objects.bulk_create(
        Document(
            project=project,
            docid=f"d{n}",
            text=f"film {n} {rng.choice(['dog', 'cat', 'bird'])} plot",
            tokens=[[0, 4]],
            sentences=[[0, 1]],
            token_count=4,
            text_sha256=str(n),
            tokenizer="test",
        )
        for n in range(ITEMS)
    )
    items = Item.objects.bulk_create(
        Item(
            project=project,
            annotation_id=f"i{n}",
            label=rng.choice(["neg", "pos"]),
            split=rng.choice(["train", "val", "test"]),
            query=f"question {n}",
        )
        for n in range(ITEMS)
    )
    ItemDocument.objects.bulk_create(
        ItemDocument(item=item, document=document, position=0)
        for item, document in zip(items, documents, strict=True)
    )
    return project, [i.pk for i in items], variants, workers


def _work(project, item_ids, variants, workers, rng) -> None:
    now = timezone.now()
    assignments = Assignment.objects.bulk_create(
        Assignment(
            item_id=item_id,
            worker_id=workers[(k + n) % len(workers)],
            variant_id=variants[n],
            slot=0,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=now,
            submitted_at=now,
        )
        for k, item_id in enumerate(item_ids)
        for n in range(3)
    )
    annotations = Annotation.objects.bulk_create(Annotation(assignment=a) for a in assignments)
    QualityFlag.objects.bulk_create(
        QualityFlag(annotation=a, kind=rng.choice(["empty", "too_fast"]))
        for a in annotations
        if rng.random() < 0.05
    )
    ItemSummary.objects.bulk_create(
        ItemSummary(
            item_id=item_id,
            project=project,
            status=rng.choice(STATUSES),
            submitted=rng.randint(0, 3),
            kappa=rng.random(),
            f1=rng.random(),
            open_flags=rng.choice([0, 0, 0, 1]),
            review_score=rng.random(),
            majority_label=rng.choice(["neg", "pos"]),
            last_activity=now,
        )
        for item_id in item_ids
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE qc_itemsummary SET search_vector = to_tsvector('simple', 'film plot ' || item_id)"
        )


@pytest.fixture(scope="module")
def project(django_db_setup, django_db_blocker):
    # Module-scoped, so built before the function-scoped postgres_only could skip: the
    # same check first, or SQLite fails on PostgreSQL's full-text functions.
    if connection.vendor != "postgresql":
        skip_or_fail("needs PostgreSQL: set DATABASE_URL=postgres://...")
    rng = random.Random(7)
    with django_db_blocker.unblock():
        from django.db import transaction

        with transaction.atomic():
            built = []
            for name in ("plans", "plans-other"):
                project, item_ids, variants, workers = _project(name, rng)
                _work(project, item_ids, variants, workers, rng)
                built.append((project, variants, workers))
            with connection.cursor() as cursor:
                for table in BIG_TABLES:
                    cursor.execute(f"ANALYZE {table}")
            yield built[0]
            transaction.set_rollback(True)


def _plan(project: Project, query: str, *, no_sort: bool) -> str:
    filters = ItemListFilter(data=QueryDict(query), queryset=item_list_items(project=project))
    assert filters.is_valid(), filters.errors
    page = filters.qs[:50]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        if no_sort:
            cursor.execute("SET LOCAL enable_sort = off")
        plan = page.explain()
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET enable_sort")
    return plan


def _scans(plan: str) -> list[str]:
    return [t for t in BIG_TABLES if f"Seq Scan on {t}" in plan]


def _filters(variants, workers) -> list[str]:
    return [
        "search=dog",
        "status=complete",
        "split=test",
        "label=pos",
        "majority_label=neg",
        f"variant={variants[1]}",
        f"annotator={workers[2]}",
        "flag=any",
        "flag=none",
        "flag=empty",
        "perturbation=perturbed",
        "perturbation=original",
        "kappa_min=0.9",
        "kappa_max=0.1",
        "f1_min=0.9",
        "review_score_max=0.05",
        "submitted_min=3",
        "last_activity_after=2000-01-01T00:00:00Z",
    ]


def test_the_first_page_of_each_single_filter_uses_an_index(project, db):
    project, variants, workers = project
    problems = {}
    for query in _filters(variants, workers):
        plan = _plan(project, query, no_sort=False)
        if _scans(plan):
            problems[query] = plan
    assert not problems, "\n\n".join(f"{q}:\n{p}" for q, p in problems.items())


@pytest.mark.parametrize("column", sorted(ORDERING_FIELDS))
@pytest.mark.parametrize("sign", ["", "-"])
def test_the_first_page_of_each_sort_comes_in_index_order(project, db, column, sign):
    project, _, _ = project

    plan = _plan(project, f"ordering={sign}{column}", no_sort=True)

    assert not _scans(plan), plan
    # An incremental sort orders only rows of equal key among the index's (ties by id).
    full_sorts = [line for line in plan.splitlines() if re.match(r"\s*(->\s+)?Sort\s+\(", line)]
    assert not full_sorts, plan


def test_a_flag_kind_reads_the_summaries_alone(project, db):
    project, _, _ = project

    plan = _plan(project, "flag=empty,too_fast", no_sort=False)

    assert not _scans(plan), plan
    # The kinds are on the summary (GIN-indexed): no probe of annotations and flags per item.
    # The rows' own columns (the sub-plans: curated, its gold gone stale) read annotations
    # for the page's rows only, after the filter chose them.
    choosing = plan.split("SubPlan", 1)[0]
    assert "qc_qualityflag" not in plan, plan
    assert "annotate_annotation" not in choosing, plan


def test_a_large_count_is_not_underestimated(project, db, monkeypatch):
    from qc import item_list_selectors

    project, _, _ = project
    items = item_list_items(project=project)
    monkeypatch.setattr(item_list_selectors, "COUNT_ESTIMATE_ABOVE", ITEMS // 2)

    count, estimated = item_list_count(items, project=project)

    # The planner's own figure is about half: it takes the item's and the summary's
    # project conditions for independent ones.
    assert count_estimate(items) < 0.6 * ITEMS
    assert estimated and 0.8 * ITEMS <= count <= 1.25 * ITEMS


def test_a_count_expected_to_be_large_is_estimated_from_a_sample(project, db, monkeypatch):
    from qc import item_list_selectors

    project, _, _ = project
    items = item_list_items(project=project)
    monkeypatch.setattr(item_list_selectors, "COUNT_ESTIMATE_ABOVE", ITEMS // 2)

    with CaptureQueriesContext(connection) as queries:
        count, estimated = item_list_count(items, project=project)

    assert estimated and 0.8 * ITEMS <= count <= 1.25 * ITEMS
    # The list is not counted: the project's size is planned, and only the sampled items
    # are counted, by id.
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert len(counts) == 1 and " IN (" in counts[0], queries.captured_queries


def test_a_count_below_the_limit_is_exact(project, db):
    project, _, _ = project
    items = item_list_items(project=project).filter(summary__status="complete")

    count, estimated = item_list_count(items, project=project)

    assert (count, estimated) == (items.count(), False)


def test_a_count_near_the_limit_is_exact_though_estimated_above_it(project, db, monkeypatch):
    from qc import item_list_selectors

    project, _, _ = project
    items = item_list_items(project=project)
    monkeypatch.setattr(item_list_selectors, "COUNT_EXACT_LIMIT", ITEMS)
    monkeypatch.setattr(item_list_selectors, "count_estimate", lambda rows: ITEMS + ITEMS // 10)

    assert item_list_count(items, project=project) == (ITEMS, False)


def test_a_count_the_planner_underestimated_says_it_is_above_the_limit(project, db, monkeypatch):
    from qc import item_list_selectors

    project, _, _ = project
    monkeypatch.setattr(item_list_selectors, "COUNT_EXACT_LIMIT", 100)
    monkeypatch.setattr(item_list_selectors, "COUNT_ESTIMATE_ABOVE", 150)
    monkeypatch.setattr(item_list_selectors, "count_estimate", lambda rows: 5)

    count, estimated = item_list_count(item_list_items(project=project), project=project)

    assert (count, estimated) == (101, True)


def _queue_plan(project: Project, query: str) -> str:
    chosen = queue_filter_from(QueryDict(query))
    items = queue_ordered(queue_items(project=project, chosen=chosen), chosen)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        plan = items.values_list("pk", flat=True)[:51].explain()
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET enable_sort")
    return plan


@pytest.mark.parametrize("query", ["", "order=id", "state=all"])
def test_the_curation_queue_is_sorted_and_paged_by_the_database(project, db, query):
    project, _, _ = project

    plan = _queue_plan(project, query)

    assert not _scans(plan), plan
    full_sorts = [line for line in plan.splitlines() if re.match(r"\s*(->\s+)?Sort\s+\(", line)]
    assert not full_sorts, plan
    if "order=id" not in query:
        # In kappa order from an index (ties of kappa ordered by an incremental sort).
        assert "qc_summary_disagreement" in plan or "qc_summary_kappa" in plan, plan


def test_a_search_for_a_rare_word_pages_through_its_matches_ids(project, db):
    project, _, _ = project
    # Every item's search vector holds "film" and its id: the planner has no statistics of
    # its own for an id and guesses 0.5 % of the rows.
    chosen = item_list_items(project=project).order_by("pk")[7].pk
    filters = ItemListFilter(
        data=QueryDict(f"search=film {chosen}"), queryset=item_list_items(project=project)
    )
    assert filters.is_valid(), filters.errors

    with CaptureQueriesContext(connection) as queries:
        page = filters.qs[:50]
        plan = page.explain()
        found = [item.pk for item in page]

    fetches = [q["sql"] for q in queries.captured_queries if "@@" in q["sql"]]
    assert found == [chosen]
    # The page reads the matches by id, not the list in order with the search as a filter.
    assert "@@" not in plan, plan
    assert any(not sql.startswith("EXPLAIN") for sql in fetches), fetches


def test_a_search_for_a_common_word_stays_in_the_lists_order(project, db, monkeypatch):
    from qc import filters

    project, _, _ = project
    # Every item holds "film": more than SEARCH_FEW, as a common word at 1M items.
    monkeypatch.setattr(filters, "SEARCH_FEW", ITEMS // 10)

    plan = _plan(project, "search=film", no_sort=True)

    assert "@@" in plan and not _scans(plan), plan
