"""Reads for the data manager's list: which project, which items, how many, and each row
as the list shows it. The filters are qc/filters.py's; the derived columns come from the
items' summaries (qc/services/item_summaries.py)."""

from __future__ import annotations

import json
from collections import defaultdict

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from annotate.models import Item, Project, Role
from annotate.selectors import project_get_for_user
from config.exceptions import NotFoundError
from qc.curation_selectors import curated_stale
from qc.models import CuratedAnnotation, ItemView
from qc.services.item_summaries import text_preview

ITEM_LIST_ROLES = (Role.ADMIN, Role.RESEARCHER, Role.CURATOR)
# Up to this many matches the count is exact; above it, the planner's estimate (the page
# says so): counting a million rows exactly costs more than the page itself.
COUNT_EXACT_LIMIT = 10_000
# What a row never needs: the instance as imported, kept for the export.
_IMPORT_RECORD = ("declared_docids", "source_keys", "source_extra", "source_sha256", "answer")


def item_list_project(*, project_id: int, user) -> Project:
    project = project_get_for_user(project_id=project_id, user=user, roles=ITEM_LIST_ROLES)
    if project.deleted_at is not None:
        raise NotFoundError("project not found")
    return project


def item_list_items(*, project: Project) -> QuerySet[Item]:
    """The project's items that are not deleted, each with its summary (an item is listed
    once its summary is written: item_summaries_refresh runs before the list answers)."""
    return (
        Item.objects.filter(project=project, deleted_at__isnull=True, summary__project=project)
        .select_related("summary")
        .annotate(
            curated=Exists(CuratedAnnotation.objects.filter(item=OuterRef("pk"))),
            curated_stale=curated_stale(),
        )
        .defer(*_IMPORT_RECORD)
    )


def item_list_count(items: QuerySet[Item]) -> tuple[int, bool]:
    """(count, whether it is an estimate)."""
    capped = items.order_by()[: COUNT_EXACT_LIMIT + 1].count()
    if capped <= COUNT_EXACT_LIMIT or connection.vendor != "postgresql":
        return (capped if capped <= COUNT_EXACT_LIMIT else items.count()), False
    plan = json.loads(items.order_by().explain(format="json"))
    return max(int(plan[0]["Plan"]["Plan Rows"]), COUNT_EXACT_LIMIT + 1), True


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
