"""Imports split over the workers: checked whole, prepared in chunks, written in one
transaction. Every format goes this way.

`import_job_split` (the job's task) checks the whole upload first, as every import does:
any problem fails the job before anything is written, in the words of the one-step import.
It then cuts the upload's units into chunks of `IMPORT_CHUNK_ROWS` and, with a broker,
sends them to the workers as a Celery chord. The units are a raw-text file's rows (one
document, or the documents of a pair or a question), a benchmark file's lines (an item with
its texts), or an ERASER dataset's documents followed by its instances (the order the
one-step import writes them; annotate/upload_slices.py). A chunk reads only its units from
the upload through the storage, prepares them (the costly part: tokenizing raw texts and
the benchmark's questions; token offsets, hashes and fingerprints of ERASER documents and
instances) and stages the result as a part in the storage, not in the project
(`import_chunk_run`). The chord's callback (`import_publish_run`) reads the parts in order
and writes every row in one transaction that also marks the job succeeded: the project
shows all of the import or none of it, however many chunks ran where, and a failed chunk
fails the job with nothing written. Without a broker, with one chunk, or with
`IMPORT_CHUNKED` off, the same functions run one after the other in the job's process,
and write the same rows, in the same order, as `dataset_import` does in one step.

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
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import IntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import (
    Document,
    ImportFormat,
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
from annotate.services.benchmark_import import (
    benchmark_checked,
    benchmark_chunk_originals,
    benchmark_conflicts,
    benchmark_staged_records,
    perturbation_links_write,
)
from annotate.services.dataset_import import (
    WRITE_BATCH,
    ImportSummary,
    _adopt_labels,
    _lock_project,
    _ProjectWriter,
    _Throttled,
    document_from_staged,
    eraser_checked,
    eraser_conflicts,
    eraser_staged_records,
    import_failure,
    import_job_end,
    import_progress_forget,
    import_progress_reporter,
    item_from_staged,
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
from rationale_metrics.sources import open_dataset_source

logger = logging.getLogger(__name__)
PARTS_ROOT = "imports/parts"


def parts_folder(job_id: int) -> str:
    return f"{PARTS_ROOT}/{job_id}"


def _discard_parts(job_id: int) -> None:
    ImportPart.objects.filter(job_id=job_id).delete()
    stored_remove(parts_folder(job_id))


def _running(job_id: int, attempt: str):
    return ImportJob.objects.filter(pk=job_id, status=JobStatus.RUNNING, attempt=attempt)


@dataclasses.dataclass
class _CheckedUpload:
    """What the check of a whole upload hands on to its chunks and its last step."""

    units: int  # what the chunks cut: rows, lines, or documents then instances
    labels: list[str]  # the labels the project adopts
    warnings: list[str] = dataclasses.field(default_factory=list)
    # The arguments a chunk needs beyond its range, if any (start, stop -> plan).
    plan: Callable[[int, int], dict] | None = None


def _raw_checked(job: ImportJob, path: Path, progress: _Throttled) -> _CheckedUpload:
    rows, labels = raw_rows_checked(job.project, path, job.source_format, job.source_name, progress)
    # Checked now so that a conflict fails the job before any tokenizing; checked
    # again under the project's lock when the rows are written.
    writer = _ProjectWriter(job.project, ImportSummary(source_format=job.source_format))
    tokenizer = tokenizer_name(job.project.language)
    raw_conflicts(writer, rows.values(), tokenizer, job.source_name).raise_if_any()
    return _CheckedUpload(units=len(rows), labels=labels)


def _eraser_checked(job: ImportJob, path: Path, progress: _Throttled) -> _CheckedUpload:
    checked = eraser_checked(job.project, path, job.source_name, progress)
    writer = _ProjectWriter(job.project, ImportSummary(source_format=job.source_format))
    eraser_conflicts(writer, checked, job.source_name).raise_if_any()
    documents = len(checked.documents)
    return _CheckedUpload(
        units=documents + len(checked.instances),
        labels=checked.labels,
        warnings=checked.warnings,
        plan=lambda start, stop: {"documents": documents},
    )


def _benchmark_checked(job: ImportJob, path: Path, progress: _Throttled) -> _CheckedUpload:
    checked = benchmark_checked(job.project, path, job.source_name, progress)
    writer = _ProjectWriter(job.project, ImportSummary(source_format=job.source_format))
    benchmark_conflicts(writer, checked, job.project.language, job.source_name).raise_if_any()
    return _CheckedUpload(
        units=len(checked.instances),
        labels=checked.labels,
        plan=lambda start, stop: {"originals": benchmark_chunk_originals(checked, start, stop)},
    )


_CHECKS = {
    ImportFormat.JSONL: _raw_checked,
    ImportFormat.CSV: _raw_checked,
    ImportFormat.ERASER: _eraser_checked,
    ImportFormat.BENCHMARK: _benchmark_checked,
}


def import_job_split(job: ImportJob, attempt: str) -> ImportJob:
    """Check the whole upload, then prepare it in chunks and write it in one step (see the
    module's text)."""
    _discard_parts(job.pk)  # of an earlier attempt whose worker died
    progress = _Throttled(import_progress_reporter(job.pk))
    try:
        with local_path(job.upload.name, job.upload.storage) as path:
            checked = _CHECKS[job.source_format](job, path, progress)
    except Exception as exc:
        return import_job_end(job, attempt, **import_failure(exc, job.pk))
    count = checked.units
    size = max(1, settings.IMPORT_CHUNK_ROWS)
    bounds = [(start, min(start + size, count)) for start in range(0, count, size)]
    plans = [checked.plan(start, stop) if checked.plan else {} for start, stop in bounds]
    labels, warnings = checked.labels, checked.warnings
    del checked
    _running(job.pk, attempt).update(
        phase=_CHUNK_PHASE[job.source_format],
        progress_total=count,
        progress_done=0,
        heartbeat_at=timezone.now(),
    )
    import_progress_forget(job.pk)
    ending = {"warnings": warnings} if warnings else {}
    if chunks_go_to_workers(len(bounds), enabled=settings.IMPORT_CHUNKED, job="import"):
        from celery import chord

        from annotate.tasks import import_chunk, import_publish

        chord(
            import_chunk.si(job.pk, attempt, index, start, stop, **_plan_kwargs(plan))
            for index, ((start, stop), plan) in enumerate(zip(bounds, plans, strict=True))
        )(import_publish.si(job.pk, attempt, len(bounds), labels, **ending))
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


# What the page shows while the chunks run.
_CHUNK_PHASE = {
    ImportFormat.JSONL: "tokenizing",
    ImportFormat.CSV: "tokenizing",
    ImportFormat.ERASER: "preparing",
    ImportFormat.BENCHMARK: "preparing",
}


# ---------------------------------------------------------------- a chunk


def import_chunk_run(
    *, job_id: int, attempt: str, index: int, start: int, stop: int, plan: dict | None = None
) -> str:
    """Prepare the units start..stop-1 of the job's upload (tokenize raw texts; tokens,
    hashes and fingerprints of ERASER and benchmark documents and instances) and stage
    them as the chunk's part. Safe to run twice: the part is stored under a new name and
    its row then points to it in one update; the old one is removed afterwards.

    Returns "written", "stopped" (the job no longer runs under this attempt) or "failed".
    A database error is raised, for the task to retry."""
    job = ImportJob.objects.select_related("project").filter(pk=job_id).first()
    if job is None or job.status != JobStatus.RUNNING or job.attempt != attempt:
        return "stopped"
    problems = ProblemList()
    try:
        # An unnamed temporary file: the system frees it however the worker ends.
        with (
            local_path(job.upload.name, job.upload.storage) as path,
            tempfile.TemporaryFile() as part,
        ):
            lines = _STAGES[job.source_format](job, path, start, stop, plan or {}, problems)
            staged = 0
            while batch := list(itertools.islice(lines, WRITE_BATCH)):
                if not _running(job_id, attempt).update(heartbeat_at=timezone.now()):
                    return "stopped"
                part.writelines(batch)
                staged += len(batch)
            if problems or staged != stop - start:
                # The file changed since it was checked: fail rather than write half of it.
                problems.add(
                    job.source_name,
                    None,
                    None,
                    f"the file changed after it was checked (chunk {index} found {staged} of "
                    f"records {start}-{stop - 1})",
                )
                raise DataValidationError(problems)
            name = (
                f"{parts_folder(job_id)}/{attempt}/chunk-{index:05d}-{uuid.uuid4().hex[:8]}.jsonl"
            )
            stored = stored_part_save(name, part)
    except DatabaseError:
        raise
    except Exception as exc:
        where = f"chunk {index}, {_chunk_share(job.source_format, start, stop, plan or {})}"
        return import_job_end(job, attempt, **import_failure(exc, job_id, where)).status
    if not _record_part(job_id, attempt, index, stored, stop - start):
        return "stopped"
    return "written"


def _raw_staged_lines(
    job: ImportJob, path: Path, start: int, stop: int, plan: dict, problems: ProblemList
) -> Iterator[bytes]:
    reading = raw_reading(job.project, job.source_format, job.source_name, problems)
    rows = itertools.islice(read_raw_rows(path, keep_text=True, **reading), start, stop)
    while batch := list(itertools.islice(rows, WRITE_BATCH)):
        documents = [d for row in batch for d in row.documents]
        tokenized = tokenize_texts((d.text for d in documents), language=job.project.language)
        for row in batch:
            yield _staged_line(row, tokenized)


def _eraser_staged_lines(
    job: ImportJob, path: Path, start: int, stop: int, plan: dict, problems: ProblemList
) -> Iterator[bytes]:
    with open_dataset_source(path, label=job.source_name) as source:
        for record in eraser_staged_records(job.project, source, start, stop, plan["documents"]):
            yield _json_line(record)


def _benchmark_staged_lines(
    job: ImportJob, path: Path, start: int, stop: int, plan: dict, problems: ProblemList
) -> Iterator[bytes]:
    records = benchmark_staged_records(
        job.project, path, job.source_name, start, stop, plan["originals"]
    )
    for record in records:
        yield _json_line(record)


_STAGES = {
    ImportFormat.JSONL: _raw_staged_lines,
    ImportFormat.CSV: _raw_staged_lines,
    ImportFormat.ERASER: _eraser_staged_lines,
    ImportFormat.BENCHMARK: _benchmark_staged_lines,
}


def _chunk_share(source_format: str, start: int, stop: int, plan: dict) -> str:
    """A chunk's share of the upload as its user counts (from 1)."""
    if source_format == ImportFormat.BENCHMARK:
        return f"instances {start + 1}-{stop}"
    if source_format != ImportFormat.ERASER:
        return f"rows {start + 1}-{stop}"
    documents, shares = plan["documents"], []
    if start < documents:
        shares.append(f"documents {start + 1}-{min(stop, documents)}")
    if stop > documents:
        shares.append(f"instances {max(start, documents) - documents + 1}-{stop - documents}")
    return " and ".join(shares)


def _json_line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def _staged_line(row: RawTextRow, tokenized: Iterator[Tokenized]) -> bytes:
    record = dataclasses.asdict(row)
    for document in record["documents"]:
        tokens = next(tokenized)
        document["tokens"] = tokens.token_offsets.tolist()
        document["sentences"] = tokens.sentence_ranges.tolist()
    return _json_line(record)


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


def import_publish_run(
    *,
    job_id: int,
    attempt: str,
    chunks: int,
    labels: list[str],
    warnings: list[str] | None = None,
) -> ImportJob:
    """Write every chunk's rows into the project, and mark the job succeeded, in one
    transaction; then remove the parts. Safe to run twice: only a job still running
    under this attempt is written."""
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.status != JobStatus.RUNNING or job.attempt != attempt:
        if job.status != JobStatus.RUNNING:
            _discard_parts(job_id)
        return job
    summary = ImportSummary(source_format=job.source_format, warnings=list(warnings or []))
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
    """Inside the publishing transaction: check the staged rows against the project under
    its lock, then write them a batch at a time, in the order of the upload."""
    project = _lock_project(job.project)
    writer = _ProjectWriter(project, summary)
    reader = StoredParts({f["name"]: f for f in files})
    if job.source_format in (ImportFormat.JSONL, ImportFormat.CSV):
        _write_raw_parts(job, writer, reader, files, labels, total)
    else:
        _write_prepared_parts(job, writer, reader, files, labels, total)


def _write_raw_parts(
    job: ImportJob,
    writer: _ProjectWriter,
    reader: StoredParts,
    files: list[dict],
    labels: list[str],
    total: int,
) -> None:
    tokenizer = tokenizer_name(writer.project.language)
    rows = (row for row, _ in _staged_rows(reader, files))
    raw_conflicts(writer, rows, tokenizer, job.source_name).raise_if_any()
    _adopt_labels(writer.project, labels, writer.summary)
    report = _Throttled(import_progress_reporter(job.pk))
    done = 0
    staged = _staged_rows(reader, files)
    while batch := list(itertools.islice(staged, WRITE_BATCH)):
        tokenized = {docid: tokens for _, found in batch for docid, tokens in found.items()}
        write_tokenized_batch(writer, [row for row, _ in batch], tokenized, tokenizer)
        done += len(batch)
        report("writing", done, total)


def _write_prepared_parts(
    job: ImportJob,
    writer: _ProjectWriter,
    reader: StoredParts,
    files: list[dict],
    labels: list[str],
    total: int,
) -> None:
    """ERASER and benchmark parts: documents and items prepared by their chunks, written
    as the one-step imports write them (annotate/services/dataset_import.py,
    benchmark_import.py), and the perturbed items then linked to their originals."""
    problems = ProblemList()
    for record in _staged_records(reader, files):
        if "document" in record:
            found = record["document"]
            conflict = writer.document_conflict(found["docid"], found["sha256"], found["tokenizer"])
            if conflict:
                problems.add(job.source_name, None, f"docs/{found['docid']}", conflict)
            continue
        found = record["item"]
        key = str(found["instance"]["annotation_id"])
        conflict = writer.item_conflict(key, found["fingerprint"])
        for document in found["documents"]:
            conflict = conflict or writer.document_conflict(
                document["docid"], document["sha256"], document["tokenizer"]
            )
        if conflict:
            problems.add(*found["where"], conflict)
    problems.raise_if_any()
    _adopt_labels(writer.project, labels, writer.summary)
    report = _Throttled(import_progress_reporter(job.pk))
    done = 0
    links = []
    records = _staged_records(reader, files)
    while batch := list(itertools.islice(records, WRITE_BATCH)):
        documents = [document_from_staged(r["document"]) for r in batch if "document" in r]
        items = [item_from_staged(r["item"]) for r in batch if "item" in r]
        fresh = [i for i in items if i.instance.key not in writer.existing_items]
        writer.summary.items_unchanged += len(items) - len(fresh)
        writer.summary.documents_unchanged += sum(
            len(i.documents) for i in items if i.instance.key in writer.existing_items
        )
        writer.write_documents(documents + [d for i in fresh for d in i.documents])
        writer.write_instances(
            [(i.instance, i.fingerprint) for i in fresh], {i.instance.key: i.fields for i in fresh}
        )
        links += [(i.instance.key, i.original, i.perturbation_types) for i in fresh if i.original]
        done += len(batch)
        report("writing", done, total)
    perturbation_links_write(writer.project, links)


def _staged_records(reader: StoredParts, files: list[dict]) -> Iterator[dict]:
    for file in files:
        with reader.open(file["name"]) as stream:
            for line in io.TextIOWrapper(stream, encoding="utf-8"):
                yield json.loads(line)


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
