"""When the demo's simulated work happened, from plain data (no ORM): the demo is made in
a few seconds, but a study runs for weeks, so the charts of the review pipeline day by day
need a history that spans days. Seeded, so the same demo gets the same schedule relative to
the moment it is made."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

WORKDAY_START_HOUR = 9
WORKDAY_HOURS = 9


@dataclass(frozen=True)
class SimulatedAnnotation:
    """One annotation of the demo, in the order it was made: the round it answers (the
    annotation it revises, if any), its reviews in order, and whether a verdict closed it."""

    id: int
    revision_of: int | None
    review_ids: tuple[int, ...] = ()
    has_verdict: bool = False


@dataclass
class DemoSchedule:
    submitted_at: dict[int, datetime] = field(default_factory=dict)  # annotation id
    reviewed_at: dict[int, datetime] = field(default_factory=dict)  # review id
    verdict_at: dict[int, datetime] = field(default_factory=dict)  # annotation id


def _working_time(moment: datetime, rng: random.Random) -> datetime:
    """The same day's working hours if `moment` falls outside them (people work by day)."""
    start = moment.replace(hour=WORKDAY_START_HOUR, minute=0, second=0, microsecond=0)
    if start <= moment < start + timedelta(hours=WORKDAY_HOURS):
        return moment
    if moment >= start + timedelta(hours=WORKDAY_HOURS):
        start += timedelta(days=1)
    return start + timedelta(minutes=rng.randint(0, WORKDAY_HOURS * 60 - 1))


def demo_schedule(
    annotations: list[SimulatedAnnotation],
    *,
    now: datetime,
    days: int = 14,
    seed: int = 3,
) -> DemoSchedule:
    """First rounds submitted over the first two thirds of `days` (most early on), each
    review a few hours to two days after what it reviews, the verdict with the last review,
    a revision half a day to two days after the verdict sent it back. Nothing is later than
    `now` and nothing comes before what it follows: the last of a chain are squeezed before
    `now`, a minute apart. `now` is aware; the working hours are its time zone's."""
    rng = random.Random(seed)
    origin = (now - timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0)
    latest = now - timedelta(minutes=1)
    schedule = DemoSchedule()

    def at_most_now(moment: datetime, after: datetime) -> datetime:
        moment = max(moment, after + timedelta(minutes=1))
        return min(moment, max(latest, after + timedelta(seconds=1)))

    first_round_span = max(1.0, days * 2 / 3)
    for annotation in annotations:
        if annotation.revision_of is None:
            day = rng.triangular(0, first_round_span, first_round_span / 4)
            moment = _working_time(origin + timedelta(days=day), rng)
            submitted = at_most_now(moment, origin)
        else:
            sent_back = (
                schedule.verdict_at.get(annotation.revision_of)
                or schedule.submitted_at[annotation.revision_of]
            )
            moment = _working_time(sent_back + timedelta(hours=rng.uniform(12, 48)), rng)
            submitted = at_most_now(moment, sent_back)
        schedule.submitted_at[annotation.id] = submitted
        previous = submitted
        for review_id in annotation.review_ids:
            moment = _working_time(previous + timedelta(hours=rng.uniform(3, 48)), rng)
            previous = at_most_now(moment, previous)
            schedule.reviewed_at[review_id] = previous
        if annotation.has_verdict:
            schedule.verdict_at[annotation.id] = previous
    return schedule
