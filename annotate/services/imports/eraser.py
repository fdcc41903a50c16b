"""ERASER datasets (a directory or zip: documents, and train/val/test JSON lines whose
evidence groups become reference rationale sets): the check of a whole dataset, its
conflicts with a project, the staging of a chunk's documents and instances, and the
one-step import. Tokens and sentences are kept exactly as given."""

from __future__ import annotations

import dataclasses
import json
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotate.models import ImportFormat, Project, TaskType
from annotate.services.imports.publish import (
    Holdings,
    ProjectWriter,
    document_conflict,
    item_conflict,
    labels_adopt,
    project_lock,
)
from annotate.services.imports.records import (
    GIVEN_TOKENS,
    WRITE_BATCH,
    ImportSummary,
    PreparedDocument,
    ProgressThrottle,
    TaskFields,
    labels_check,
    staged_document,
    staged_item,
    text_sha256,
)
from annotate.task_types import options_from_query
from annotate.upload_slices import eraser_documents_slice, eraser_instances_slice
from rationale_metrics.eraser import EraserDocument, Instance, read_eraser_dataset
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.sources import DatasetSource, open_dataset_source


@dataclass
class EraserChecked:
    """An ERASER dataset read and checked whole, with what the project adopts from it."""

    documents: list[EraserDocument]
    instances: list[Instance]
    task_fields: dict[str, TaskFields]
    labels: list[str]
    warnings: list[str]


def instance_fingerprint(inst: Instance) -> str:
    payload = {
        "annotation_id": inst.annotation_id,
        "classification": inst.classification,
        "docids": inst.docids,
        "query": inst.query,
        "query_type": inst.query_type,
        "split": inst.split,
        "keys": sorted(inst.present_keys),
        "extra": inst.extra,
        "evidences": [[dataclasses.asdict(ev) for ev in group] for group in inst.evidences],
    }
    return text_sha256(json.dumps(payload, sort_keys=True, default=list))


def eraser_document_prepared(doc: EraserDocument) -> PreparedDocument:
    return PreparedDocument(
        docid=doc.docid,
        text=doc.text,
        token_offsets=doc.token_offsets,
        sentence_ranges=doc.sentence_ranges,
        tokenizer=GIVEN_TOKENS,
        text_sha256=text_sha256(doc.text),
    )


def eraser_checked(
    project: Project, path: Path, label: str, progress: ProgressThrottle
) -> EraserChecked:
    """Read and check the ERASER dataset at `path` for `project`; DataValidationError
    with every problem found."""
    try:
        source = open_dataset_source(path, label=label)
    except (OSError, ValueError) as exc:
        problems = ProblemList()
        problems.add(label, None, None, str(exc))
        raise DataValidationError(problems) from exc
    with source:
        try:
            dataset = read_eraser_dataset(
                source,
                max_line_bytes=settings.IMPORT_MAX_LINE_BYTES,
                progress=lambda phase, n: progress(f"reading {phase}", n, n),
                storable_only=True,
            )
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            problems = ProblemList()
            problems.add(label, None, None, f"the archive is corrupt: {exc}")
            raise DataValidationError(problems) from exc
    instances = dataset.instances()
    problems = ProblemList()
    task_fields: dict[str, TaskFields] = {}
    if project.task_type == TaskType.MULTIPLE_CHOICE:
        # The right option is named per item, so the project keeps no label set of its own.
        task_fields = _options_of(instances, problems)
        labels = []
    else:
        labels = labels_check(
            project.labels,
            ((i.classification, i.file, i.line, "classification") for i in instances),
            problems,
        )
    problems.raise_if_any()
    return EraserChecked(
        documents=list(dataset.documents.values()),
        instances=instances,
        task_fields=task_fields,
        labels=labels,
        warnings=[
            f"{split}.jsonl is absent: imported as an empty split"
            for split in dataset.missing_splits
        ],
    )


def eraser_conflicts(
    held: Holdings,
    documents: Iterable[EraserDocument],
    instances: Iterable[Instance],
    label: str,
) -> ProblemList:
    """The documents and instances of an ERASER dataset (read from `label`) that the
    project already holds otherwise: a document is named by its docid, an instance by its
    file, line and `annotation_id`. Only those whose docid or annotation_id it holds are
    hashed: the others cannot conflict."""
    problems = ProblemList()
    for doc in documents:
        if doc.docid in held.documents:
            conflict = document_conflict(held, doc.docid, text_sha256(doc.text), GIVEN_TOKENS)
            if conflict:
                problems.add(label, None, f"docs/{doc.docid}", conflict)
    for inst in instances:
        if inst.key in held.items:
            conflict = item_conflict(held, inst.key, instance_fingerprint(inst))
            if conflict:
                problems.add(inst.file, inst.line, "annotation_id", conflict)
    return problems


def eraser_import(
    project: Project, path: Path, label: str, progress: ProgressThrottle
) -> ImportSummary:
    """Import the dataset at `path` in one step; DataValidationError (nothing written) on
    any problem."""
    summary = ImportSummary(source_format=ImportFormat.ERASER)
    checked = eraser_checked(project, path, label, progress)
    summary.warnings = checked.warnings
    instances = checked.instances
    documents = [eraser_document_prepared(d) for d in checked.documents]
    fingerprints = [(inst, instance_fingerprint(inst)) for inst in instances]

    with transaction.atomic():
        project = project_lock(project)
        writer = ProjectWriter(project, summary)
        eraser_conflicts(writer.held, checked.documents, instances, label).raise_if_any()
        labels_adopt(project, checked.labels, summary)
        total = len(documents) + len(instances)
        for start in range(0, len(documents), WRITE_BATCH):
            writer.write_documents(documents[start : start + WRITE_BATCH])
            progress("writing", start + WRITE_BATCH, total)
        for start in range(0, len(fingerprints), WRITE_BATCH):
            writer.write_instances(fingerprints[start : start + WRITE_BATCH], checked.task_fields)
            progress("writing", len(documents) + start + WRITE_BATCH, total)
    return summary


def eraser_staged_records(
    project: Project, source: DatasetSource, start: int, stop: int, documents: int
) -> Iterator[dict]:
    """The staged records of a checked dataset's units start..stop-1: its documents
    (units 0..documents-1) with their tokens and hashes, then its instances with their
    fingerprints (see annotate/upload_slices.py for the order)."""
    limit = settings.IMPORT_MAX_LINE_BYTES
    for doc in eraser_documents_slice(
        source, min(start, documents), min(stop, documents), max_line_bytes=limit
    ):
        yield staged_document(eraser_document_prepared(doc))
    problems = ProblemList()
    multiple_choice = project.task_type == TaskType.MULTIPLE_CHOICE
    for inst in eraser_instances_slice(
        source,
        max(start, documents) - documents,
        max(stop, documents) - documents,
        max_line_bytes=limit,
        problems=problems,
    ):
        options = options_from_query(inst.query) if multiple_choice else []
        yield staged_item(
            inst,
            instance_fingerprint(inst),
            TaskFields(options=options),
            where=(inst.file, inst.line, "annotation_id"),
        )
    problems.raise_if_any()  # the file changed after it was checked


def _options_of(instances: list[Instance], problems: ProblemList) -> dict[str, TaskFields]:
    """CoS-E-style items keep their query, and their options are also read out of it."""
    found = {}
    for inst in instances:
        options = options_from_query(inst.query)
        if not options:
            continue
        if inst.classification is not None and inst.classification not in options:
            problems.add(
                inst.file,
                inst.line,
                "classification",
                f"{inst.classification!r} is not one of the options in the query {options}",
            )
        found[inst.key] = TaskFields(options=options)
    return found
