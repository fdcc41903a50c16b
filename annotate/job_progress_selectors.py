"""Progress of import jobs in the shape every long job shares (annotate/job_progress.py),
and the start of the current phase that its time estimate goes by."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.core.cache import cache
from django.utils import timezone

from annotate.job_progress import FINAL_STATUSES, JobProgress, seconds_left
from annotate.models import ImportJob
from annotate.services.imports import import_job_progress

_BASELINE_SECONDS = 24 * 60 * 60


def progress_baseline(
    *, kind: str, job_id: int, phase: str, done: int, now: datetime
) -> tuple[datetime, int]:
    """When the job was first seen in this phase, and how much was done then. A job's
    counts start again at each phase (reading, then writing...), so the rate is measured
    within the phase; seen at a lower count than recorded, the phase started over."""
    # A phase is words ("writing parts"): keys stay to characters every cache accepts.
    key = f"job-progress-baseline:{kind}:{job_id}:{re.sub(r'[^A-Za-z0-9_.-]', '_', phase)}"
    seen = cache.get(key)
    if seen is None or seen[1] > done:
        seen = (now.timestamp(), done)
        cache.set(key, seen, _BASELINE_SECONDS)
    return datetime.fromtimestamp(seen[0], tz=UTC), seen[1]


def job_progress_build(
    *,
    kind: str,
    job_id: int,
    status: str,
    phase: str,
    done: int,
    total: int,
    unit: str,
    started_at: datetime | None,
    finished_at: datetime | None,
    error: str,
    result_url: str | None,
) -> JobProgress:
    now = timezone.now()
    left = None
    if status not in FINAL_STATUSES and total:
        since, done_since = progress_baseline(
            kind=kind, job_id=job_id, phase=phase, done=done, now=now
        )
        left = seconds_left(done=done, total=total, since=since, done_since=done_since, now=now)
    return JobProgress(
        kind=kind,
        id=job_id,
        status=status,
        phase=phase,
        done=min(done, total) if total else done,
        total=total,
        unit=unit,
        started_at=started_at,
        finished_at=finished_at,
        seconds_left=left,
        error=error,
        result_url=result_url,
    )


def import_job_progress_get(*, job: ImportJob) -> JobProgress:
    live = import_job_progress(job)
    return job_progress_build(
        kind="import",
        job_id=job.pk,
        status=job.status,
        phase=live.get("phase") or "",
        done=int(live.get("done") or 0),
        total=int(live.get("total") or 0),
        unit=live.get("unit") or "records",
        started_at=job.started_at,
        finished_at=job.finished_at,
        error=job.error,
        result_url=None,
    )
