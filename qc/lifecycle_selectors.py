"""Reads for a project's lifecycle: what it holds deleted and may still restore."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, F, Q
from django.utils import timezone

from annotate.models import ImportJob, Item, Project
from qc.services.lifecycle import restorable_until, restore_period

DELETED_ITEMS_SHOWN = 200


def deleted_data(*, project: Project) -> dict:
    """The project's deleted imports (each with the items its deletion took) and the items
    deleted on their own, still restorable; newest first."""
    cutoff = timezone.now() - restore_period()
    imports = (
        ImportJob.objects.filter(project=project, deleted_at__gt=cutoff)
        .select_related("deleted_by")
        .annotate(deleted_items=Count("items", filter=Q(items__deleted_at=F("deleted_at"))))
        .order_by("-deleted_at", "-pk")
    )
    alone = Item.all_objects.filter(project=project, deleted_at__gt=cutoff).exclude(
        import_job__deleted_at__isnull=False
    )
    return {
        "restore_days": settings.DELETED_RESTORE_DAYS,
        "imports": [
            {
                "id": job.pk,
                "source_name": job.source_name,
                "items": job.deleted_items,
                "deleted_at": job.deleted_at,
                "deleted_by": job.deleted_by.get_username() if job.deleted_by else None,
                "restorable_until": restorable_until(job.deleted_at),
            }
            for job in imports
        ],
        "items": [
            {
                "id": pk,
                "annotation_id": annotation_id,
                "deleted_at": deleted_at,
                "restorable_until": restorable_until(deleted_at),
            }
            for pk, annotation_id, deleted_at in alone.order_by("-deleted_at", "pk").values_list(
                "pk", "annotation_id", "deleted_at"
            )[:DELETED_ITEMS_SHOWN]
        ],
        "items_count": alone.count(),
    }
