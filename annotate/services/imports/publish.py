"""The last step of every import: write into the project in one transaction.

Here are the project's side of an import: the rule that decides when an upload conflicts
with what the project holds (`document_conflict`, `item_conflict`, over plain data), the
project's lock, the writer that skips what an earlier import already wrote, and the
chord's callback (`import_publish_run`) that writes the staged parts of a job's chunks:
the project shows all of the import or none of it, however many chunks ran where.
Format modules call the writer for their one-step imports; nothing here knows a format.
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import (
    Document,
    DocumentRole,
    ImportJob,
    ImportPart,
    Item,
    ItemDocument,
    JobStatus,
    Project,
    RationaleSet,
    RationaleSpan,
)
from annotate.services.assignments import project_fill_rows_sync
from annotate.services.imports.job import (
    import_failure,
    import_job_end,
    import_progress_forget,
    import_progress_reporter,
    job_running,
    parts_discard,
)
from annotate.services.imports.records import (
    WRITE_BATCH,
    ImportSummary,
    PreparedDocument,
    ProgressThrottle,
    TaskFields,
    document_from_staged,
    item_from_staged,
)
from config.bulk_sql import statistics_refresh
from config.exceptions import ApplicationError
from config.storage import StoredParts
from rationale_metrics.eraser import Instance
from rationale_metrics.problems import DataValidationError, ProblemList


@dataclass
class Holdings:
    """What a project already holds, as plain data: each document's (pk, text hash,
    tokenizer) by docid, and each item's fingerprint by annotation_id."""

    documents: dict[str, tuple[int, str, str]]
    items: dict[str, str]
    # annotation_ids of the project's deleted items, still restorable: they keep their ids
    # until the purge, so an import cannot reuse them meanwhile.
    deleted_items: frozenset[str] = frozenset()


def document_conflict(held: Holdings, docid: str, sha: str, tokenizer: str) -> str | None:
    """Why a document may not be imported as given, or None: a docid the project holds
    must have the same text, tokenized the same way (then it is left as it is)."""
    if docid not in held.documents:
        return None
    _, old_sha, old_tokenizer = held.documents[docid]
    if old_sha != sha:
        return f"document {docid!r} already exists in this project with a different text"
    if old_tokenizer != tokenizer:
        return (
            f"document {docid!r} already exists in this project, tokenized by "
            f"{old_tokenizer!r} rather than {tokenizer!r}"
        )
    return None


def item_conflict(held: Holdings, annotation_id: str, fingerprint: str) -> str | None:
    """Why an item may not be imported as given, or None: an annotation_id the project
    holds must say the same (then it is left as it is)."""
    if annotation_id in held.deleted_items:
        return (
            f"annotation_id {annotation_id!r} belongs to a deleted item of this project; "
            "restore it, or import it again once the deleted items are removed for good"
        )
    old = held.items.get(annotation_id)
    if old is not None and old != fingerprint:
        return f"annotation_id {annotation_id!r} already exists in this project with other content"
    return None


def holdings_read(project: Project) -> Holdings:
    items = Item.all_objects.filter(project=project)
    return Holdings(
        documents={
            docid: (pk, sha, tok)
            for pk, docid, sha, tok in Document.objects.filter(project=project).values_list(
                "pk", "docid", "text_sha256", "tokenizer"
            )
        },
        items=dict(
            items.filter(deleted_at__isnull=True).values_list("annotation_id", "source_sha256")
        ),
        deleted_items=frozenset(
            items.filter(deleted_at__isnull=False).values_list("annotation_id", flat=True)
        ),
    )


def project_lock(project: Project) -> Project:
    return Project.objects.select_for_update(no_key=True).get(pk=project.pk)


def labels_adopt(project: Project, labels: list[str], summary: ImportSummary) -> None:
    if labels:
        project.labels = labels
        project.save(update_fields=["labels"])
        summary.labels_added = labels


def evidence_source_fields(ev) -> dict:
    """What an export needs, beyond the token range, to write the evidence back unchanged."""
    fields = {"keys": list(ev.present_keys)}
    for key in ("start_sentence", "end_sentence", "text"):
        if key in ev.present_keys:
            fields[key] = getattr(ev, key)
    if ev.extra:
        fields["extra"] = ev.extra
    return fields


class ProjectWriter:
    """Writes prepared documents and instances into a locked project, skipping unchanged rows."""

    def __init__(self, project: Project, summary: ImportSummary, import_job=None):
        self.project = project
        self.summary = summary
        # Recorded on each new item, so that deleting the import deletes its items.
        self.import_job = import_job
        self.held = holdings_read(project)
        self.doc_pks = {docid: row[0] for docid, row in self.held.documents.items()}

    def write_documents(self, documents: list[PreparedDocument]) -> None:
        fresh = []
        for doc in documents:
            if doc.docid in self.held.documents:
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
            self.held.documents[row.docid] = (row.pk, row.text_sha256, row.tokenizer)
        self.summary.documents_created += len(fresh)

    def write_instances(
        self,
        instances: list[tuple[Instance, str]],
        task_fields: dict[str, TaskFields] | None = None,
    ) -> None:
        fresh = [(inst, fp) for inst, fp in instances if inst.key not in self.held.items]
        self.summary.items_unchanged += len(instances) - len(fresh)
        plain = TaskFields()
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
                    import_job=self.import_job,
                )
                for (inst, fp), extra in zip(fresh, extras, strict=True)
            ],
            batch_size=WRITE_BATCH,
        )
        links, sets, set_spans = [], [], []
        for item, (inst, fp), extra in zip(items, fresh, extras, strict=True):
            self.held.items[item.annotation_id] = fp
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
                source_fields=evidence_source_fields(ev),
            )
            for rset, group in zip(sets, set_spans, strict=True)
            for e, ev in enumerate(group)
        ]
        RationaleSpan.objects.bulk_create(spans, batch_size=WRITE_BATCH)
        self.summary.items_created += len(items)
        self.summary.reference_sets_created += len(sets)
        self.summary.spans_created += len(spans)


def perturbation_links_write(project: Project, links: list[tuple[str, str, list[str]]]) -> None:
    """Point each new perturbed item (annotation_id, its original's, its perturbation types)
    at its original (new, or written by an earlier import)."""
    if not links:
        return
    keys = {key for key, _, _ in links} | {original for _, original, _ in links}
    pks = dict(
        Item.objects.filter(project=project, annotation_id__in=keys).values_list(
            "annotation_id", "pk"
        )
    )
    Item.objects.bulk_update(
        [
            Item(pk=pks[key], perturbation_of_id=pks[original], perturbation_types=types)
            for key, original, types in links
        ],
        ["perturbation_of", "perturbation_types"],
        batch_size=WRITE_BATCH,
    )


def after_import(project: Project) -> None:
    """As after any import: the new items join every variant's pool before anyone asks
    for work."""
    project_fill_rows_sync(project=project)


def tables_analyze() -> None:
    """The planner learns the tables' new sizes."""
    statistics_refresh(Document, Item, ItemDocument, RationaleSet, RationaleSpan)


# ---------------------------------------------------------------- the chord's callback


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
            parts_discard(job_id)
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
            if not job_running(job_id, attempt).select_for_update().exists():
                raise _Superseded
            _parts_write(job, files, labels, summary, total)
            after_import(job.project)
            parts_discard(job_id)  # before the row says "succeeded", so then they are gone
            job_running(job_id, attempt).update(
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
        tables_analyze()
        if settings.IMPORT_UPLOAD_RETENTION_DAYS == 0:
            job.upload.delete(save=False)
            ImportJob.objects.filter(pk=job_id).update(upload="")
        import_progress_forget(job_id)
        done = ImportJob.objects.get(pk=job_id)
    parts_discard(job_id)
    return done


def staged_conflicts(held: Holdings, records: Iterable[dict], label: str) -> ProblemList:
    """Staged documents and items (records.py) the project already holds otherwise; a
    document is named by its docid in the upload, an item by where its chunk found it."""
    problems = ProblemList()
    for record in records:
        if "document" in record:
            found = record["document"]
            conflict = document_conflict(held, found["docid"], found["sha256"], found["tokenizer"])
            if conflict:
                problems.add(label, None, f"docs/{found['docid']}", conflict)
            continue
        found = record["item"]
        key = str(found["instance"]["annotation_id"])
        conflict = item_conflict(held, key, found["fingerprint"])
        for document in found["documents"]:
            conflict = conflict or document_conflict(
                held, document["docid"], document["sha256"], document["tokenizer"]
            )
        if conflict:
            problems.add(*found["where"], conflict)
    return problems


def _parts_write(
    job: ImportJob, files: list[dict], labels: list[str], summary: ImportSummary, total: int
) -> None:
    """Inside the publishing transaction: check the staged rows against the project under
    its lock, then write them a batch at a time, in the order of the upload, and link the
    perturbed items to their originals."""
    writer = ProjectWriter(project_lock(job.project), summary, import_job=job)
    reader = StoredParts({f["name"]: f for f in files})
    staged_conflicts(writer.held, _staged_records(reader, files), job.source_name).raise_if_any()
    labels_adopt(writer.project, labels, writer.summary)
    report = ProgressThrottle(import_progress_reporter(job.pk))
    done = 0
    links = []
    records = _staged_records(reader, files)
    while batch := list(itertools.islice(records, WRITE_BATCH)):
        documents = [document_from_staged(r["document"]) for r in batch if "document" in r]
        items = [item_from_staged(r["item"]) for r in batch if "item" in r]
        fresh = [i for i in items if i.instance.key not in writer.held.items]
        writer.summary.items_unchanged += len(items) - len(fresh)
        writer.summary.documents_unchanged += sum(
            len(i.documents) for i in items if i.instance.key in writer.held.items
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
    """The parts' records in order. A part changed since its chunk stored it fails the
    read (and so the transaction) at its end."""
    for file in files:
        with reader.open(file["name"]) as stream:
            for line in io.TextIOWrapper(stream, encoding="utf-8"):
                yield json.loads(line)
