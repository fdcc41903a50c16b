"""An import job's row and its staged parts: live progress, liveness, how a job ends,
and the sweeps of the files it leaves. Nothing here knows a format or a step."""

from __future__ import annotations

import logging
import re
import time
from datetime import timedelta
from pathlib import PurePosixPath

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q, QuerySet
from django.utils import timezone

from annotate.models import ImportJob, ImportPart, JobStatus
from annotate.services.background_jobs import job_fail_if_worker_lost
from annotate.services.imports.records import ProgressCallback
from config.exceptions import ApplicationError
from config.storage import stored_remove
from rationale_metrics.problems import DataValidationError

logger = logging.getLogger(__name__)
PARTS_ROOT = "imports/parts"


def progress_cache_key(job_id: int) -> str:
    return f"import-job-progress:{job_id}"


def import_job_progress(job: ImportJob) -> dict:
    """Live progress of a running job (from the cache), else what the row recorded."""
    live = cache.get(progress_cache_key(job.pk)) if job.status == JobStatus.RUNNING else None
    if live:
        return live
    return {"phase": job.phase, "done": job.progress_done, "total": job.progress_total}


def import_job_fail_if_worker_lost(job: ImportJob) -> ImportJob:
    """A running job whose worker stopped reporting (killed, machine lost) is marked failed.

    Its write transaction died with the worker's connection, so nothing was imported; a
    redelivered task then finds the job finished and leaves it alone."""
    live = cache.get(progress_cache_key(job.pk)) if job.status == JobStatus.RUNNING else None
    return job_fail_if_worker_lost(
        job,
        reported_at=(live or {}).get("at"),
        error=(
            f"the worker running this import stopped (no report for {settings.JOB_HEARTBEAT_TIMEOUT_SECONDS} s); "
            "nothing was imported; start the import again"
        ),
    )


def import_progress_reporter(job_id: int) -> ProgressCallback:
    def report(phase: str, done: int, total: int) -> None:
        # In the cache, not the row: the write phase is one transaction the page cannot see into.
        cache.set(
            progress_cache_key(job_id),
            {"phase": phase, "done": done, "total": total, "at": time.time()},
            3600,
        )

    return report


def import_progress_forget(job_id: int) -> None:
    """The row says how far the job is again (its chunks count there)."""
    cache.delete(progress_cache_key(job_id))


def job_running(job_id: int, attempt: str) -> QuerySet[ImportJob]:
    """The job's row while it still runs under this attempt (empty once superseded)."""
    return ImportJob.objects.filter(pk=job_id, status=JobStatus.RUNNING, attempt=attempt)


def import_failure(exc: Exception, job_id: int, where: str = "") -> dict:
    """What a failed import records: every problem found, or a clear error."""
    where = f" (in {where})" if where else ""
    if isinstance(exc, DataValidationError):
        return {
            "status": JobStatus.FAILED,
            "problems": [p.as_dict() for p in exc.problems],
            "error": f"{len(exc.problems)} problem(s) found{where}; nothing was imported",
        }
    if isinstance(exc, ApplicationError):  # a chunk that did not finish, a part changed
        return {"status": JobStatus.FAILED, "error": f"{exc}{where}; nothing was imported"}
    logger.exception("import job %s crashed%s", job_id, where)
    return {
        "status": JobStatus.FAILED,
        "error": f"internal error{where}, nothing was imported: {type(exc).__name__}: {exc}",
    }


def import_job_end(job: ImportJob, attempt: str, **fields) -> ImportJob:
    """End the job if it still runs under this attempt (one ended, or started again,
    elsewhere is left as it is)."""
    failed = fields.get("status") == JobStatus.FAILED
    if failed:
        fields = _server_paths_hidden(fields, job)
    current = job_running(job.pk, attempt)
    if (failed or settings.IMPORT_UPLOAD_RETENTION_DAYS == 0) and current.exists():
        # A rejected file has nothing in the database to account for, and a hostile one
        # should not outlive the answer. Deleted before the row says so: a crash between
        # the two leaves a row naming a missing file, never a file no row names.
        job.upload.delete(save=False)
        fields["upload"] = ""
    current.update(phase="done", finished_at=timezone.now(), **fields)
    import_progress_forget(job.pk)
    return ImportJob.objects.get(pk=job.pk)


def _server_paths_hidden(fields: dict, job: ImportJob) -> dict:
    """A failed job's error and problems with every path of a file on the server (an
    exception's text may hold one) replaced by a name the user knows: the upload's own
    path by the name it was uploaded under, any other by its file name."""
    stored = job.upload.path if job.upload else None
    media = re.escape(str(settings.MEDIA_ROOT).rstrip("/") + "/")
    elsewhere = re.compile(media + r"[^\s'\"]*")

    def hidden(text: str) -> str:
        if stored:
            text = text.replace(stored, job.source_name)
        return elsewhere.sub(lambda found: PurePosixPath(found.group()).name, text)

    fields = dict(fields)
    if "error" in fields:
        fields["error"] = hidden(fields["error"])
    if "problems" in fields:
        fields["problems"] = [
            {
                **problem,
                "message": hidden(problem["message"]),
                "file": hidden(problem["file"] or ""),
            }
            for problem in fields["problems"]
        ]
    return fields


def import_job_fail(*, job_id: int, attempt: str, error: str) -> ImportJob:
    job = ImportJob.objects.get(pk=job_id)
    return import_job_end(job, attempt, status=JobStatus.FAILED, error=error)


def parts_folder(job_id: int) -> str:
    return f"{PARTS_ROOT}/{job_id}"


def parts_discard(job_id: int) -> None:
    ImportPart.objects.filter(job_id=job_id).delete()
    stored_remove(parts_folder(job_id))


def import_parts_sweep() -> int:
    """The staged chunks of imports no longer running (their worker was lost, or their
    last step never came), removed; returns how many jobs had some."""
    ended = ImportPart.objects.exclude(job__status=JobStatus.RUNNING)
    job_ids = sorted(set(ended.values_list("job_id", flat=True)))
    for job_id in job_ids:
        parts_discard(job_id)
    return len(job_ids)


def import_uploads_expire() -> int:
    """Delete the uploaded files no longer kept, and say how many: those of accepted
    imports finished more than IMPORT_UPLOAD_RETENTION_DAYS ago, and any left by a
    rejected one (a job marked failed when its worker was lost kept its file)."""
    cutoff = timezone.now() - timedelta(days=settings.IMPORT_UPLOAD_RETENTION_DAYS)
    expired = ImportJob.objects.exclude(upload="").filter(
        Q(status=JobStatus.FAILED) | Q(status=JobStatus.SUCCEEDED, finished_at__lt=cutoff)
    )
    count = 0
    for job in expired.only("pk", "upload").iterator():
        job.upload.delete(save=False)
        ImportJob.objects.filter(pk=job.pk).update(upload="")
        count += 1
    return count
