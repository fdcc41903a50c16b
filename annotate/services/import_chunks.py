"""Imports of raw texts split over the workers: checked whole, tokenized in chunks of
rows, written in one transaction.

`import_job_split` (the job's task) checks every row first, as every import does: any
problem fails the job before anything is written. It then cuts the rows into chunks of
`IMPORT_CHUNK_ROWS` (a row is one document, or the documents of a pair or a question),
and, with a broker, sends them to the workers as a Celery chord. A chunk reads its rows
from the upload through the storage, tokenizes their documents (the costly part) and
stages the result as a part in the storage, not in the project (`import_chunk_run`). The
chord's callback (`import_publish_run`) reads the parts in order and writes every row in
one transaction that also marks the job succeeded: the project shows all of the import or
none of it, however many chunks ran where, and a failed chunk fails the job with nothing
written. Without a broker, with one chunk, or with `IMPORT_CHUNKED` off, the same
functions run one after the other in the job's process, and write the same rows.

Attempt tokens make a chunk or a last step of a superseded attempt do nothing; a chunk
run twice replaces its part and counts once.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import logging
import tempfile
import uuid
from collections.abc import Iterator

import numpy as np
from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import IntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import (
    Document,
    ImportJob,
    ImportPart,
    Item,
    ItemDocument,
    JobStatus,
    RationaleSet,
    RationaleSpan,
)
from annotate.raw_text import RawDocument, RawTextRow, read_raw_rows
from annotate.services.assignments import project_fill_rows_sync
from annotate.services.dataset_import import (
    WRITE_BATCH,
    ImportSummary,
    _adopt_labels,
    _lock_project,
    _ProjectWriter,
    _Throttled,
    import_failure,
    import_job_end,
    import_progress_forget,
    import_progress_reporter,
    raw_conflicts,
    raw_reading,
    raw_rows_checked,
    write_tokenized_batch,
)
from annotate.tokenization import Tokenized, tokenize_texts, tokenizer_name
from config.bulk_sql import statistics_refresh
from config.exceptions import ApplicationError
from config.job_chunks import chunks_go_to_workers
from config.storage import StoredParts, local_path, stored_part_save, stored_remove
from rationale_metrics.problems import DataValidationError, ProblemList

logger = logging.getLogger(__name__)
PARTS_ROOT = "imports/parts"


def parts_folder(job_id: int) -> str:
    return f"{PARTS_ROOT}/{job_id}"


def _discard_parts(job_id: int) -> None:
    ImportPart.objects.filter(job_id=job_id).delete()
    stored_remove(parts_folder(job_id))


def _running(job_id: int, attempt: str):
    return ImportJob.objects.filter(pk=job_id, status=JobStatus.RUNNING, attempt=attempt)


def import_job_split(job: ImportJob, attempt: str) -> ImportJob:
    """Check every row of the job's raw texts, then tokenize them in chunks and write
    them in one step (see the module's text)."""
    _discard_parts(job.pk)  # of an earlier attempt whose worker died
    progress = _Throttled(import_progress_reporter(job.pk))
    try:
        with local_path(job.upload.name, job.upload.storage) as path:
            rows, labels = raw_rows_checked(
                job.project, path, job.source_format, job.source_name, progress
            )
        # Checked now so that a conflict fails the job before any tokenizing; checked
        # again under the project's lock when the rows are written.
        writer = _ProjectWriter(job.project, ImportSummary(source_format=job.source_format))
        tokenizer = tokenizer_name(job.project.language)
        raw_conflicts(writer, rows.values(), tokenizer, job.source_name).raise_if_any()
    except Exception as exc:
        return import_job_end(job, attempt, **import_failure(exc, job.pk))
    count = len(rows)
    del rows, writer
    size = max(1, settings.IMPORT_CHUNK_ROWS)
    bounds = [(start, min(start + size, count)) for start in range(0, count, size)]
    _running(job.pk, attempt).update(
        phase="tokenizing", progress_total=count, progress_done=0, heartbeat_at=timezone.now()
    )
    import_progress_forget(job.pk)
    if chunks_go_to_workers(len(bounds), enabled=settings.IMPORT_CHUNKED, job="import"):
        from celery import chord

        from annotate.tasks import import_chunk, import_publish

        chord(
            import_chunk.si(job.pk, attempt, index, start, stop)
            for index, (start, stop) in enumerate(bounds)
        )(import_publish.si(job.pk, attempt, len(bounds), labels))
        return ImportJob.objects.get(pk=job.pk)
    for index, (start, stop) in enumerate(bounds):
        try:
            status = import_chunk_run(
                job_id=job.pk, attempt=attempt, index=index, start=start, stop=stop
            )
        except DatabaseError as exc:
            status = import_job_end(
                job, attempt, **import_failure(exc, job.pk, f"chunk {index}")
            ).status
        if status != "written":
            break  # the job has ended; the last step cleans up
    return import_publish_run(job_id=job.pk, attempt=attempt, chunks=len(bounds), labels=labels)


# ---------------------------------------------------------------- a chunk


def import_chunk_run(*, job_id: int, attempt: str, index: int, start: int, stop: int) -> str:
    """Tokenize the rows start..stop-1 of the job's file and stage them as the chunk's
    part. Safe to run twice: the part is stored under a new name and its row then points
    to it in one update; the old one is removed afterwards.

    Returns "written", "stopped" (the job no longer runs under this attempt) or "failed".
    A database error is raised, for the task to retry."""
    job = ImportJob.objects.select_related("project").filter(pk=job_id).first()
    if job is None or job.status != JobStatus.RUNNING or job.attempt != attempt:
        return "stopped"
    project = job.project
    problems = ProblemList()
    try:
        # An unnamed temporary file: the system frees it however the worker ends.
        with (
            local_path(job.upload.name, job.upload.storage) as path,
            tempfile.TemporaryFile() as part,
        ):
            rows = itertools.islice(
                read_raw_rows(
                    path,
                    keep_text=True,
                    **raw_reading(project, job.source_format, job.source_name, problems),
                ),
                start,
                stop,
            )
            staged = 0
            while batch := list(itertools.islice(rows, WRITE_BATCH)):
                if not _running(job_id, attempt).update(heartbeat_at=timezone.now()):
                    return "stopped"
                documents = [d for row in batch for d in row.documents]
                tokenized = tokenize_texts((d.text for d in documents), language=project.language)
                for row in batch:
                    part.write(_staged_line(row, tokenized))
                staged += len(batch)
            if problems or staged != stop - start:
                # The file changed since it was checked: fail rather than write half of it.
                problems.add(
                    job.source_name,
                    None,
                    None,
                    f"the file changed after it was checked (chunk {index} found {staged} of "
                    f"rows {start}-{stop - 1})",
                )
                raise DataValidationError(problems)
            name = (
                f"{parts_folder(job_id)}/{attempt}/chunk-{index:05d}-{uuid.uuid4().hex[:8]}.jsonl"
            )
            stored = stored_part_save(name, part)
    except DatabaseError:
        raise
    except Exception as exc:
        where = f"chunk {index}, rows {start + 1}-{stop}"
        return import_job_end(job, attempt, **import_failure(exc, job_id, where)).status
    if not _record_part(job_id, attempt, index, stored, stop - start):
        return "stopped"
    return "written"


def _staged_line(row: RawTextRow, tokenized: Iterator[Tokenized]) -> bytes:
    record = dataclasses.asdict(row)
    for document in record["documents"]:
        tokens = next(tokenized)
        document["tokens"] = tokens.token_offsets.tolist()
        document["sentences"] = tokens.sentence_ranges.tolist()
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def _record_part(job_id: int, attempt: str, index: int, file: dict, units: int) -> bool:
    """Point the chunk's row at its new part, if the job still runs under this attempt."""
    with transaction.atomic():
        if not _running(job_id, attempt).select_for_update().exists():
            stored_remove(file["name"])
            return False
        previous = ImportPart.objects.select_for_update().filter(job_id=job_id, index=index).first()
        ImportPart.objects.update_or_create(
            job_id=job_id, index=index, defaults={"attempt": attempt, "file": file, "units": units}
        )
    if previous is not None and previous.file.get("name") != file["name"]:
        stored_remove(previous.file["name"])  # a chunk run again
    done = (
        ImportPart.objects.filter(job_id=OuterRef("pk"), attempt=attempt)
        .values("job_id")
        .annotate(total=Sum("units"))
        .values("total")
    )
    # Counted from the rows, not added to: a chunk run twice counts once.
    _running(job_id, attempt).update(
        progress_done=Coalesce(Subquery(done, output_field=IntegerField()), 0),
        heartbeat_at=timezone.now(),
    )
    return True


# ---------------------------------------------------------------- the last step


class _Superseded(Exception):
    """The job ended, or was started again, while its rows were being written."""


def import_publish_run(*, job_id: int, attempt: str, chunks: int, labels: list[str]) -> ImportJob:
    """Write every chunk's rows into the project, and mark the job succeeded, in one
    transaction; then remove the parts. Safe to run twice: only a job still running
    under this attempt is written."""
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.status != JobStatus.RUNNING or job.attempt != attempt:
        if job.status != JobStatus.RUNNING:
            _discard_parts(job_id)
        return job
    summary = ImportSummary(source_format=job.source_format)
    try:
        parts = dict(
            ImportPart.objects.filter(job_id=job_id, attempt=attempt).values_list("index", "file")
        )
        missing = [str(index) for index in range(chunks) if index not in parts]
        if missing:
            raise ApplicationError(
                f"{len(missing)} chunk(s) did not finish ({', '.join(missing[:5])}); "
                "start the import again"
            )
        files = [parts[index] for index in range(chunks)]
        total = sum(
            ImportPart.objects.filter(job_id=job_id, attempt=attempt).values_list(
                "units", flat=True
            )
        )
        with transaction.atomic():
            if not _running(job_id, attempt).select_for_update().exists():
                raise _Superseded
            _write_parts(job, files, labels, summary, total)
            # As after any import: the new items join every variant's pool before
            # anyone asks for work.
            project_fill_rows_sync(project=job.project)
            _discard_parts(job_id)  # before the row says "succeeded", so then they are gone
            _running(job_id, attempt).update(
                status=JobStatus.SUCCEEDED,
                summary=summary.as_dict(),
                progress_done=summary.items_created + summary.items_unchanged,
                progress_total=summary.items_created + summary.items_unchanged,
                phase="done",
                finished_at=timezone.now(),
            )
    except _Superseded:
        done = ImportJob.objects.get(pk=job_id)
    except IntegrityError as exc:
        # Only reachable when another import into the same project raced this one.
        problems = ProblemList()
        problems.add(
            job.source_name, None, None, f"conflicting concurrent import, nothing written: {exc}"
        )
        done = import_job_end(job, attempt, **import_failure(DataValidationError(problems), job_id))
    except Exception as exc:
        done = import_job_end(job, attempt, **import_failure(exc, job_id, "writing"))
    else:
        # The planner learns the tables' new sizes.
        statistics_refresh(Document, Item, ItemDocument, RationaleSet, RationaleSpan)
        if settings.IMPORT_UPLOAD_RETENTION_DAYS == 0:
            job.upload.delete(save=False)
            ImportJob.objects.filter(pk=job_id).update(upload="")
        import_progress_forget(job_id)
        done = ImportJob.objects.get(pk=job_id)
    _discard_parts(job_id)
    return done


def _write_parts(
    job: ImportJob, files: list[dict], labels: list[str], summary: ImportSummary, total: int
) -> None:
    """Inside the publishing transaction: check the rows against the project under its
    lock, then write them a batch at a time, in the order of the file."""
    project = _lock_project(job.project)
    writer = _ProjectWriter(project, summary)
    tokenizer = tokenizer_name(project.language)
    reader = StoredParts({f["name"]: f for f in files})
    rows = (row for row, _ in _staged_rows(reader, files))
    raw_conflicts(writer, rows, tokenizer, job.source_name).raise_if_any()
    _adopt_labels(project, labels, summary)
    report = _Throttled(import_progress_reporter(job.pk))
    done = 0
    staged = _staged_rows(reader, files)
    while batch := list(itertools.islice(staged, WRITE_BATCH)):
        tokenized = {docid: tokens for _, found in batch for docid, tokens in found.items()}
        write_tokenized_batch(writer, [row for row, _ in batch], tokenized, tokenizer)
        done += len(batch)
        report("writing", done, total)


def _staged_rows(
    reader: StoredParts, files: list[dict]
) -> Iterator[tuple[RawTextRow, dict[str, Tokenized]]]:
    """The parts' rows in order, each with its documents' tokens by docid. A part changed
    since its chunk stored it fails the read (and so the transaction) at its end."""
    for file in files:
        with reader.open(file["name"]) as stream:
            for line in io.TextIOWrapper(stream, encoding="utf-8"):
                record = json.loads(line)
                documents, tokenized = [], {}
                for document in record.pop("documents"):
                    tokenized[document["docid"]] = Tokenized(
                        token_offsets=np.asarray(document.pop("tokens"), dtype=np.int64).reshape(
                            -1, 2
                        ),
                        sentence_ranges=np.asarray(
                            document.pop("sentences"), dtype=np.int64
                        ).reshape(-1, 2),
                    )
                    documents.append(RawDocument(**document))
                yield RawTextRow(**record, documents=documents), tokenized


def import_job_fail(*, job_id: int, attempt: str, error: str) -> ImportJob:
    job = ImportJob.objects.get(pk=job_id)
    return import_job_end(job, attempt, status=JobStatus.FAILED, error=error)


def import_parts_sweep() -> int:
    """The staged chunks of imports no longer running (their worker was lost, or their
    last step never came), removed; returns how many jobs had some."""
    ended = ImportPart.objects.exclude(job__status=JobStatus.RUNNING)
    job_ids = sorted(set(ended.values_list("job_id", flat=True)))
    for job_id in job_ids:
        _discard_parts(job_id)
    return len(job_ids)
