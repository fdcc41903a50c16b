"""Build ERASER exports: select items, turn highlights into evidences, split, write.

An export is built in three steps, so that it streams and can be split over workers:

1. `export_plan` checks the parameters and freezes the selection: the chosen items' and
   their documents' primary keys, as two int64 arrays (8 bytes an id; 0.8 MB each at
   100,000), cut into chunks of `EXPORT_CHUNK_ITEMS`.
2. Each chunk becomes a *part*: `write_item_chunk` writes the chunk's instance lines (one
   file per split) and returns its figures for the datasheet; `write_document_chunk`
   writes its documents as `docs.jsonl` lines. Rows are read in batches of `CHUNK` and
   each line is written as soon as it is made, so a chunk holds one batch at a time.
3. `assemble_dataset` copies the parts, in chunk order, into the final files of a sink (a
   folder or a zip, member by member), and the datasheet follows from the merged figures.

The parts and the figures do not depend on how the items were cut into chunks, so one
worker, many workers and the command line give the same bytes (exports/services.py runs
the steps as Celery tasks; `export_build` runs them in one process).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Prefetch

from annotate.models import (
    Document,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    RationaleSet,
    RationaleSpan,
    Split,
    TaskType,
)
from config.exceptions import ApplicationError
from exports.aggregation import (
    evidences_for,
    suggestions_extra,
    tally_against_gold,
    tally_item,
)
from exports.benchmark import benchmark_plan_check, benchmark_write_chunk
from exports.datasheet import datasheet_build, datasheet_markdown
from exports.huggingface import hf_card, hf_dataset_write, hf_document_record, hf_reading_extra
from exports.params import BENCHMARK_LAYOUT, HF_LAYOUT, ExportParams
from exports.selection import (
    CHUNK,
    DOCUMENTS_KEY,
    LINES_KEY,
    SPLITS,
    BuildStats,
    ExportCancelled,
    PartFiles,
    annotation_rows,
    benchmark_file_name,
    curated_only,
    curated_rows,
    perturbation_link,
    selected_items,
)
from qc.services.item_summaries import item_summaries_refresh
from rationale_metrics.eraser_writer import (
    DatasetSink,
    ExportDocument,
    ExportEvidence,
    ExportInstance,
)


class NothingToExport(ApplicationError):
    """No item matches the parameters: a failed export, but a datasheet preview can still
    show the rest of the sheet."""


def _export_document(document: Document) -> ExportDocument:
    return ExportDocument(
        docid=document.docid, tokens=document.token_texts(), sentence_ranges=document.sentences
    )


# ---------------------------------------------------------------- selection


def _document_rows(document_ids) -> dict[int, ExportDocument]:
    rows = (
        Document.objects.filter(pk__in=document_ids)
        .order_by("pk")
        .values_list("pk", "docid", "text", "tokens", "sentences")
    )
    return {
        pk: ExportDocument(
            docid=docid, tokens=[text[s:e] for s, e in tokens.tolist()], sentence_ranges=sentences
        )
        for pk, docid, text, tokens, sentences in rows
    }


def _submitted_chunk(
    project: Project, params: ExportParams, worker_id: int | None, chunk: list[int], flags: dict
):
    """The chunk's items, documents and submitted annotations as plain rows, and their
    flag counts added to `flags`: six queries."""
    items = list(
        Item.objects.filter(pk__in=chunk)
        .order_by("pk")
        .values(
            "pk",
            "annotation_id",
            "annotation_id_is_int",
            "label",
            "query",
            "query_type",
            "split",
            "perturbation_of__annotation_id",
            "perturbation_of__annotation_id_is_int",
            "perturbation_types",
            "answer",
        )
    )
    links = list(
        ItemDocument.objects.filter(item_id__in=chunk)
        .order_by("item_id", "position")
        .values_list("item_id", "document_id", "role")
    )
    documents = _document_rows({doc_id for _, doc_id, _ in links})
    item_documents: dict[int, list[ExportDocument]] = defaultdict(list)
    roles: dict[int, list[str]] = defaultdict(list)
    for item_id, doc_id, role in links:
        item_documents[item_id].append(documents[doc_id])
        roles[item_id].append(role)
    for item in items:
        item["document_roles"] = roles[item["pk"]]
    return items, item_documents, annotation_rows(project, params, worker_id, chunk, flags)


def _reference_items(chunk: list[int]):
    documents = Prefetch(
        "item_documents",
        queryset=ItemDocument.objects.select_related("document").order_by("position"),
    )
    spans = Prefetch(
        "spans", queryset=RationaleSpan.objects.select_related("document").order_by("position")
    )
    sets = Prefetch(
        "reference_sets", queryset=RationaleSet.objects.prefetch_related(spans).order_by("position")
    )
    return (
        Item.objects.filter(pk__in=chunk)
        .select_related("perturbation_of")
        .prefetch_related(documents, sets)
        .order_by("pk")
    )


def _reference_instance(item: Item, documents: dict[str, ExportDocument]) -> ExportInstance:
    groups = []
    for rset in item.reference_sets.all():
        group = []
        for span in rset.spans.all():
            source = span.source_fields or {}
            keys = source.get("keys")
            group.append(
                ExportEvidence(
                    docid=span.document.docid,
                    start_token=span.start_token,
                    end_token=span.end_token,
                    start_sentence=source.get("start_sentence"),
                    end_sentence=source.get("end_sentence"),
                    text=source.get("text"),
                    extra=source.get("extra", {}),
                    keys=keys,
                )
            )
        groups.append(group)
    present = set(item.source_keys or [])
    omit = [
        k
        for k in ("docids", "query", "query_type", "classification")
        if present and k not in present
    ]
    return ExportInstance(
        annotation_id=item.annotation_id_value,
        classification=item.label,
        docids=item.declared_docids,
        evidences=groups,
        query=item.query,
        query_type=item.query_type,
        extra={**(item.source_extra or {}), **_reference_link(item)},
        omit_keys=omit,
    )


def _reference_link(item: Item) -> dict:
    original = item.perturbation_of
    return perturbation_link(
        original.annotation_id if original else None,
        bool(original and original.annotation_id_is_int),
        item.perturbation_types,
    )


def _new_splits(project: Project, item_ids: list[int], params: ExportParams) -> dict[int, str]:
    """Split items by ratios with a seed, keeping every document in one split: items that
    share a document travel together."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    doc_owner: dict[int, int] = {}
    for item_id, doc_id in ItemDocument.objects.filter(item_id__in=item_ids).values_list(
        "item_id", "document_id"
    ):
        find(item_id)
        if doc_id in doc_owner:
            parent[find(item_id)] = find(doc_owner[doc_id])
        else:
            doc_owner[doc_id] = item_id
    groups: dict[int, list[int]] = defaultdict(list)
    for item_id in item_ids:
        groups[find(item_id)].append(item_id)
    components = sorted(groups.values())
    random.Random(params.seed).shuffle(components)
    targets = dict(zip(SPLITS, params.ratios, strict=True))
    filled = dict.fromkeys(SPLITS, 0)
    assigned: dict[int, str] = {}
    total = len(item_ids)
    for component in components:
        split = max(SPLITS, key=lambda s: (targets[s] * total - filled[s], -SPLITS.index(s)))
        filled[split] += len(component)
        for item_id in component:
            assigned[item_id] = split
    return assigned


def _check_disjoint(item_split: dict[int, str]) -> None:
    seen: dict[int, str] = {}
    rows = ItemDocument.objects.filter(item_id__in=list(item_split)).values_list(
        "item_id", "document_id"
    )
    for item_id, doc_id in rows:
        split = item_split[item_id]
        if seen.setdefault(doc_id, split) != split:
            raise ApplicationError(f"document {doc_id} would be in both {seen[doc_id]} and {split}")


# ---------------------------------------------------------------- the plan


@dataclass
class ExportPlan:
    """What an export will write, frozen before any line is: the chosen items and their
    documents, cut into chunks. Chunks that run later still write exactly these items,
    whatever is submitted meanwhile."""

    project: Project
    params: ExportParams
    worker_id: int | None
    item_pks: np.ndarray
    document_pks: np.ndarray
    chunk_items: int
    # New splits by ratios: the split of every chosen item (None: each item's own split).
    item_split: dict[int, str] | None = None
    # Chosen items the curated aggregation leaves out: no curator has curated them.
    uncurated_left_out: int = 0

    @property
    def item_chunks(self) -> int:
        return math.ceil(len(self.item_pks) / self.chunk_items)

    @property
    def document_chunks(self) -> int:
        if self.params.layout == BENCHMARK_LAYOUT:
            return 0  # the benchmark's lines carry their own tokens
        return math.ceil(len(self.document_pks) / self.chunk_items)

    def item_chunk(self, index: int) -> list[int]:
        return self.item_pks[index * self.chunk_items : (index + 1) * self.chunk_items].tolist()

    def document_chunk(self, index: int) -> list[int]:
        return self.document_pks[index * self.chunk_items : (index + 1) * self.chunk_items].tolist()

    def splits_of(self, pks: list[int]) -> dict[int, str] | None:
        return None if self.item_split is None else {pk: self.item_split[pk] for pk in pks}


def resolve_annotator(params: ExportParams) -> int | None:
    if params.aggregation != "annotator":
        return None
    worker_id = (
        get_user_model()
        .objects.filter(username=params.annotator)
        .values_list("pk", flat=True)
        .first()
    )
    if worker_id is None:
        raise ApplicationError(f"annotator: no user named {params.annotator!r}")
    return worker_id


def export_params_check(*, project: Project, params: ExportParams) -> int | None:
    """The parameters checked against the project: the annotator and the variant they name
    exist. Returns the annotator's id (None when they name none)."""
    worker_id = resolve_annotator(params)
    if (
        params.variant
        and not InstructionVariant.objects.filter(project=project, name=params.variant).exists()
    ):
        raise ApplicationError(f"variant: this project has no variant named {params.variant!r}")
    return worker_id


def export_plan(
    *, project: Project, params: ExportParams, chunk_items: int | None = None
) -> ExportPlan:
    """Check everything that can be checked before writing, and freeze the selection."""
    worker_id = export_params_check(project=project, params=params)
    if params.item_filter is not None:
        item_summaries_refresh(project=project)
    selected = selected_items(project, params, worker_id)
    chosen = 0
    if params.aggregation == "curated":
        chosen = selected.count()
        selected = curated_only(selected)
    item_pks = np.fromiter(
        selected.order_by("pk").values_list("pk", flat=True).iterator(chunk_size=10_000),
        dtype=np.int64,
    )
    if not len(item_pks) and chosen:
        raise NothingToExport(
            f"nothing to export: none of the {chosen} chosen item(s) is curated yet; curate "
            "them first, or choose another aggregation"
        )
    if not len(item_pks):
        raise NothingToExport("nothing to export: no item matches these parameters")
    chunk_items = chunk_items or settings.EXPORT_CHUNK_ITEMS
    plan = ExportPlan(
        project=project,
        params=params,
        worker_id=worker_id,
        item_pks=item_pks,
        document_pks=np.empty(0, dtype=np.int64),
        chunk_items=chunk_items,
        uncurated_left_out=chosen - len(item_pks) if chosen else 0,
    )
    if params.layout == BENCHMARK_LAYOUT:
        benchmark_plan_check(project=project, params=params, selected=selected)
    elif params.splits == "keep":
        unassigned = selected.filter(split=Split.UNASSIGNED).count()
        if unassigned:
            raise ApplicationError(
                f"splits: {unassigned} item(s) have no split; choose new splits from ratios instead"
            )
    else:
        item_ids = item_pks.tolist()
        plan.item_split = _new_splits(project, item_ids, params)
        _check_disjoint(plan.item_split)
    # The documents of the chosen items, each once, in key order. As many ids per query as
    # the database takes (SQLite may take 999; PostgreSQL any number, 10,000 here).
    batch = min(10_000, connection.features.max_query_params or 10_000)
    documents = [
        np.fromiter(
            ItemDocument.objects.filter(item_id__in=item_pks[start : start + batch].tolist())
            .values_list("document_id", flat=True)
            .iterator(chunk_size=10_000),
            dtype=np.int64,
        )
        for start in range(0, len(item_pks), batch)
    ]
    plan.document_pks = np.unique(np.concatenate(documents))
    return plan


# ---------------------------------------------------------------- parts


def write_item_chunk(
    *,
    project: Project,
    params: ExportParams,
    worker_id: int | None,
    pks: list[int],
    split_of: dict[int, str] | None,
    folder: Path,
    prefix: str,
    should_cancel: Callable[[], bool] | None = None,
) -> tuple[dict[str, Path], BuildStats]:
    """Write the instance lines of the items `pks` (in order) into local part files, one
    per split; return them and the chunk's figures."""
    if params.layout == BENCHMARK_LAYOUT:
        return benchmark_write_chunk(
            project=project,
            params=params,
            worker_id=worker_id,
            pks=pks,
            folder=folder,
            prefix=prefix,
            should_cancel=should_cancel,
        )
    stats = BuildStats()
    files = PartFiles(folder, prefix)
    # The `hf` layout keeps a reading-comprehension item's answer and its documents' roles.
    reading_hf = params.layout == HF_LAYOUT and project.task_type == TaskType.READING_COMPREHENSION
    try:
        for start in range(0, len(pks), CHUNK):
            if should_cancel and should_cancel():
                raise ExportCancelled
            batch = pks[start : start + CHUNK]
            if params.selection == "reference":
                for item in _reference_items(batch):
                    documents = {
                        link.document.docid: _export_document(link.document)
                        for link in item.item_documents.all()
                    }
                    split = split_of[item.pk] if split_of is not None else item.split
                    instance = _reference_instance(item, documents)
                    if reading_hf:
                        roles = [link.role for link in item.item_documents.all()]
                        instance.extra.update(hf_reading_extra(item.answer, roles))
                    files.handle(split).write(instance.line(documents) + "\n")
                    stats.instances[split] += 1
                    stats.count_perturbation(_reference_link(item))
                continue
            items, item_documents, annotations = _submitted_chunk(
                project, params, worker_id, batch, stats.tally.flags
            )
            curated = curated_rows(batch)
            for item in items:
                docs = {d.docid: d for d in item_documents[item["pk"]]}
                rows = annotations[item["pk"]]
                gold = curated.get(item["pk"])
                link = perturbation_link(
                    item["perturbation_of__annotation_id"],
                    item["perturbation_of__annotation_id_is_int"],
                    item["perturbation_types"],
                )
                stats.count_perturbation(link)
                lengths = {docid: len(d.tokens) for docid, d in docs.items()}
                tally_item(rows, lengths, stats.tally)
                if gold is not None:
                    stats.count_curated(gold.rule)
                    tally_against_gold(rows, gold, lengths, stats.gold)
                instance = ExportInstance(
                    annotation_id=int(item["annotation_id"])
                    if item["annotation_id_is_int"]
                    else item["annotation_id"],
                    classification=gold.label
                    if params.aggregation == "curated" and gold and gold.label is not None
                    else item["label"],
                    docids=list(docs),
                    evidences=evidences_for(rows, params.aggregation, gold),
                    query=item["query"],
                    query_type=item["query_type"],
                    extra={**link, **suggestions_extra(rows)},
                )
                if reading_hf:
                    instance.extra = {
                        **link,
                        **hf_reading_extra(item["answer"], item["document_roles"]),
                    }
                stats.empty_evidence_items += not instance.evidences
                split = split_of[item["pk"]] if split_of is not None else item["split"]
                files.handle(split).write(instance.line(docs) + "\n")
                stats.instances[split] += 1
    finally:
        written = files.close()
    return written, stats


def write_document_chunk(
    *,
    pks: list[int],
    folder: Path,
    prefix: str,
    should_cancel: Callable[[], bool] | None = None,
    layout: str = "docs",
) -> tuple[dict[str, Path], int]:
    """Write the documents `pks` (in key order) as `docs.jsonl` lines into a local part
    (for the `hf` layout, as its document records)."""
    files = PartFiles(folder, prefix)
    count = 0
    try:
        handle = files.handle(DOCUMENTS_KEY)
        for start in range(0, len(pks), CHUNK):
            if should_cancel and should_cancel():
                raise ExportCancelled
            if layout == HF_LAYOUT:
                count += _hf_documents_write(pks[start : start + CHUNK], handle)
                continue
            for document in _document_rows(pks[start : start + CHUNK]).values():
                document.check()
                handle.write(
                    json.dumps(
                        {"docid": document.docid, "document": document.text()},
                        ensure_ascii=False,
                    )
                    + "\n"
                )
                count += 1
    finally:
        written = files.close()
    return written, count


def _hf_documents_write(pks: list[int], handle) -> int:
    rows = (
        Document.objects.filter(pk__in=pks)
        .order_by("pk")
        .values_list("docid", "text", "tokens", "sentences")
    )
    count = 0
    for docid, text, tokens, sentences in rows:
        record = hf_document_record(docid, text, tokens.tolist(), sentences)
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count


class PartReader(Protocol):
    def open(self, name: str) -> AbstractContextManager[BinaryIO]: ...


class LocalParts:
    """Parts kept in a local folder, by their file name."""

    def __init__(self, folder: Path):
        self.folder = folder

    def open(self, name: str) -> BinaryIO:
        return open(self.folder / name, "rb")


def assemble_dataset(
    *,
    project: Project,
    params: ExportParams,
    item_parts: Iterable[dict[str, str]],
    document_parts: Iterable[str],
    reader: PartReader,
    sink: DatasetSink,
    pulse: Callable[[], object] | None = None,
) -> None:
    """Copy the parts, in chunk order, into the dataset's files; `item_parts` lists each
    item chunk's part names by key, `document_parts` each document chunk's part name.
    Iterated once per file, so they may be lists."""
    item_parts = list(item_parts)

    def copy(names: Iterable[str], name: str) -> None:
        with sink.open_bytes(name) as out:
            for part in names:
                with reader.open(part) as stream:
                    shutil.copyfileobj(stream, out, 1 << 20)
                if pulse:
                    pulse()

    if params.layout == BENCHMARK_LAYOUT:
        copy((p[LINES_KEY] for p in item_parts if LINES_KEY in p), benchmark_file_name(project))
        return
    if params.layout == HF_LAYOUT:
        hf_dataset_write(
            project=project,
            split_parts={split: [p[split] for p in item_parts if split in p] for split in SPLITS},
            document_parts=list(document_parts),
            open_part=reader.open,
            sink=sink,
            pulse=pulse,
        )
        return
    for split in SPLITS:
        copy((p[split] for p in item_parts if split in p), f"{split}.jsonl")
    if params.layout == "docs.jsonl":
        copy(document_parts, "docs.jsonl")
        return
    for part in document_parts:
        with reader.open(part) as stream:
            for line in stream:
                document = json.loads(line)
                sink.write_text(f"docs/{document['docid']}", document["document"] + "\n")
        if pulse:
            pulse()


def export_build(
    *,
    project: Project,
    params: ExportParams,
    sink: DatasetSink,
    progress: Callable[[str, int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    scratch: Path | None = None,
    chunk_items: int | None = None,
) -> BuildStats:
    """Write the dataset for `params` into `sink` (a folder, a zip, or nothing), in this
    process; the parts go to a temporary folder in `scratch`."""
    plan = export_plan(project=project, params=params, chunk_items=chunk_items)
    stats = empty_stats(project, params)
    stats.uncurated_left_out = plan.uncurated_left_out
    item_parts: list[dict[str, str]] = []
    document_parts: list[str] = []
    total = len(plan.item_pks)
    with tempfile.TemporaryDirectory(prefix="parts-", dir=scratch) as tmp:
        folder = Path(tmp)
        for index in range(plan.item_chunks):
            pks = plan.item_chunk(index)
            files, chunk_stats = write_item_chunk(
                project=project,
                params=params,
                worker_id=plan.worker_id,
                pks=pks,
                split_of=plan.splits_of(pks),
                folder=folder,
                prefix=f"items-{index:05d}",
                should_cancel=should_cancel,
            )
            stats.merge(chunk_stats)
            item_parts.append({key: path.name for key, path in files.items()})
            if progress:
                progress("instances", min((index + 1) * plan.chunk_items, total), total)
        stats.documents = len(plan.document_pks)
        for index in range(plan.document_chunks):
            files, _ = write_document_chunk(
                pks=plan.document_chunk(index),
                folder=folder,
                prefix=f"docs-{index:05d}",
                should_cancel=should_cancel,
                layout=params.layout,
            )
            document_parts.append(files[DOCUMENTS_KEY].name)
        assemble_dataset(
            project=project,
            params=params,
            item_parts=item_parts,
            document_parts=document_parts,
            reader=LocalParts(folder),
            sink=sink,
        )
    return stats


def _benchmark(params: ExportParams) -> bool:
    return params.layout == BENCHMARK_LAYOUT


def empty_stats(project: Project, params: ExportParams) -> BuildStats:
    """The figures before any chunk: the benchmark layout counts instances per file."""
    if _benchmark(params):
        return BuildStats(instances={benchmark_file_name(project): 0})
    return BuildStats()


def export_write_datasheet(
    *, project: Project, params: ExportParams, stats: BuildStats, sink: DatasetSink
) -> dict:
    sheet = datasheet_build(project=project, params=params, stats=stats)
    sink.write_text(
        "datasheet.json", json.dumps(sheet, indent=2, sort_keys=True, default=str) + "\n"
    )
    markdown = datasheet_markdown(sheet)
    sink.write_text("datasheet.md", markdown)
    if params.layout == HF_LAYOUT:
        sink.write_text("README.md", hf_card(project, sheet, stats.instances, markdown))
    return sheet


def sha256_of(path: Path) -> str:
    """A file's sha256; a folder's is that of its manifest (relative path and sha256 of
    every file, sorted)."""
    digest = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(path).as_posix()}\t{sha256_of(file)}\n".encode())
    return digest.hexdigest()
