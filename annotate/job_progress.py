"""The one shape in which every long job reports its progress (imports, exports, agreement
reports, explainer runs), and the estimate of the time it has left. Plain data, no ORM:
each app's selector fills a JobProgress from its own job row.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    "pending",
    "running",
    "succeeded",
    "failed",
    "cancelled",
)
FINAL_STATUSES = frozenset({SUCCEEDED, FAILED, CANCELLED})


@dataclass(frozen=True)
class JobProgress:
    kind: str  # "import", "export", "agreement", "explainer_run"
    id: int
    status: str  # one of PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED
    phase: str
    done: int
    total: int
    unit: str  # what `done` and `total` count: "documents", "items", "chunks", ...
    started_at: datetime | None
    finished_at: datetime | None
    seconds_left: float | None
    error: str
    result_url: str | None

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES

    def as_dict(self) -> dict:
        return {**asdict(self), "final": self.final}


def seconds_left(
    *, done: int, total: int, since: datetime | None, now: datetime, done_since: int = 0
) -> float | None:
    """Seconds until `total` is reached at the rate so far: what was done from `since`
    (when `done_since` had been done) to `now`.

    None while there is no rate to go by: no total, no start, nothing done since the start,
    or no time passed. Zero once everything is done."""
    if total <= 0 or since is None:
        return None
    if done >= total:
        return 0.0
    elapsed = (now - since).total_seconds()
    progressed = done - done_since
    if progressed <= 0 or elapsed <= 0:
        return None
    return (total - done) * elapsed / progressed
