"""An import job, split over the workers: checked whole, prepared in chunks, written in
one transaction. Every format goes this way.

`import_job_split` (run by the job's task) checks the whole upload first (check.py): any
problem fails the job before anything is written. It then cuts the upload's units into
chunks of `IMPORT_CHUNK_ROWS` and, with a broker, sends them to the workers as a Celery
chord. The units are a raw-text file's rows (one document, or the documents of a pair or
a question), a benchmark file's lines (an item with its texts), or an ERASER dataset's
documents followed by its instances (the order the one-step import writes them;
annotate/upload_slices.py). Each chunk prepares and stages its units (prepare.py); the
chord's callback writes every part in one transaction that also marks the job succeeded
(publish.py): a failed chunk fails the job with nothing written. Without a broker, with
one chunk, or with `IMPORT_CHUNKED` off, the same functions run one after the other in
the job's process, and write the same rows, in the same order, as the one-step import.

Attempt tokens make a chunk or a last step of a superseded attempt do nothing; a chunk
run twice replaces its part and counts once.
"""

from __future__ import annotations

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from annotate.models import ImportFormat, ImportJob
from annotate.services.imports.check import upload_check
from annotate.services.imports.job import (
    import_failure,
    import_job_end,
    import_progress_forget,
    import_progress_reporter,
    job_running,
    parts_discard,
)
from annotate.services.imports.prepare import import_chunk_run
from annotate.services.imports.publish import import_publish_run
from annotate.services.imports.records import ProgressThrottle
from config.job_chunks import chunks_go_to_workers
from config.job_queue import task_signature
from config.storage import local_path

# What the page shows while the chunks run.
_CHUNK_PHASE = {
    ImportFormat.JSONL: "tokenizing",
    ImportFormat.CSV: "tokenizing",
    ImportFormat.ERASER: "preparing",
    ImportFormat.BENCHMARK: "preparing",
    ImportFormat.HF: "preparing",
}


def import_job_split(job: ImportJob, attempt: str) -> ImportJob:
    """Check the whole upload, then prepare it in chunks and write it in one step (see the
    module's text)."""
    parts_discard(job.pk)  # of an earlier attempt whose worker died
    progress = ProgressThrottle(import_progress_reporter(job.pk))
    try:
        with local_path(job.upload.name, job.upload.storage) as path:
            checked = upload_check(job, path, progress)
    except Exception as exc:
        return import_job_end(job, attempt, **import_failure(exc, job.pk))
    count = checked.units
    size = max(1, settings.IMPORT_CHUNK_ROWS)
    bounds = [(start, min(start + size, count)) for start in range(0, count, size)]
    plans = [checked.plan(start, stop) if checked.plan else {} for start, stop in bounds]
    labels, warnings = checked.labels, checked.warnings
    del checked
    job_running(job.pk, attempt).update(
        phase=_CHUNK_PHASE[job.source_format],
        progress_total=count,
        progress_done=0,
        heartbeat_at=timezone.now(),
    )
    import_progress_forget(job.pk)
    ending = {"warnings": warnings} if warnings else {}
    if chunks_go_to_workers(len(bounds), enabled=settings.IMPORT_CHUNKED, job="import"):
        from celery import chord

        chord(
            task_signature(
                "annotate.tasks.import_chunk",
                job.pk,
                attempt,
                index,
                start,
                stop,
                **_plan_kwargs(plan),
            )
            for index, ((start, stop), plan) in enumerate(zip(bounds, plans, strict=True))
        )(
            task_signature(
                "annotate.tasks.import_publish", job.pk, attempt, len(bounds), labels, **ending
            )
        )
        return ImportJob.objects.get(pk=job.pk)
    for index, ((start, stop), plan) in enumerate(zip(bounds, plans, strict=True)):
        try:
            status = import_chunk_run(
                job_id=job.pk, attempt=attempt, index=index, start=start, stop=stop, plan=plan
            )
        except DatabaseError as exc:
            status = import_job_end(
                job, attempt, **import_failure(exc, job.pk, f"chunk {index}")
            ).status
        if status != "written":
            break  # the job has ended; the last step cleans up
    return import_publish_run(
        job_id=job.pk, attempt=attempt, chunks=len(bounds), labels=labels, **ending
    )


def _plan_kwargs(plan: dict) -> dict:
    # A raw-text chunk's task keeps the arguments it had before other formats were split.
    return {"plan": plan} if plan else {}
