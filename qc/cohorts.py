"""Qualification cohorts: the band of platform record a worker was recruited with.

The bands follow the crowd study behind this project, which recruited workers above 80,
90 and 95 percent approval and with the master qualification and found the annotations
differ. A worker's cohort is fixed when they are admitted to a project, so later reviews
that change their approval rate do not move their earlier work between cohorts.
"""

from __future__ import annotations

MASTER = "master"
NO_RECORD = "no platform record"
BANDS = ((95.0, "approval ≥ 95%"), (90.0, "approval 90-95%"), (80.0, "approval 80-90%"))
BELOW = "approval < 80%"
COHORTS = (MASTER, *(label for _, label in BANDS), BELOW, NO_RECORD)


def cohort_of(*, approval_rate: float | None, is_master: bool) -> str:
    if is_master:
        return MASTER
    if approval_rate is None:
        return NO_RECORD
    for floor, label in BANDS:
        if approval_rate >= floor:
            return label
    return BELOW
