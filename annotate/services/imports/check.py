"""The first step of an import job: tell the upload's format, and check the whole upload
before anything is prepared or written. Any problem fails the job with every problem
named by file, line and field, in the words of the one-step import; a conflict with
what the project holds is found now, before any tokenizing, and again under the
project's lock when the rows are written (publish.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from annotate.benchmark_mapping import SNIFF_BYTES, looks_like_benchmark
from annotate.models import ImportFormat, ImportJob
from annotate.services.imports.benchmark import (
    benchmark_checked,
    benchmark_chunk_originals,
    benchmark_conflicts,
)
from annotate.services.imports.eraser import eraser_checked, eraser_conflicts
from annotate.services.imports.huggingface import (
    HF_ZIP_MEMBERS,
    hf_checked,
    hf_chunk_plan,
    hf_conflicts,
)
from annotate.services.imports.publish import holdings_read
from annotate.services.imports.raw_text import raw_conflicts, raw_rows_checked
from annotate.services.imports.records import ProgressThrottle
from annotate.tokenization import tokenizer_name
from config.exceptions import ApplicationError


@dataclass
class CheckedUpload:
    """What the check of a whole upload hands on to its chunks and its last step."""

    units: int  # what the chunks cut: rows, lines, or documents then instances
    labels: list[str]  # the labels the project adopts
    warnings: list[str] = field(default_factory=list)
    # The arguments a chunk needs beyond its range, if any (start, stop -> plan).
    plan: Callable[[int, int], dict] | None = None


def _zip_first_member(head: bytes) -> str:
    """The name of a zip's first member, from its local file header (at the start)."""
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        return ""
    length = int.from_bytes(head[26:28], "little")
    return head[30 : 30 + length].decode("utf-8", "replace")


def detect_import_format(filename: str, head: bytes = b"") -> str:
    """The format of a file named `filename` whose first bytes are `head`: a .parquet or
    .arrow file is a Hugging Face dataset, and so is a .zip whose first member is a data
    file or a `datasets` listing (as the `hf` export and `save_to_disk` write them); another
    .zip is ERASER; a first line with `sent_id` and `sample_type` is the fine-grained
    benchmark's, whatever the extension (its published files end in .txt or .jsonl); else
    .jsonl or .csv raw texts."""
    lowered = filename.lower()
    if lowered.endswith((".parquet", ".arrow")):
        return ImportFormat.HF
    if lowered.endswith(".zip"):
        if _zip_first_member(head).endswith(HF_ZIP_MEMBERS):
            return ImportFormat.HF
        return ImportFormat.ERASER
    if looks_like_benchmark(head):
        return ImportFormat.BENCHMARK
    if lowered.endswith(".jsonl"):
        return ImportFormat.JSONL
    if lowered.endswith(".csv"):
        return ImportFormat.CSV
    raise ApplicationError(
        f"cannot tell the format of {filename!r}: expected a .zip (ERASER, or a Hugging Face "
        "dataset), a .parquet or .arrow file, a .jsonl or .csv file, or the fine-grained "
        "benchmark's JSON lines"
    )


def file_head(path: Path) -> bytes:
    """The first bytes of the file at `path`, by which its format is told."""
    try:
        with open(path, "rb") as stream:
            return stream.read(SNIFF_BYTES)
    except OSError:
        return b""  # a missing file is reported by the import itself


def upload_check(job: ImportJob, path: Path, progress: ProgressThrottle) -> CheckedUpload:
    """Check the job's whole upload at `path`; DataValidationError with every problem."""
    return _CHECKS[job.source_format](job, path, progress)


def _raw_checked(job: ImportJob, path: Path, progress: ProgressThrottle) -> CheckedUpload:
    rows, labels = raw_rows_checked(job.project, path, job.source_format, job.source_name, progress)
    tokenizer = tokenizer_name(job.project.language)
    held = holdings_read(job.project)
    raw_conflicts(held, rows.values(), tokenizer, job.source_name).raise_if_any()
    return CheckedUpload(units=len(rows), labels=labels)


def _eraser_checked(job: ImportJob, path: Path, progress: ProgressThrottle) -> CheckedUpload:
    checked = eraser_checked(job.project, path, job.source_name, progress)
    held = holdings_read(job.project)
    eraser_conflicts(held, checked.documents, checked.instances, job.source_name).raise_if_any()
    documents = len(checked.documents)
    return CheckedUpload(
        units=documents + len(checked.instances),
        labels=checked.labels,
        warnings=checked.warnings,
        plan=lambda start, stop: {"documents": documents},
    )


def _benchmark_checked(job: ImportJob, path: Path, progress: ProgressThrottle) -> CheckedUpload:
    checked = benchmark_checked(job.project, path, job.source_name, progress)
    held = holdings_read(job.project)
    benchmark_conflicts(held, checked, job.project.language, job.source_name).raise_if_any()
    return CheckedUpload(
        units=len(checked.instances),
        labels=checked.labels,
        plan=lambda start, stop: {"originals": benchmark_chunk_originals(checked, start, stop)},
    )


def _hf_checked(job: ImportJob, path: Path, progress: ProgressThrottle) -> CheckedUpload:
    checked = hf_checked(
        job.project, path, job.source_name, (job.options or {}).get("mapping"), progress
    )
    held = holdings_read(job.project)
    hf_conflicts(held, checked, tokenizer_name(job.project.language)).raise_if_any()
    return CheckedUpload(
        units=len(checked.rows),
        labels=checked.labels,
        plan=lambda start, stop: hf_chunk_plan(checked, start, stop),
    )


_CHECKS = {
    ImportFormat.JSONL: _raw_checked,
    ImportFormat.CSV: _raw_checked,
    ImportFormat.ERASER: _eraser_checked,
    ImportFormat.BENCHMARK: _benchmark_checked,
    ImportFormat.HF: _hf_checked,
}
