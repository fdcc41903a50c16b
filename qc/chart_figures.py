"""The figures behind the charts, from plain data (no ORM): the review pipeline day by
day, and the distribution of seconds per item of each group (an instruction variant)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

import numpy as np

PIPELINE_STAGES = ("submitted", "in_review", "revising", "accepted", "discarded")
_OUTCOME_STAGE = {"accepted": "accepted", "discarded": "discarded", "revise": "revising"}


@dataclass(frozen=True)
class AnnotationEvents:
    """One round of an annotation chain and when its review steps happened."""

    id: int
    submitted_at: datetime
    first_review_at: datetime | None
    verdict_at: datetime | None
    outcome: str | None  # "accepted", "revise", "discarded"
    superseded_at: datetime | None  # when the next round was submitted


def stage_at(annotation: AnnotationEvents, moment: datetime) -> str | None:
    """The stage of the chain at `moment` if this round is its newest then, else None."""
    if annotation.submitted_at > moment:
        return None
    if annotation.superseded_at is not None and annotation.superseded_at <= moment:
        return None
    if annotation.verdict_at is not None and annotation.verdict_at <= moment:
        return _OUTCOME_STAGE.get(annotation.outcome or "", "in_review")
    if annotation.first_review_at is not None and annotation.first_review_at <= moment:
        return "in_review"
    return "submitted"


def pipeline_by_day(
    annotations: list[AnnotationEvents], *, zone: tzinfo, last_day: date, max_days: int = 92
) -> dict:
    """Each chain counted once per day, at the stage it stood in at the day's end (in
    `zone`), from the day of the first submission to `last_day` (at most `max_days`)."""
    if not annotations:
        return {"days": [], "stages": {stage: [] for stage in PIPELINE_STAGES}}
    first = min(a.submitted_at for a in annotations).astimezone(zone).date()
    first = max(first, last_day - timedelta(days=max_days - 1))
    days = [first + timedelta(days=n) for n in range((last_day - first).days + 1)]
    counts = {stage: [0] * len(days) for stage in PIPELINE_STAGES}
    for index, day in enumerate(days):
        end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
        moment = end - timedelta(microseconds=1)
        for annotation in annotations:
            stage = stage_at(annotation, moment)
            if stage is not None:
                counts[stage][index] += 1
    return {"days": [d.isoformat() for d in days], "stages": counts}


def seconds_histogram(seconds_by_group: dict[str, list[float]], *, bins: int = 12) -> dict:
    """One set of bin edges for every group (so the groups compare bin by bin), each
    group's count per bin and its quartiles. Bins are equal on a log scale, as times
    spread over orders of magnitude; the last one holds everything above it."""
    values = [s for group in seconds_by_group.values() for s in group if s > 0]
    if not values:
        return {"edges": [], "groups": []}
    low = max(min(values), 0.5)
    high = max(float(np.percentile(values, 99)), low * 2)
    edges = [float(x) for x in np.geomspace(low, high, bins + 1)]
    edges[0] = 0.0
    groups = []
    for name, group in sorted(seconds_by_group.items()):
        clipped = np.clip(np.array(group, dtype=float), 0, edges[-1])
        counts, _ = np.histogram(clipped, bins=edges)
        quartiles = np.percentile(group, [25, 50, 75]).tolist() if group else [None] * 3
        groups.append(
            {
                "group": name,
                "n": len(group),
                "counts": [int(c) for c in counts],
                "q1": quartiles[0],
                "median": quartiles[1],
                "q3": quartiles[2],
            }
        )
    return {"edges": [_round(e) for e in edges], "groups": groups}


def _round(x: float) -> float:
    if x == 0:
        return 0.0
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return round(x, digits)
