"""Soft deletion of items: out of every list, queue, figure and export at once, restorable
until the purge removes them for good (qc/services/lifecycle.py audits and schedules it).

How deleted data disappears: `Item.objects` (the default manager) hides deleted items, and
reads that reach items through an assignment or an annotation filter on
`item_not_deleted`. The annotators' queue needs neither: a deleted item's fill rows are
removed and its unsubmitted assignments ended here, so "next" (the SQL fast path included)
has nothing of it to hand out, and a submit on it is refused.

One deletion is one instant: every item it hides gets the same `deleted_at` (an import's
and a project's own `deleted_at` too), so restoring that deletion brings back exactly those
items and none deleted before or after it on their own.

Delete and restore lose no annotator's work: the leases a deletion ends carry its instant
(`Assignment.withdrawn_at`), and its restore gives them back to the annotators who held
them, drafts included, or, when a first round's lease ran out meanwhile, expires them so
that the item is back in the pool as after any expiry.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotate.models import InstructionVariant, Item, ItemVariantFill, Project
from annotate.services.assignments.fill_counters import fill_rows_sync
from annotate.services.assignments.leasing import item_leases_end, item_leases_give_back

# Items are hidden this many at a time (each chunk's leases, fills and rows), so that a
# big import's deletion holds no giant IN lists.
CHUNK = 5000


@transaction.atomic
def items_hide(*, items: QuerySet, at: datetime) -> int:
    """Delete softly the items of `items` not deleted yet, at the instant `at`: their
    leases end, their fill rows go, their rows get `deleted_at`. Returns how many."""
    ids = list(items.filter(deleted_at__isnull=True).order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        item_leases_end(item_ids=chunk, withdrawn_at=at)
        ItemVariantFill.objects.filter(item_id__in=chunk).delete()
        Item.all_objects.filter(pk__in=chunk).update(deleted_at=at)
    return len(ids)


@transaction.atomic
def items_unhide(
    *, project: Project, items: QuerySet, kept_ended: frozenset[int] = frozenset()
) -> int:
    """Bring back the deleted items of `items`: the leases their deletion ended (given back
    to their annotators but those of `kept_ended`, or expired), their rows, then their fill
    rows, counted from their live assignments, under each active variant. Returns how many."""
    ids = list(items.filter(deleted_at__isnull=False).order_by("pk").values_list("pk", flat=True))
    restored = 0
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        item_leases_give_back(project=project, item_ids=chunk, kept_ended=kept_ended)
        restored += Item.all_objects.filter(pk__in=chunk).update(deleted_at=None)
    if restored:
        for variant in InstructionVariant.objects.filter(project=project, active=True):
            fill_rows_sync(project=project, variant=variant)
    return restored


def item_bulk_delete(project: Project, items, acting_user, args: dict) -> int:
    """The data manager's bulk action "delete" (annotate.services.item_bulk_actions): the
    chosen items deleted softly, restorable from the data page's "Deleted" section."""
    chosen = Item.all_objects.filter(project=project)
    chosen = (
        chosen.filter(pk__in=items.values("pk"))
        if isinstance(items, QuerySet)
        else chosen.filter(pk__in=list(items))
    )
    return items_hide(items=chosen, at=timezone.now())
