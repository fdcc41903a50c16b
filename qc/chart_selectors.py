"""What the charts show, read from the database and shaped by qc/chart_figures.py: the
review pipeline day by day, and seconds per item per instruction variant."""

from __future__ import annotations

from django.db.models import Min
from django.utils import timezone

from annotate.models import Annotation, Project, item_not_deleted
from qc.chart_figures import AnnotationEvents, pipeline_by_day, seconds_histogram


def pipeline_timeline(*, project: Project) -> dict:
    """Submitted, in review, revising, accepted and discarded work at the end of each day,
    each annotation chain counted once, at its newest round then (as pipeline_counts
    counts today)."""
    rows = list(
        Annotation.objects.filter(
            item_not_deleted("assignment__item"), assignment__item__project=project
        )
        .annotate(first_review_at=Min("reviews__created_at"))
        .values_list(
            "pk",
            "revision_of_id",
            "created_at",
            "first_review_at",
            "verdict__created_at",
            "verdict__outcome",
        )
    )
    superseded = {previous: created for _, previous, created, *_ in rows if previous is not None}
    events = [
        AnnotationEvents(
            id=pk,
            submitted_at=created,
            first_review_at=first_review,
            verdict_at=verdict_at,
            outcome=outcome,
            superseded_at=superseded.get(pk),
        )
        for pk, _, created, first_review, verdict_at, outcome in rows
    ]
    zone = timezone.get_current_timezone()
    return pipeline_by_day(events, zone=zone, last_day=timezone.localdate())


def seconds_per_item(*, project: Project) -> dict:
    """The distribution of the seconds annotators spent per item, per instruction variant
    (first rounds: a revision's time is spent on feedback, not on a first reading)."""
    by_variant: dict[str, list[float]] = {}
    for variant, spent_ms in Annotation.objects.filter(
        item_not_deleted("assignment__item"), assignment__item__project=project, assignment__round=1
    ).values_list("assignment__variant__name", "time_spent_ms"):
        by_variant.setdefault(variant, []).append(spent_ms / 1000)
    return seconds_histogram(by_variant)
