"""When a background job has lost its worker: the one rule every kind of job follows.

A job's worker writes the row's `heartbeat_at` while it works (imports also report their
progress to the cache in between). A running job that has reported nothing for
`JOB_HEARTBEAT_TIMEOUT_SECONDS` lost its worker (killed, its machine gone): it is ended as
failed, in the words of its own kind, so the page stops showing it as running, and its
task, if redelivered, finds it ended and leaves it alone.

The rule is written over the fields every job row has (annotate.models.BackgroundJob, and
the same names on the explainer run and the agreement report): `status`, `heartbeat_at`,
`started_at` where there is one, and `attempt` where jobs are started again.

A job (re)starts through `job_attempt_begin`: under a new attempt, its progress reset, so a
worker of an earlier attempt that is still writing is told apart and ignored.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

# Every kind of job's status values (JobStatus, ExportStatus, ReportStatus) share these two.
RUNNING = "running"
FAILED = "failed"

Job = TypeVar("Job", bound=models.Model)


def _has_field(job: models.Model, name: str) -> bool:
    return any(field.name == name for field in job._meta.concrete_fields)


def liveness_clock() -> datetime:
    """The time the rule reads a job's silence against. Tests of a killed worker move it
    forward past the timeout instead of sleeping through it."""
    return timezone.now()


def job_fail_if_worker_lost(job: Job, *, error: str, reported_at: float | None = None) -> Job:
    """Ends `job` as failed with `error` when its worker has gone silent; returns the row as
    it now is.

    `reported_at` is a report the row does not hold (a Unix time, from the cache). A job
    that never reported is left as it is. The update holds only while the row is as it was
    read: still running, under the same attempt, and with no heartbeat since; so a job
    started again, or one whose worker reported meanwhile, keeps running."""
    if job.status != RUNNING:
        return job
    reports = [t for t in (job.heartbeat_at, getattr(job, "started_at", None)) if t]
    if reported_at:
        reports.append(datetime.fromtimestamp(reported_at, tz=UTC))
    silent_since = liveness_clock() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS)
    if not reports or max(reports) >= silent_since:
        return job
    unchanged = (
        type(job)
        ._default_manager.filter(pk=job.pk, status=RUNNING)
        .filter(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=silent_since))
    )
    if _has_field(job, "attempt"):
        unchanged = unchanged.filter(attempt=job.attempt)
    ended: dict = {"status": FAILED, "error": error}
    if _has_field(job, "phase"):
        ended["phase"] = "done"
    if _has_field(job, "finished_at"):
        ended["finished_at"] = timezone.now()
    unchanged.update(**ended)
    job.refresh_from_db()
    return job


def job_attempt_begin(job: Job, *, phase: str) -> str:
    """Marks `job` (a row locked by the caller's transaction) as running under a new
    attempt, from `phase` with no progress yet, and returns the attempt's key. A job
    started again after its worker died keeps the time it first started."""
    now = timezone.now()
    job.status, job.attempt = RUNNING, uuid.uuid4().hex
    job.started_at = job.started_at or now
    job.heartbeat_at = now
    job.phase, job.progress_done, job.progress_total = phase, 0, 0
    job.save(
        update_fields=[
            "status",
            "attempt",
            "started_at",
            "heartbeat_at",
            "phase",
            "progress_done",
            "progress_total",
        ]
    )
    return job.attempt
