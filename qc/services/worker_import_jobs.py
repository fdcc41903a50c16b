"""A crowd platform's worker CSV imported as a background job, so that the page shows its
progress (rows checked, then written) and ends with its summary or every problem found.
The import itself is worker_profiles_import_csv: one bad row still rejects the file."""

from __future__ import annotations

import time
from dataclasses import asdict

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from annotate.models import JobStatus, Project
from annotate.services.background_jobs import job_fail_if_worker_lost
from config.exceptions import ApplicationError
from config.job_queue import task_signature
from qc.models import Platform, WorkerImportJob
from qc.services.workers import (
    MAX_CSV_BYTES,
    worker_csv_header_check,
    worker_profiles_import_csv,
)

_PROGRESS_SECONDS = 24 * 60 * 60
# Enough for any header row: the upload's start, read once to check it.
HEADER_BYTES = 64 * 1024


def _progress_key(job_id: int) -> str:
    return f"worker-import-progress:{job_id}"


def worker_import_start(*, project: Project, acting_user, upload, platform: str) -> WorkerImportJob:
    """Keep the uploaded file and queue its import; the file is checked by the job."""
    if platform not in Platform.values:
        raise ApplicationError(
            f"platform: {platform!r} is not one of "
            + ", ".join(v or "(none)" for v in Platform.values)
        )
    if upload.size > MAX_CSV_BYTES:
        raise ApplicationError(f"{upload.name}: larger than {MAX_CSV_BYTES // 1024 // 1024} MB")
    worker_csv_header_check(head=upload.read(HEADER_BYTES), source=upload.name)
    upload.seek(0)
    job = WorkerImportJob.objects.create(
        project=project,
        created_by=acting_user,
        source_name=upload.name[:255],
        platform=platform,
        upload=upload,
    )
    transaction.on_commit(lambda: task_signature("qc.tasks.worker_import_execute", job.pk).delay())
    return job


def worker_import_progress(job: WorkerImportJob) -> dict:
    """Live progress of a running job (the cache: its writes are one transaction that
    nobody sees into until it commits), else what the row recorded."""
    live = cache.get(_progress_key(job.pk)) if job.status == JobStatus.RUNNING else None
    return live or {"phase": job.phase, "done": job.progress_done, "total": job.progress_total}


def worker_import_run(*, job_id: int) -> WorkerImportJob:
    """Run a queued import; a finished job is left as it is (safe to run twice)."""
    with transaction.atomic():
        job = WorkerImportJob.objects.select_for_update(of=("self",)).select_related(
            "project", "created_by"
        )
        job = job.get(pk=job_id)
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            return job
        job.status, job.phase = JobStatus.RUNNING, "checking"
        job.started_at = job.heartbeat_at = timezone.now()
        job.save(update_fields=["status", "phase", "started_at", "heartbeat_at"])

    def report(phase: str, done: int, total: int) -> None:
        cache.set(
            _progress_key(job.pk),
            {"phase": phase, "done": done, "total": total, "at": time.time()},
            _PROGRESS_SECONDS,
        )

    try:
        with job.upload.open("rb") as handle:
            data = handle.read()
        summary = worker_profiles_import_csv(
            project=job.project,
            acting_user=job.created_by,
            data=data,
            source=job.source_name,
            platform=job.platform,
            progress=report,
        )
    except ApplicationError as error:
        job.status, job.error = JobStatus.FAILED, error.message
        job.problems = list(error.extra.get("problems") or [])
    else:
        rows = summary.created + summary.updated
        job.status, job.summary = JobStatus.SUCCEEDED, asdict(summary)
        job.progress_done = job.progress_total = rows
    job.phase, job.finished_at = "done", timezone.now()
    job.save(
        update_fields=[
            "status",
            "error",
            "problems",
            "summary",
            "phase",
            "progress_done",
            "progress_total",
            "finished_at",
        ]
    )
    cache.delete(_progress_key(job.pk))
    return job


def worker_import_fail_if_worker_lost(job: WorkerImportJob) -> WorkerImportJob:
    """A running import whose worker stopped reporting (killed, machine lost) is failed: its
    write transaction died with the worker's connection, so nothing was imported."""
    live = cache.get(_progress_key(job.pk)) if job.status == JobStatus.RUNNING else None
    return job_fail_if_worker_lost(
        job,
        reported_at=(live or {}).get("at"),
        error=(
            "the worker running this import stopped (no report for "
            f"{settings.JOB_HEARTBEAT_TIMEOUT_SECONDS} s); nothing was imported; import the file again"
        ),
    )
