"""Whether an item's curated gold is stale: a query expression the data manager's list, its
filters and the curation queue share. Its own module because the curation queue's
selectors read the data manager's count, and the data manager reads this."""

from __future__ import annotations

from django.db.models import Exists, OuterRef
from django.db.models.functions import Coalesce

from annotate.models import Annotation, AssignmentStatus, Item


def curated_stale() -> Exists:
    """Whether an item's curated gold is stale, for a query on items: an annotation of the
    item (a new one, or a revision after a send-back) was submitted after the gold was
    curated, or after a curator last confirmed it. False for an item without curated gold."""
    return Exists(
        Annotation.objects.filter(
            assignment__item=OuterRef("pk"),
            assignment__status=AssignmentStatus.SUBMITTED,
            created_at__gt=Coalesce(
                OuterRef("curated_annotation__confirmed_at"),
                OuterRef("curated_annotation__curated_at"),
            ),
        )
    )


def item_curated_stale(item_id: int) -> bool:
    return Item.all_objects.filter(pk=item_id).filter(curated_stale()).exists()
