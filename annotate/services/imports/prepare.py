"""A chunk of an import job: prepare its share of the checked upload and stage it.

A chunk reads only its units from the upload through the storage (annotate/upload_slices.py),
prepares them (the costly part: tokenizing raw texts and the benchmark's questions; token
offsets, hashes and fingerprints of ERASER documents and instances) and stages the result
as JSON lines (records.py) in a part in the storage, not in the project. The last step
writes the parts (publish.py).
"""

from __future__ import annotations

import itertools
import json
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from django.db import DatabaseError, transaction
from django.db.models import IntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import ImportFormat, ImportJob, ImportPart, JobStatus
from annotate.services.imports.benchmark import benchmark_staged_records
from annotate.services.imports.eraser import eraser_staged_records
from annotate.services.imports.huggingface import hf_staged_records
from annotate.services.imports.job import (
    import_failure,
    import_job_end,
    job_running,
    parts_folder,
)
from annotate.services.imports.raw_text import raw_staged_records
from annotate.services.imports.records import WRITE_BATCH
from config.storage import local_path, stored_part_save, stored_remove
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.sources import open_dataset_source


def import_chunk_run(
    *, job_id: int, attempt: str, index: int, start: int, stop: int, plan: dict | None = None
) -> str:
    """Prepare the units start..stop-1 of the job's upload and stage them as the chunk's
    part. Safe to run twice: the part is stored under a new name and its row then points
    to it in one update; the old one is removed afterwards.

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
            records = _STAGES[job.source_format](job, path, start, stop, plan or {}, problems)
            lines = (_json_line(record) for record in records)
            staged = 0
            while batch := list(itertools.islice(lines, WRITE_BATCH)):
                if not job_running(job_id, attempt).update(heartbeat_at=timezone.now()):
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


def _raw_records(
    job: ImportJob, path: Path, start: int, stop: int, plan: dict, problems: ProblemList
) -> Iterator[dict]:
    return raw_staged_records(
        job.project, path, job.source_format, job.source_name, start, stop, problems
    )


def _eraser_records(
    job: ImportJob, path: Path, start: int, stop: int, plan: dict, problems: ProblemList
) -> Iterator[dict]:
    with open_dataset_source(path, label=job.source_name) as source:
        yield from eraser_staged_records(job.project, source, start, stop, plan["documents"])


def _benchmark_records(
    job: ImportJob, path: Path, start: int, stop: int, plan: dict, problems: ProblemList
) -> Iterator[dict]:
    return benchmark_staged_records(
        job.project, path, job.source_name, start, stop, plan["originals"]
    )


def _hf_records(
    job: ImportJob, path: Path, start: int, stop: int, plan: dict, problems: ProblemList
) -> Iterator[dict]:
    return hf_staged_records(job.project, path, job.source_name, plan["mapping"], start, stop, plan)


_STAGES = {
    ImportFormat.JSONL: _raw_records,
    ImportFormat.CSV: _raw_records,
    ImportFormat.ERASER: _eraser_records,
    ImportFormat.BENCHMARK: _benchmark_records,
    ImportFormat.HF: _hf_records,
}


def _chunk_share(source_format: str, start: int, stop: int, plan: dict) -> str:
    """A chunk's share of the upload as its user counts (from 1)."""
    if source_format == ImportFormat.BENCHMARK:
        return f"instances {start + 1}-{stop}"
    if source_format == ImportFormat.HF:
        return f"rows {start + 1}-{stop} of the dataset"
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


def _record_part(job_id: int, attempt: str, index: int, file: dict, units: int) -> bool:
    """Point the chunk's row at its new part, if the job still runs under this attempt."""
    with transaction.atomic():
        if not job_running(job_id, attempt).select_for_update().exists():
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
    job_running(job_id, attempt).update(
        progress_done=Coalesce(Subquery(done, output_field=IntegerField()), 0),
        heartbeat_at=timezone.now(),
    )
    return True
