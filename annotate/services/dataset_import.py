"""Import datasets into a project: validate everything first, then write in one transaction.

Two sources: an ERASER directory or zip (tokens and sentences kept exactly as given,
evidence groups become reference rationale sets), and JSONL/CSV of raw texts (tokenized
with spaCy). Any problem aborts the import with a report naming file, line and field,
and nothing is written. Re-importing the same data creates nothing new.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
import uuid
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from annotate.benchmark_mapping import SNIFF_BYTES, looks_like_benchmark
from annotate.models import (
    Document,
    DocumentRole,
    ImportFormat,
    ImportJob,
    Item,
    ItemDocument,
    JobStatus,
    Project,
    RationaleSet,
    RationaleSpan,
    TaskType,
)
from annotate.raw_text import RawTextRow, read_raw_rows
from annotate.services.assignments import project_fill_rows_sync
from annotate.task_types import options_from_query
from annotate.tokenization import Tokenized, tokenize_texts, tokenizer_name
from annotate.upload_slices import eraser_documents_slice, eraser_instances_slice
from config.bulk_sql import statistics_refresh
from config.exceptions import ApplicationError
from config.job_queue import task_send_on_commit
from rationale_metrics.eraser import EraserDocument, Evidence, Instance, read_eraser_dataset
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.sources import DatasetSource, open_dataset_source

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[str, int, int], None]
WRITE_BATCH = 500
# The tokenizer of documents whose tokens the file gives (ERASER, the benchmark's texts).
GIVEN_TOKENS = "given"


@dataclass
class ImportSummary:
    source_format: str
    documents_created: int = 0
    documents_unchanged: int = 0
    items_created: int = 0
    items_unchanged: int = 0
    reference_sets_created: int = 0
    spans_created: int = 0
    labels_added: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class _PreparedDocument:
    docid: str
    text: str
    token_offsets: np.ndarray
    sentence_ranges: np.ndarray
    tokenizer: str
    text_sha256: str


@dataclass
class _TaskFields:
    """What an item's task type adds to an ERASER instance: the role of each document
    (by position), the reading-comprehension answer, the multiple-choice options."""

    roles: tuple[str, ...] = ()
    answer: dict | None = None
    options: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- staged records
# A chunk of an ERASER or benchmark import stages its prepared documents and instances as
# JSON lines, in the order the one-step import writes them; the last step writes them
# back through _ProjectWriter (annotate/services/import_chunks.py).


@dataclass
class StagedItem:
    instance: Instance
    fingerprint: str
    fields: _TaskFields
    where: tuple  # (file, line, field) a conflict is named by
    documents: list[_PreparedDocument]  # written with the item (the benchmark's own texts)
    original: str | None  # the annotation_id of the item this one perturbs
    perturbation_types: list[str]


def staged_document(doc: _PreparedDocument) -> dict:
    return {
        "document": {
            "docid": doc.docid,
            "text": doc.text,
            "tokens": doc.token_offsets.ravel().tolist(),
            "sentences": doc.sentence_ranges.ravel().tolist(),
            "tokenizer": doc.tokenizer,
            "sha256": doc.text_sha256,
        }
    }


def document_from_staged(record: dict) -> _PreparedDocument:
    return _PreparedDocument(
        docid=record["docid"],
        text=record["text"],
        token_offsets=np.asarray(record["tokens"], dtype=np.int64).reshape(-1, 2),
        sentence_ranges=np.asarray(record["sentences"], dtype=np.int64).reshape(-1, 2),
        tokenizer=record["tokenizer"],
        text_sha256=record["sha256"],
    )


_EVIDENCE_FIELDS = tuple(f.name for f in dataclasses.fields(Evidence))
_INSTANCE_FIELDS = tuple(f.name for f in dataclasses.fields(Instance) if f.name != "evidences")


def staged_item(
    inst: Instance,
    fingerprint: str,
    fields: _TaskFields,
    *,
    where: tuple,
    documents: Iterable[_PreparedDocument] = (),
    original: str | None = None,
    perturbation_types: Iterable[str] = (),
) -> dict:
    instance = {name: getattr(inst, name) for name in _INSTANCE_FIELDS}
    instance["evidences"] = [
        [{name: getattr(ev, name) for name in _EVIDENCE_FIELDS} for ev in group]
        for group in inst.evidences
    ]
    return {
        "item": {
            "instance": instance,
            "fingerprint": fingerprint,
            "fields": {
                "roles": list(fields.roles),
                "answer": fields.answer,
                "options": fields.options,
            },
            "where": list(where),
            "documents": [staged_document(d)["document"] for d in documents],
            "original": original,
            "perturbation_types": list(perturbation_types),
        }
    }


def item_from_staged(record: dict) -> StagedItem:
    instance = dict(record["instance"])
    instance["evidences"] = [
        [Evidence(**{**ev, "present_keys": tuple(ev["present_keys"])}) for ev in group]
        for group in instance["evidences"]
    ]
    instance["present_keys"] = tuple(instance["present_keys"])
    fields = record["fields"]
    return StagedItem(
        instance=Instance(**instance),
        fingerprint=record["fingerprint"],
        fields=_TaskFields(
            roles=tuple(fields["roles"]), answer=fields["answer"], options=fields["options"]
        ),
        where=tuple(record["where"]),
        documents=[document_from_staged(d) for d in record["documents"]],
        original=record["original"],
        perturbation_types=record["perturbation_types"],
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _instance_fingerprint(inst: Instance) -> str:
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
    return _sha256(json.dumps(payload, sort_keys=True, default=list))


def _evidence_source_fields(ev) -> dict:
    """What an export needs, beyond the token range, to write the evidence back unchanged."""
    fields = {"keys": list(ev.present_keys)}
    for key in ("start_sentence", "end_sentence", "text"):
        if key in ev.present_keys:
            fields[key] = getattr(ev, key)
    if ev.extra:
        fields["extra"] = ev.extra
    return fields


class _Throttled:
    """Calls the progress callback at most every `interval` seconds (and always at the end)."""

    def __init__(self, callback: ProgressCallback | None, interval: float = 0.5):
        self.callback = callback
        self.interval = interval
        self.last = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.callback is None:
            return
        now = time.monotonic()
        if done >= total or now - self.last >= self.interval:
            self.last = now
            self.callback(phase, done, total)


def _check_labels(
    project: Project, labelled: Iterable[tuple[str | None, str, int, str]], problems: ProblemList
) -> list[str]:
    """Labels must be in the project's label set; a project without one adopts the data's."""
    seen: list[str] = []
    for value, file, line, field_name in labelled:
        if value is None:
            continue
        if project.labels and value not in project.labels:
            problems.add(
                file,
                line,
                field_name,
                f"label {value!r} is not one of the project's labels {project.labels}",
            )
        elif value not in seen:
            seen.append(value)
    return [] if project.labels else sorted(seen)


class _ProjectWriter:
    """Writes prepared documents and instances into a locked project, skipping unchanged rows."""

    def __init__(self, project: Project, summary: ImportSummary):
        self.project = project
        self.summary = summary
        self.existing_docs = {
            docid: (pk, sha, tok)
            for pk, docid, sha, tok in Document.objects.filter(project=project).values_list(
                "pk", "docid", "text_sha256", "tokenizer"
            )
        }
        self.existing_items = dict(
            Item.objects.filter(project=project).values_list("annotation_id", "source_sha256")
        )
        self.doc_pks = {docid: row[0] for docid, row in self.existing_docs.items()}

    def document_conflict(self, docid: str, sha: str, tokenizer: str) -> str | None:
        if docid not in self.existing_docs:
            return None
        _, old_sha, old_tokenizer = self.existing_docs[docid]
        if old_sha != sha:
            return f"document {docid!r} already exists in this project with a different text"
        if old_tokenizer != tokenizer:
            return (
                f"document {docid!r} already exists in this project, tokenized by "
                f"{old_tokenizer!r} rather than {tokenizer!r}"
            )
        return None

    def item_conflict(self, annotation_id: str, fingerprint: str) -> str | None:
        old = self.existing_items.get(annotation_id)
        if old is not None and old != fingerprint:
            return (
                f"annotation_id {annotation_id!r} already exists in this project with other content"
            )
        return None

    def write_documents(self, documents: list[_PreparedDocument]) -> None:
        fresh = []
        for doc in documents:
            if doc.docid in self.existing_docs:
                self.summary.documents_unchanged += 1
                continue
            fresh.append(
                Document(
                    project=self.project,
                    docid=doc.docid,
                    text=doc.text,
                    tokens=doc.token_offsets,
                    sentences=doc.sentence_ranges,
                    token_count=len(doc.token_offsets),
                    text_sha256=doc.text_sha256,
                    tokenizer=doc.tokenizer,
                )
            )
        for row in Document.objects.bulk_create(fresh, batch_size=WRITE_BATCH):
            self.doc_pks[row.docid] = row.pk
            self.existing_docs[row.docid] = (row.pk, row.text_sha256, row.tokenizer)
        self.summary.documents_created += len(fresh)

    def write_instances(
        self,
        instances: list[tuple[Instance, str]],
        task_fields: dict[str, _TaskFields] | None = None,
    ) -> None:
        fresh = [(inst, fp) for inst, fp in instances if inst.key not in self.existing_items]
        self.summary.items_unchanged += len(instances) - len(fresh)
        plain = _TaskFields()
        extras = [(task_fields or {}).get(inst.key, plain) for inst, _ in fresh]
        items = Item.objects.bulk_create(
            [
                Item(
                    project=self.project,
                    annotation_id=inst.key,
                    annotation_id_is_int=isinstance(inst.annotation_id, int),
                    query=inst.query,
                    query_type=inst.query_type,
                    label=inst.classification,
                    split=inst.split,
                    declared_docids=inst.docids,
                    source_keys=list(inst.present_keys),
                    source_extra=inst.extra,
                    source_sha256=fp,
                    answer=extra.answer,
                    options=extra.options,
                )
                for (inst, fp), extra in zip(fresh, extras, strict=True)
            ],
            batch_size=WRITE_BATCH,
        )
        links, sets, set_spans = [], [], []
        for item, (inst, fp), extra in zip(items, fresh, extras, strict=True):
            self.existing_items[item.annotation_id] = fp
            for position, docid in enumerate(inst.resolved_docids()):
                role = extra.roles[position] if position < len(extra.roles) else DocumentRole.TEXT
                links.append(
                    ItemDocument(
                        item=item,
                        document_id=self.doc_pks[docid],
                        position=position,
                        role=role,
                    )
                )
            for g, group in enumerate(inst.evidences):
                sets.append(RationaleSet(reference_item=item, position=g))
                set_spans.append(group)
        ItemDocument.objects.bulk_create(links, batch_size=WRITE_BATCH)
        RationaleSet.objects.bulk_create(sets, batch_size=WRITE_BATCH)
        spans = [
            RationaleSpan(
                rationale_set=rset,
                document_id=self.doc_pks[ev.docid],
                start_token=ev.start_token,
                end_token=ev.end_token,
                position=e,
                source_fields=_evidence_source_fields(ev),
            )
            for rset, group in zip(sets, set_spans, strict=True)
            for e, ev in enumerate(group)
        ]
        RationaleSpan.objects.bulk_create(spans, batch_size=WRITE_BATCH)
        self.summary.items_created += len(items)
        self.summary.reference_sets_created += len(sets)
        self.summary.spans_created += len(spans)


def _lock_project(project: Project) -> Project:
    return Project.objects.select_for_update(no_key=True).get(pk=project.pk)


def _adopt_labels(project: Project, labels: list[str], summary: ImportSummary) -> None:
    if labels:
        project.labels = labels
        project.save(update_fields=["labels"])
        summary.labels_added = labels


def _prepare_eraser_document(doc: EraserDocument) -> _PreparedDocument:
    return _PreparedDocument(
        docid=doc.docid,
        text=doc.text,
        token_offsets=doc.token_offsets,
        sentence_ranges=doc.sentence_ranges,
        tokenizer=GIVEN_TOKENS,
        text_sha256=_sha256(doc.text),
    )


@dataclass
class EraserChecked:
    """An ERASER dataset read and checked whole, with what the project adopts from it."""

    documents: list[EraserDocument]
    instances: list[Instance]
    task_fields: dict[str, _TaskFields]
    labels: list[str]
    warnings: list[str]


def eraser_checked(project: Project, path: Path, label: str, progress: _Throttled) -> EraserChecked:
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
    task_fields: dict[str, _TaskFields] = {}
    if project.task_type == TaskType.MULTIPLE_CHOICE:
        # The right option is named per item, so the project keeps no label set of its own.
        task_fields = _eraser_options(instances, problems)
        labels = []
    else:
        labels = _check_labels(
            project,
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


def eraser_conflicts(writer: _ProjectWriter, checked: EraserChecked, label: str) -> ProblemList:
    """Documents and instances the project already holds otherwise. Only those whose docid
    or annotation_id it holds are hashed: the others cannot conflict."""
    problems = ProblemList()
    for doc in checked.documents:
        if doc.docid in writer.existing_docs:
            conflict = writer.document_conflict(doc.docid, _sha256(doc.text), GIVEN_TOKENS)
            if conflict:
                problems.add(label, None, f"docs/{doc.docid}", conflict)
    for inst in checked.instances:
        if inst.key in writer.existing_items:
            conflict = writer.item_conflict(inst.key, _instance_fingerprint(inst))
            if conflict:
                problems.add(inst.file, inst.line, "annotation_id", conflict)
    return problems


def _import_eraser(project: Project, path: Path, label: str, progress: _Throttled) -> ImportSummary:
    summary = ImportSummary(source_format=ImportFormat.ERASER)
    checked = eraser_checked(project, path, label, progress)
    summary.warnings = checked.warnings
    instances = checked.instances
    documents = [_prepare_eraser_document(d) for d in checked.documents]
    fingerprints = [(inst, _instance_fingerprint(inst)) for inst in instances]
    problems = ProblemList()

    with transaction.atomic():
        project = _lock_project(project)
        writer = _ProjectWriter(project, summary)
        for doc in documents:
            conflict = writer.document_conflict(doc.docid, doc.text_sha256, doc.tokenizer)
            if conflict:
                problems.add(label, None, f"docs/{doc.docid}", conflict)
        for inst, fp in fingerprints:
            conflict = writer.item_conflict(inst.key, fp)
            if conflict:
                problems.add(inst.file, inst.line, "annotation_id", conflict)
        problems.raise_if_any()
        _adopt_labels(project, checked.labels, summary)
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
        yield staged_document(_prepare_eraser_document(doc))
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
            _instance_fingerprint(inst),
            _TaskFields(options=options),
            where=(inst.file, inst.line, "annotation_id"),
        )
    problems.raise_if_any()  # the file changed after it was checked


def _eraser_options(instances: list[Instance], problems: ProblemList) -> dict[str, _TaskFields]:
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
        found[inst.key] = _TaskFields(options=options)
    return found


def _raw_instance(row: RawTextRow) -> Instance:
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


def _raw_task_fields(row: RawTextRow) -> _TaskFields:
    return _TaskFields(
        roles=tuple(d.role for d in row.documents), answer=row.answer, options=row.options
    )


def _raw_fingerprint(row: RawTextRow) -> str:
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
    return _sha256(json.dumps(payload))


def raw_rows_checked(
    project: Project, path: Path, source_format: str, label: str, progress: _Throttled
) -> tuple[dict[str, RawTextRow], list[str]]:
    """The first pass over raw texts: every row validated, keeping only ids, labels and
    text hashes (by item id, in file order); and the labels the project adopts.

    Raises DataValidationError with every problem found."""
    problems = ProblemList()
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
        labels = _check_labels(
            project, ((r.label, label, r.line, "label") for r in rows.values()), problems
        )
    problems.raise_if_any()
    return rows, labels


def raw_reading(project: Project, source_format: str, label: str, problems: ProblemList) -> dict:
    """How read_raw_rows reads a raw-text file into this project."""
    return dict(
        source_format=source_format,
        label=label,
        problems=problems,
        max_line_bytes=settings.IMPORT_MAX_LINE_BYTES,
        task_type=project.task_type,
    )


def raw_conflicts(
    writer: _ProjectWriter, rows: Iterable[RawTextRow], tokenizer: str, label: str
) -> ProblemList:
    """Rows whose item, or one of whose documents, the project already holds otherwise."""
    problems = ProblemList()
    for row in rows:
        conflict = writer.item_conflict(str(row.item_id), _raw_fingerprint(row))
        for doc in row.documents:
            conflict = conflict or writer.document_conflict(doc.docid, doc.text_sha256, tokenizer)
        if conflict:
            problems.add(label, row.line, "id", conflict)
    return problems


def _import_raw_text(
    project: Project, path: Path, source_format: str, label: str, progress: _Throttled
) -> ImportSummary:
    summary = ImportSummary(source_format=source_format)
    rows, labels = raw_rows_checked(project, path, source_format, label, progress)

    tokenizer = tokenizer_name(project.language)
    with transaction.atomic():
        project = _lock_project(project)
        writer = _ProjectWriter(project, summary)
        raw_conflicts(writer, rows.values(), tokenizer, label).raise_if_any()
        _adopt_labels(project, labels, summary)

        # Second pass: stream the texts again, tokenize and write a batch at a time.
        done = 0
        batch: list[RawTextRow] = []
        second_pass = ProblemList()
        for row in read_raw_rows(
            path, keep_text=True, **raw_reading(project, source_format, label, second_pass)
        ):
            batch.append(row)
            if len(batch) >= WRITE_BATCH:
                _write_raw_batch(writer, batch, project.language, tokenizer)
                done += len(batch)
                batch = []
                progress("writing", done, len(rows))
        if batch:
            _write_raw_batch(writer, batch, project.language, tokenizer)
            progress("writing", len(rows), len(rows))
        if second_pass:
            # The file changed between the two passes: abort rather than write half of it.
            raise DataValidationError(second_pass)
    return summary


def _write_raw_batch(
    writer: _ProjectWriter, batch: list[RawTextRow], language: str, tokenizer: str
) -> None:
    todo = [r for r in batch if str(r.item_id) not in writer.existing_items]
    raw_documents = [d for r in todo for d in r.documents]
    tokenized = dict(
        zip(
            (d.docid for d in raw_documents),
            tokenize_texts((d.text for d in raw_documents), language=language),
            strict=True,
        )
    )
    write_tokenized_batch(writer, batch, tokenized, tokenizer)


def write_tokenized_batch(
    writer: _ProjectWriter,
    batch: list[RawTextRow],
    tokenized: dict[str, Tokenized],
    tokenizer: str,
) -> None:
    """Write a batch of raw-text rows whose documents are tokenized (by docid); rows the
    project already holds are counted unchanged."""
    todo = [r for r in batch if str(r.item_id) not in writer.existing_items]
    writer.summary.items_unchanged += len(batch) - len(todo)
    writer.summary.documents_unchanged += sum(len(r.documents) for r in batch) - sum(
        len(r.documents) for r in todo
    )
    documents = [
        _PreparedDocument(
            docid=raw.docid,
            text=raw.text,
            token_offsets=tokenized[raw.docid].token_offsets,
            sentence_ranges=tokenized[raw.docid].sentence_ranges,
            tokenizer=tokenizer,
            text_sha256=raw.text_sha256,
        )
        for raw in (d for r in todo for d in r.documents)
    ]
    writer.write_documents(documents)
    writer.write_instances(
        [(_raw_instance(r), _raw_fingerprint(r)) for r in todo],
        {str(r.item_id): _raw_task_fields(r) for r in todo},
    )


def detect_import_format(filename: str, head: bytes = b"") -> str:
    """The format of a file named `filename` whose first bytes are `head`: a .zip is ERASER;
    a first line with `sent_id` and `sample_type` is the fine-grained benchmark's, whatever
    the extension (its published files end in .txt or .jsonl); else .jsonl or .csv raw texts."""
    lowered = filename.lower()
    if lowered.endswith(".zip"):
        return ImportFormat.ERASER
    if looks_like_benchmark(head):
        return ImportFormat.BENCHMARK
    if lowered.endswith(".jsonl"):
        return ImportFormat.JSONL
    if lowered.endswith(".csv"):
        return ImportFormat.CSV
    raise ApplicationError(
        f"cannot tell the format of {filename!r}: expected a .zip (ERASER), .jsonl or .csv "
        "file, or the fine-grained benchmark's JSON lines"
    )


def _file_head(path: Path) -> bytes:
    try:
        with open(path, "rb") as stream:
            return stream.read(SNIFF_BYTES)
    except OSError:
        return b""  # a missing file is reported by the import itself


def dataset_import(
    *,
    project: Project,
    path: str | Path,
    source_format: str | None = None,
    label: str | None = None,
    progress: ProgressCallback | None = None,
) -> ImportSummary:
    """Import a dataset file or directory into `project`.

    Raises DataValidationError with every problem found; in that case nothing is written.
    """
    path = Path(path)
    label = label or path.name
    if source_format is None:
        source_format = (
            ImportFormat.ERASER
            if path.is_dir()
            else detect_import_format(path.name, _file_head(path))
        )
    throttled = _Throttled(progress)
    try:
        if source_format == ImportFormat.ERASER:
            summary = _import_eraser(project, path, label, throttled)
        elif not path.is_file():
            problems = ProblemList()
            problems.add(label, None, None, "no such file")
            raise DataValidationError(problems)
        elif source_format == ImportFormat.BENCHMARK:
            # Imported here, not at the top: that module builds on this one's writer.
            from annotate.services.benchmark_import import benchmark_import_file

            summary = benchmark_import_file(project, path, label, throttled)
        else:
            summary = _import_raw_text(project, path, source_format, label, throttled)
        # The new items join every variant's pool before anyone asks for work.
        project_fill_rows_sync(project=project)
        statistics_refresh(Document, Item, ItemDocument, RationaleSet, RationaleSpan)
        return summary
    except IntegrityError as exc:
        # Only reachable when another import into the same project raced this one.
        problems = ProblemList()
        problems.add(label, None, None, f"conflicting concurrent import, nothing written: {exc}")
        raise DataValidationError(problems) from exc


# ---------------------------------------------------------------- background jobs


def _progress_cache_key(job_id: int) -> str:
    return f"import-job-progress:{job_id}"


def import_job_progress(job: ImportJob) -> dict:
    """Live progress of a running job (from the cache), else what the row recorded."""
    live = cache.get(_progress_cache_key(job.pk)) if job.status == JobStatus.RUNNING else None
    if live:
        return live
    return {"phase": job.phase, "done": job.progress_done, "total": job.progress_total}


def import_job_fail_if_worker_lost(job: ImportJob) -> ImportJob:
    """A running job whose worker stopped reporting (killed, machine lost) is marked failed.

    Its write transaction died with the worker's connection, so nothing was imported; a
    redelivered task then finds the job finished and leaves it alone."""
    from annotate.services.background_jobs import job_fail_if_worker_lost

    live = cache.get(_progress_cache_key(job.pk)) if job.status == JobStatus.RUNNING else None
    return job_fail_if_worker_lost(
        job,
        reported_at=(live or {}).get("at"),
        error=(
            f"the worker running this import stopped (no report for {settings.JOB_HEARTBEAT_TIMEOUT_SECONDS} s); "
            "nothing was imported; start the import again"
        ),
    )


@transaction.atomic
def import_job_create(
    *, project: Project, acting_user, upload, source_format: str | None = None
) -> ImportJob:
    if source_format is None:
        head = upload.read(SNIFF_BYTES)
        upload.seek(0)
        source_format = detect_import_format(upload.name, head)
    if source_format not in ImportFormat.values:
        raise ApplicationError(f"unknown import format {source_format!r}")
    if upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
        raise ApplicationError(
            f"{upload.name}: {upload.size} bytes is over the upload limit of "
            f"{settings.IMPORT_MAX_UPLOAD_BYTES} bytes"
        )
    job = ImportJob.objects.create(
        project=project,
        created_by=acting_user,
        source_format=source_format,
        source_name=Path(upload.name).name,
        upload=upload,
    )
    from annotate.tasks import import_job_execute

    task_send_on_commit(import_job_execute, job.pk, unsent=lambda: _import_job_unqueued(job.pk))
    return job


def _import_job_unqueued(job_id: int) -> None:
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

    Every format is prepared in chunks, over the workers when there is a broker
    (annotate/services/import_chunks.py)."""
    with transaction.atomic():
        job = ImportJob.objects.select_for_update().select_related("project").get(pk=job_id)
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            return job
        attempt = uuid.uuid4().hex
        job.status, job.attempt = JobStatus.RUNNING, attempt
        job.started_at = job.started_at or timezone.now()
        job.heartbeat_at = timezone.now()
        job.phase, job.progress_done, job.progress_total = "validating", 0, 0
        job.save(
            update_fields=[
                "status",
                "attempt",
                "started_at",
                "heartbeat_at",
                "phase",
                "progress_done",
                "progress_total",
            ]
        )
    # Checked whole, prepared in chunks (over the workers when there is a broker), written
    # in one transaction: annotate/services/import_chunks.py.
    from annotate.services.import_chunks import import_job_split

    return import_job_split(job, attempt)


def import_progress_reporter(job_id: int) -> ProgressCallback:
    def report(phase: str, done: int, total: int) -> None:
        # In the cache, not the row: the write phase is one transaction the page cannot see into.
        cache.set(
            _progress_cache_key(job_id),
            {"phase": phase, "done": done, "total": total, "at": time.time()},
            3600,
        )

    return report


def import_progress_forget(job_id: int) -> None:
    """The row says how far the job is again (its chunks count there)."""
    cache.delete(_progress_cache_key(job_id))


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
    current = ImportJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING, attempt=attempt)
    if (failed or settings.IMPORT_UPLOAD_RETENTION_DAYS == 0) and current.exists():
        # A rejected file has nothing in the database to account for, and a hostile one
        # should not outlive the answer. Deleted before the row says so: a crash between
        # the two leaves a row naming a missing file, never a file no row names.
        job.upload.delete(save=False)
        fields["upload"] = ""
    current.update(phase="done", finished_at=timezone.now(), **fields)
    import_progress_forget(job.pk)
    return ImportJob.objects.get(pk=job.pk)


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
