"""JSONL or CSV files of raw texts with labels (read by annotate/raw_text.py): the check
of a whole file, its conflicts with a project, the staging of a chunk's rows (tokenized
with spaCy), and the one-step import, which streams the file twice (checked first,
then tokenized and written a batch at a time)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotate.models import Project, TaskType
from annotate.raw_text import RawTextRow, read_raw_rows
from annotate.services.imports.publish import (
    Holdings,
    ProjectWriter,
    document_conflict,
    item_conflict,
    labels_adopt,
    project_lock,
)
from annotate.services.imports.records import (
    WRITE_BATCH,
    ImportSummary,
    PreparedDocument,
    ProgressThrottle,
    TaskFields,
    labels_check,
    staged_item,
    text_sha256,
)
from annotate.tokenization import Tokenized, tokenize_texts, tokenizer_name
from rationale_metrics.eraser import Instance
from rationale_metrics.problems import DataValidationError, ProblemList


def raw_instance(row: RawTextRow) -> Instance:
    return Instance(
        annotation_id=row.item_id,
        classification=row.label,
        docids=[d.docid for d in row.documents],
        evidences=[],
        query=row.query,
        query_type=row.query_type,
        split=row.split,
        file="",
        line=row.line,
        present_keys=(
            "annotation_id",
            "classification",
            "docids",
            "evidences",
            "query",
            "query_type",
        ),
    )


def raw_task_fields(row: RawTextRow) -> TaskFields:
    return TaskFields(
        roles=tuple(d.role for d in row.documents), answer=row.answer, options=row.options
    )


def raw_fingerprint(row: RawTextRow) -> str:
    payload = [str(row.item_id), row.label, row.split, row.query, row.query_type]
    if row.task_type == TaskType.CLASSIFICATION:
        # As single texts were always fingerprinted, so their re-imports stay unchanged.
        payload.append(row.documents[0].text_sha256)
    else:
        payload += [
            [[d.docid, d.role, d.text_sha256] for d in row.documents],
            row.answer,
            row.options,
        ]
    return text_sha256(json.dumps(payload))


def raw_reading(project: Project, source_format: str, label: str, problems: ProblemList) -> dict:
    """How read_raw_rows reads a raw-text file into this project."""
    return dict(
        source_format=source_format,
        label=label,
        problems=problems,
        max_line_bytes=settings.IMPORT_MAX_LINE_BYTES,
        task_type=project.task_type,
    )


def raw_rows_checked(
    project: Project, path: Path, source_format: str, label: str, progress: ProgressThrottle
) -> tuple[dict[str, RawTextRow], list[str]]:
    """The first pass over raw texts: every row validated, keeping only ids, labels and
    text hashes (by item id, in file order); and the labels the project adopts.

    Raises DataValidationError with every problem found, or with the first
    IMPORT_MAX_PROBLEMS of them."""
    problems = ProblemList(stop_after=settings.IMPORT_MAX_PROBLEMS)
    rows: dict[str, RawTextRow] = {}
    for count, row in enumerate(
        read_raw_rows(path, **raw_reading(project, source_format, label, problems)), start=1
    ):
        key = str(row.item_id)
        if key in rows:
            problems.add(
                label,
                row.line,
                "id",
                f"duplicate id {row.item_id!r} (first on line {rows[key].line}); "
                "rows without an id get one from their text, so this text may be repeated",
            )
        else:
            rows[key] = row
        progress("validating", count, 0)
    if not rows and not problems:
        problems.add(label, None, None, "file is empty: it has no rows")
    labels: list[str] = []
    if project.task_type != TaskType.MULTIPLE_CHOICE:
        # A multiple-choice label names one of its own row's options, checked on reading.
        labels = labels_check(
            project.labels, ((r.label, label, r.line, "label") for r in rows.values()), problems
        )
    problems.raise_if_any()
    return rows, labels


def raw_conflicts(
    held: Holdings, rows: Iterable[RawTextRow], tokenizer: str, label: str
) -> ProblemList:
    """Rows whose item, or one of whose documents, the project already holds otherwise."""
    problems = ProblemList()
    for row in rows:
        conflict = item_conflict(held, str(row.item_id), raw_fingerprint(row))
        for doc in row.documents:
            conflict = conflict or document_conflict(held, doc.docid, doc.text_sha256, tokenizer)
        if conflict:
            problems.add(label, row.line, "id", conflict)
    return problems


def raw_import(
    project: Project, path: Path, source_format: str, label: str, progress: ProgressThrottle
) -> ImportSummary:
    """Import the file at `path` in one step; DataValidationError (nothing written) on any
    problem."""
    summary = ImportSummary(source_format=source_format)
    rows, labels = raw_rows_checked(project, path, source_format, label, progress)

    tokenizer = tokenizer_name(project.language)
    with transaction.atomic():
        project = project_lock(project)
        writer = ProjectWriter(project, summary)
        raw_conflicts(writer.held, rows.values(), tokenizer, label).raise_if_any()
        labels_adopt(project, labels, summary)

        # Second pass: stream the texts again, tokenize and write a batch at a time.
        done = 0
        batch: list[RawTextRow] = []
        second_pass = ProblemList()
        for row in read_raw_rows(
            path, keep_text=True, **raw_reading(project, source_format, label, second_pass)
        ):
            batch.append(row)
            if len(batch) >= WRITE_BATCH:
                _batch_write(writer, batch, project.language, tokenizer)
                done += len(batch)
                batch = []
                progress("writing", done, len(rows))
        if batch:
            _batch_write(writer, batch, project.language, tokenizer)
            progress("writing", len(rows), len(rows))
        if second_pass:
            # The file changed between the two passes: abort rather than write half of it.
            raise DataValidationError(second_pass)
    return summary


def _batch_write(
    writer: ProjectWriter, batch: list[RawTextRow], language: str, tokenizer: str
) -> None:
    """Tokenize and write a batch of rows; rows the project already holds are counted
    unchanged, and not tokenized."""
    todo = [r for r in batch if str(r.item_id) not in writer.held.items]
    writer.summary.items_unchanged += len(batch) - len(todo)
    writer.summary.documents_unchanged += sum(len(r.documents) for r in batch) - sum(
        len(r.documents) for r in todo
    )
    raw_documents = [d for r in todo for d in r.documents]
    tokenized = tokenize_texts((d.text for d in raw_documents), language=language)
    writer.write_documents(
        [_document_prepared(raw, next(tokenized), tokenizer) for raw in raw_documents]
    )
    writer.write_instances(
        [(raw_instance(r), raw_fingerprint(r)) for r in todo],
        {str(r.item_id): raw_task_fields(r) for r in todo},
    )


def _document_prepared(raw, tokens: Tokenized, tokenizer: str) -> PreparedDocument:
    return PreparedDocument(
        docid=raw.docid,
        text=raw.text,
        token_offsets=tokens.token_offsets,
        sentence_ranges=tokens.sentence_ranges,
        tokenizer=tokenizer,
        text_sha256=raw.text_sha256,
    )


def raw_staged_records(
    project: Project,
    path: Path,
    source_format: str,
    label: str,
    start: int,
    stop: int,
    problems: ProblemList,
) -> Iterator[dict]:
    """The staged items, each with its documents tokenized, of the rows start..stop-1 of
    a checked file. A row the file no longer has as checked goes into `problems`."""
    reading = raw_reading(project, source_format, label, problems)
    tokenizer = tokenizer_name(project.language)
    rows = itertools.islice(read_raw_rows(path, keep_text=True, **reading), start, stop)
    while batch := list(itertools.islice(rows, WRITE_BATCH)):
        documents = [d for row in batch for d in row.documents]
        tokenized = tokenize_texts((d.text for d in documents), language=project.language)
        for row in batch:
            yield staged_item(
                raw_instance(row),
                raw_fingerprint(row),
                raw_task_fields(row),
                where=(label, row.line, "id"),
                documents=[
                    _document_prepared(d, next(tokenized), tokenizer) for d in row.documents
                ],
            )
