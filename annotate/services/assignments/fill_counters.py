"""The per-(item, variant) live counts that "next" searches instead of counting
assignments; kept exact by the transactions that lease, skip, expire and late-submit."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce

from annotate.models import (
    LIVE_ASSIGNMENT,
    Assignment,
    InstructionVariant,
    Item,
    ItemVariantFill,
    Project,
)
from config.bulk_sql import statistics_refresh


def fill_change(item_id: int, variant_id: int, delta: int) -> None:
    """Move an (item, variant)'s live count; called in the transaction that changes it."""
    ItemVariantFill.objects.filter(item_id=item_id, variant_id=variant_id).update(
        live=F("live") + delta
    )


def _live_counts(variant: InstructionVariant, item_ids=None) -> dict[int, int]:
    rows = Assignment.objects.filter(LIVE_ASSIGNMENT, variant=variant, round=1)
    if item_ids is not None:
        rows = rows.filter(item_id__in=item_ids)
    return dict(rows.values_list("item_id").annotate(n=Count("pk")).values_list("item_id", "n"))


# Creating this many fill rows (a variant on a big project, a big import) refreshes the
# table's planner statistics, which "next" relies on to find a free item by index.
FILL_ROWS_FOR_STATISTICS = 1_000


def fill_rows_sync(*, project: Project, variant: InstructionVariant) -> int:
    """Create the fill rows an (item, variant) lacks, counted from the assignments
    themselves; returns how many were created. Called when variants are created and
    datasets imported, and again whenever "next" finds nothing, as a safety net. The
    variant row is locked, so concurrent callers create the rows once, one after another."""
    with transaction.atomic():
        InstructionVariant.objects.select_for_update(no_key=True).filter(pk=variant.pk).first()
        created = _fill_rows_create(project, variant)
    if created >= FILL_ROWS_FOR_STATISTICS:
        statistics_refresh(ItemVariantFill)
    return created


def project_fill_rows_sync(*, project: Project) -> int:
    return sum(
        fill_rows_sync(project=project, variant=variant)
        for variant in InstructionVariant.objects.filter(project=project, active=True)
    )


def _fill_rows_create(project: Project, variant: InstructionVariant) -> int:
    # Two plain scans and a set difference: an anti-join here met a freshly imported
    # table without statistics and PostgreSQL planned it as a nested loop over both.
    have = set(ItemVariantFill.objects.filter(variant=variant).values_list("item_id", flat=True))
    offered = Item.objects.filter(project=project).exclude(
        Q(pinned_variant__isnull=False) & ~Q(pinned_variant=variant)
    )
    missing = [pk for pk in offered.order_by().values_list("pk", flat=True) if pk not in have]
    created = 0
    for start in range(0, len(missing), 5000):
        chunk = missing[start : start + 5000]
        live = _live_counts(variant, chunk)
        created += len(
            ItemVariantFill.objects.bulk_create(
                [ItemVariantFill(item_id=i, variant=variant, live=live.get(i, 0)) for i in chunk],
                ignore_conflicts=True,
            )
        )
    return created


def fill_rows_rebuild(*, project: Project) -> int:
    """Recount every fill row of the project from its assignments (a repair tool; the
    counters are kept exact by the services). Returns how many rows were corrected."""
    actual = Coalesce(
        Subquery(
            Assignment.objects.filter(
                LIVE_ASSIGNMENT, item=OuterRef("item_id"), variant=OuterRef("variant_id"), round=1
            )
            .values("item")
            .annotate(n=Count("pk"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        Value(0),
    )
    with transaction.atomic():
        for variant in InstructionVariant.objects.filter(project=project):
            fill_rows_sync(project=project, variant=variant)
        wrong = list(
            ItemVariantFill.objects.filter(variant__project=project)
            .annotate(actual=actual)
            .exclude(live=F("actual"))
            .values_list("pk", flat=True)
        )
        for start in range(0, len(wrong), 5000):
            ItemVariantFill.objects.filter(pk__in=wrong[start : start + 5000]).update(live=actual)
    return len(wrong)


def item_variant_pin(
    *, project: Project, item_ids: list[int], variant: InstructionVariant | None
) -> int:
    """Annotate these items under `variant` only (None: under every active variant again),
    by their fill rows: those of the other variants are removed, so "next" stops offering
    the items under them (leases already out finish as they are), and the missing ones are
    created. Returns how many items changed. The caller holds the transaction."""
    items = Item.objects.filter(project=project, pk__in=item_ids)
    changing = list(
        items.exclude(pinned_variant=variant).order_by("pk").values_list("pk", flat=True)
        if variant is not None
        else items.filter(pinned_variant__isnull=False).order_by("pk").values_list("pk", flat=True)
    )
    if not changing:
        return 0
    Item.objects.filter(pk__in=changing).update(pinned_variant=variant)
    offered = (
        [variant]
        if variant is not None
        else list(InstructionVariant.objects.filter(project=project, active=True))
    )
    if variant is not None:
        others = ItemVariantFill.objects.filter(item_id__in=changing).exclude(variant=variant)
        # Locked in a fixed order first, as the services that move fills lock them.
        list(others.select_for_update().order_by("pk").values_list("pk", flat=True))
        others.delete()
    for chosen in offered:
        live = _live_counts(chosen, changing)
        ItemVariantFill.objects.bulk_create(
            [ItemVariantFill(item_id=i, variant=chosen, live=live.get(i, 0)) for i in changing],
            ignore_conflicts=True,
        )
    return len(changing)
