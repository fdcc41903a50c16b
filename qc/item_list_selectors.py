"""Reads for the data manager's list: which project, which items, how many, and each row
as the list shows it. The filters are qc/filters.py's; the derived columns come from the
items' summaries (qc/services/item_summaries.py)."""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict

from django.db import connection
from django.db.models import Exists, Max, Min, OuterRef, Q, QuerySet

from annotate.models import Item, Project, Role
from annotate.selectors import project_get_for_user
from config.exceptions import NotFoundError
from qc.curation_staleness import curated_stale
from qc.models import CuratedAnnotation, ItemSummary, ItemView
from qc.services.item_summaries import text_preview

ITEM_LIST_ROLES = (Role.ADMIN, Role.RESEARCHER, Role.CURATOR)
# Up to this many matches the count is exact; above it, an estimate (the page says so):
# counting a million rows exactly costs more than the page itself, and even counting up
# to the limit cost a second at 1M items where a filter is checked row by row.
COUNT_EXACT_LIMIT = 10_000
# Above this the estimate (item_list_estimate) is taken as it is: a half's margin over the
# limit, so that a count near it (a project of 10,000 items, estimated 11,288) is exact.
COUNT_ESTIMATE_ABOVE = COUNT_EXACT_LIMIT * 3 // 2
# How many of a large project's items an estimated count reads, in how many runs of
# consecutive ids (item_list_estimate): a share of 2,000 items is within about one
# percentage point of the project's.
COUNT_SAMPLE_ROWS = 2_000
COUNT_SAMPLE_WINDOWS = 40
# What a row never needs: the instance as imported, kept for the export.
_IMPORT_RECORD = ("declared_docids", "source_keys", "source_extra", "source_sha256", "answer")


def item_list_project(*, project_id: int, user) -> Project:
    project = project_get_for_user(project_id=project_id, user=user, roles=ITEM_LIST_ROLES)
    if project.deleted_at is not None:
        raise NotFoundError("project not found")
    return project


def item_list_items(*, project: Project) -> QuerySet[Item]:
    """The project's items that are not deleted, each with its summary (an item is listed
    once its summary is written: item_summaries_refresh runs before the list answers).

    The project is named on both tables, so that a first page reads either's index within
    the project (named on the summary alone, a page in id order walked every item of the
    projects before it). The planner takes the two conditions for independent ones, so
    item_list_count estimates from a sample instead (item_list_estimate)."""
    return (
        Item.objects.filter(project=project, deleted_at__isnull=True, summary__project=project)
        .select_related("summary")
        .annotate(
            curated=Exists(CuratedAnnotation.objects.filter(item=OuterRef("pk"))),
            curated_stale=curated_stale(),
        )
        .defer(*_IMPORT_RECORD)
    )


def item_list_count(items: QuerySet[Item], *, project: Project) -> tuple[int, bool]:
    """(count, whether it is an estimate) of `items`, the project's (item_list_items). On
    PostgreSQL, a project the planner expects to hold well over COUNT_EXACT_LIMIT items
    has its matches estimated from a sample (item_list_estimate) and, when that is well
    over the limit too, nothing is counted; otherwise the matches are counted up to the
    limit, and past it the count is given as the larger of the estimate and the limit."""
    if connection.vendor != "postgresql":
        return items.count(), False
    total = count_estimate(ItemSummary.objects.filter(project=project))
    estimate = _sampled_estimate(items, project, total) if total > COUNT_ESTIMATE_ABOVE else None
    if estimate is not None and estimate > COUNT_ESTIMATE_ABOVE:
        return estimate, True
    capped = items.order_by()[: COUNT_EXACT_LIMIT + 1].count()
    if capped <= COUNT_EXACT_LIMIT:
        return capped, False
    if estimate is None:
        estimate = _sampled_estimate(items, project, total)
    return max(estimate, COUNT_EXACT_LIMIT + 1), True


def item_list_estimate(items: QuerySet[Item], *, project: Project) -> int:
    """About how many of the project's items `items` holds (PostgreSQL): the share of a
    sample of the project's items that match, times the planner's estimate of the
    project's summaries (its statistics know each project's size).

    Not the planner's estimate of the filtered list itself: it takes every condition for
    independent of the project. Divided by the project's share, that was close for a
    filter on the summary, but a filter through another table (variant, annotator, a
    perturbed copy) is a semi-join, whose selectivity the planner takes over every
    project's items: 8,725 for a variant of a 100k project (all its 100,000 items) beside
    a 1M one. A sample of the project asks the filter itself."""
    return _sampled_estimate(
        items, project, count_estimate(ItemSummary.objects.filter(project=project))
    )


def _sampled_estimate(items: QuerySet[Item], project: Project, total: int) -> int:
    sampled = _sample_of_project(project, total)
    if not sampled:
        return 0
    matches = items.order_by().filter(pk__in=sampled).count()
    return round(total * matches / len(sampled))


def _sample_of_project(project: Project, total: int) -> list[int]:
    """The ids of about COUNT_SAMPLE_ROWS of the project's items: one run of consecutive
    ids in each of COUNT_SAMPLE_WINDOWS equal parts of the project's ids, each run a range
    of its summaries' index. One run a part, items imported together in a block (a split,
    a source) are sampled in proportion; each run starts at a random place in its part, so
    that a pattern repeating every few ids is not sampled in step with it (the same place
    every time, a reload shows the same estimate)."""
    summaries = ItemSummary.objects.filter(project=project)
    bounds = summaries.aggregate(low=Min("item_id"), high=Max("item_id"))
    low, high = bounds["low"], bounds["high"]
    if low is None or total <= 0:
        return []
    span = high - low + 1
    step = span / COUNT_SAMPLE_WINDOWS
    # Ids per run, for about COUNT_SAMPLE_ROWS items where the project's ids have gaps
    # (other projects' items imported at the same time).
    width = min(math.ceil(step), math.ceil(COUNT_SAMPLE_ROWS * span / total / COUNT_SAMPLE_WINDOWS))
    places = random.Random(project.pk)
    runs = Q()
    for n in range(COUNT_SAMPLE_WINDOWS):
        start = low + int(n * step + places.random() * max(step - width, 0))
        runs |= Q(item_id__gte=start, item_id__lt=start + width)
    return list(summaries.filter(runs).values_list("item_id", flat=True))


def count_estimate(rows: QuerySet) -> int:
    """How many rows the planner expects `rows` to have (PostgreSQL): planning only."""
    plan = json.loads(rows.order_by().explain(format="json"))
    return int(plan[0]["Plan"]["Plan Rows"])


def item_list_rows(items: list[Item]) -> list[dict]:
    """The rows of one page, in its order."""
    copies: dict[int, list[tuple[int, list[str]]]] = defaultdict(list)
    for original_id, pk, types in (
        Item.objects.filter(perturbation_of_id__in=[i.pk for i in items], deleted_at__isnull=True)
        .order_by("pk")
        .values_list("perturbation_of_id", "pk", "perturbation_types")
    ):
        copies[original_id].append((pk, types or []))
    return [_row(item, copies.get(item.pk, [])) for item in items]


def _row(item: Item, copies: list[tuple[int, list[str]]]) -> dict:
    summary = item.summary
    if item.perturbation_of_id:
        role, types = "perturbed", list(item.perturbation_types or [])
    elif copies:
        role, types = "original", sorted({t for _, kinds in copies for t in kinds})
    else:
        role, types = None, []
    return {
        "id": item.pk,
        "annotation_id": item.annotation_id_value,
        "split": item.split,
        "label": item.label,
        "majority_label": summary.majority_label,
        "texts": summary.texts,
        "query_preview": text_preview(item.query) if item.query else None,
        "status": summary.status,
        "variants": summary.variants,
        "submitted": summary.submitted,
        "annotators": summary.annotators,
        "kappa": summary.kappa,
        "f1": summary.f1,
        "open_flags": summary.open_flags,
        "flag_kinds": summary.flag_kinds,
        "review_score": summary.review_score,
        "perturbation": {
            "role": role,
            "types": types,
            "original_id": item.perturbation_of_id,
            "perturbed_ids": [pk for pk, _ in copies],
        },
        "excluded": item.excluded,
        "marked_gold": item.marked_gold,
        "curated": item.curated,
        "curated_stale": item.curated_stale,
        "last_activity": summary.last_activity,
    }


# ---------------------------------------------------------------- saved views


def _views_seen_by(project: Project, user) -> QuerySet[ItemView]:
    return ItemView.objects.filter(project=project).filter(Q(shared=True) | Q(creator=user))


def item_view_list(*, project: Project, user) -> QuerySet[ItemView]:
    """The project's shared views and the caller's own, shared first."""
    return _views_seen_by(project, user).select_related("creator").order_by("-shared", "name", "pk")


def item_view_get(*, project: Project, user, view_id: int) -> ItemView:
    """A view the caller can see (shared, or their own); another's private one is not found."""
    view = _views_seen_by(project, user).select_related("project").filter(pk=view_id).first()
    if view is None:
        raise NotFoundError("view not found")
    return view
