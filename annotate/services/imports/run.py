"""Starting and running imports: the one-step import (`dataset_import`, for management
commands and demos), and the job an upload starts (`import_job_create`), which its task
runs (`import_job_run`) in the steps of split.py.

Any problem aborts the import with a report naming file, line and field, and nothing is
written. Re-importing the same data creates nothing new.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.benchmark_mapping import SNIFF_BYTES
from annotate.models import ImportFormat, ImportJob, JobStatus, Project
from annotate.services.background_jobs import job_attempt_begin
from annotate.services.imports.benchmark import benchmark_import
from annotate.services.imports.check import detect_import_format, file_head
from annotate.services.imports.eraser import eraser_import
from annotate.services.imports.huggingface import (
    folder_holds_hf_dataset,
    hf_import,
    zip_holds_hf_dataset,
)
from annotate.services.imports.publish import after_import, tables_analyze
from annotate.services.imports.raw_text import raw_import
from annotate.services.imports.records import ImportSummary, ProgressCallback, ProgressThrottle
from annotate.services.imports.split import import_job_split
from config.exceptions import ApplicationError, TooLargeError
from config.job_queue import task_send_on_commit
from rationale_metrics.problems import DataValidationError, ProblemList


def dataset_import(
    *,
    project: Project,
    path: str | Path,
    source_format: str | None = None,
    label: str | None = None,
    progress: ProgressCallback | None = None,
    mapping: dict | None = None,
) -> ImportSummary:
    """Import a dataset file or directory into `project`; `mapping` names a Hugging Face
    dataset's columns (annotate/hf_mapping.py; None: guessed from their names).

    Raises DataValidationError with every problem found; in that case nothing is written.
    """
    path = Path(path)
    label = label or path.name
    if source_format is None:
        source_format = _format_of(path)
    throttled = ProgressThrottle(progress)
    try:
        if source_format == ImportFormat.HF:
            summary = hf_import(project, path, label, mapping, throttled)
        elif source_format == ImportFormat.ERASER:
            summary = eraser_import(project, path, label, throttled)
        elif not path.is_file():
            problems = ProblemList()
            problems.add(label, None, None, "no such file")
            raise DataValidationError(problems)
        elif source_format == ImportFormat.BENCHMARK:
            summary = benchmark_import(project, path, label, throttled)
        else:
            summary = raw_import(project, path, source_format, label, throttled)
        after_import(project)
        tables_analyze()
        return summary
    except IntegrityError as exc:
        # Only reachable when another import into the same project raced this one.
        problems = ProblemList()
        problems.add(label, None, None, f"conflicting concurrent import, nothing written: {exc}")
        raise DataValidationError(problems) from exc


def _format_of(path: Path) -> str:
    """A path's format: a folder of Parquet or Arrow files, or a zip of them, is a Hugging
    Face dataset; another folder is ERASER; a file is told by its name and first bytes."""
    if path.is_dir():
        return ImportFormat.HF if folder_holds_hf_dataset(path) else ImportFormat.ERASER
    if path.suffix.lower() == ".zip" and zip_holds_hf_dataset(path):
        return ImportFormat.HF
    return detect_import_format(path.name, file_head(path))


@transaction.atomic
def import_job_create(
    *,
    project: Project,
    acting_user,
    upload,
    source_format: str | None = None,
    mapping: dict | None = None,
) -> ImportJob:
    if source_format is None:
        head = upload.read(SNIFF_BYTES)
        upload.seek(0)
        source_format = detect_import_format(upload.name, head)
    if source_format not in ImportFormat.values:
        raise ApplicationError(f"unknown import format {source_format!r}")
    if mapping is not None and source_format != ImportFormat.HF:
        raise ApplicationError(
            "mapping: only a Hugging Face dataset (format hf) is read with a column mapping",
            extra={"field": "mapping"},
        )
    if upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
        raise TooLargeError(
            f"{Path(upload.name).name}: {upload.size} bytes is over the upload limit of "
            f"{settings.IMPORT_MAX_UPLOAD_BYTES} bytes",
            extra={"limit_bytes": settings.IMPORT_MAX_UPLOAD_BYTES},
        )
    job = ImportJob.objects.create(
        project=project,
        created_by=acting_user,
        source_format=source_format,
        source_name=Path(upload.name).name,
        upload=upload,
        options={"mapping": mapping} if mapping is not None else {},
    )
    task_send_on_commit(
        "annotate.tasks.import_job_execute", job.pk, unsent=lambda: _job_unqueued(job.pk)
    )
    return job


def _job_unqueued(job_id: int) -> None:
    """The import's task could not be queued, so it will never run: its file goes, as a
    refused import's does, and the row says why."""
    job = ImportJob.objects.get(pk=job_id)
    job.upload.delete(save=False)
    ImportJob.objects.filter(pk=job_id, status=JobStatus.PENDING).update(
        status=JobStatus.FAILED,
        phase="done",
        finished_at=timezone.now(),
        upload="",
        error="the job queue was unavailable, so this import never started; "
        "nothing was imported; start the import again",
    )


def import_job_run(*, job_id: int) -> ImportJob:
    """Run a queued import. Safe to call twice: finished jobs are left as they are, and a
    running one (its worker died) starts again from nothing under a new attempt.

    Every format is checked whole, prepared in chunks (over the workers when there is a
    broker) and written in one transaction (split.py)."""
    with transaction.atomic():
        job = ImportJob.objects.select_for_update().select_related("project").get(pk=job_id)
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            return job
        attempt = job_attempt_begin(job, phase="validating")
    return import_job_split(job, attempt)
