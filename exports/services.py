"""Build ERASER exports: select items, turn highlights into evidences, split, write, publish.

`export_build` writes a dataset directory and returns its statistics (used by the
management command and the background job). `export_run` is the job: it builds into a
private temporary folder, zips it if asked, and moves the finished file into place in one
rename, so no partial file is ever visible where a complete one is expected.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import shutil
import uuid
import zipfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    Document,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    RationaleSet,
    RationaleSpan,
    Split,
)
from config.exceptions import ApplicationError
from exports.datasheet import datasheet_build, datasheet_markdown
from exports.models import Export, ExportStatus
from exports.params import ExportParams, export_params_from
from rationale_metrics.agreement import cohen_kappa_pairs
from rationale_metrics.eraser_writer import (
    DocumentNotExportable,
    ExportDocument,
    ExportEvidence,
    ExportInstance,
    runs_of,
    write_documents,
)

logger = logging.getLogger(__name__)
CHUNK = 500
SPLITS = ("train", "val", "test")


class ExportCancelled(Exception):
    pass


@dataclass
class BuildStats:
    instances: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPLITS, 0))
    documents: int = 0
    annotations: int = 0
    annotations_per_item: dict[int, int] = field(default_factory=dict)
    time_spent_ms: list[int] = field(default_factory=list)
    workers_per_variant: dict[str, set] = field(default_factory=lambda: defaultdict(set))
    kappa_per_variant: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    kappa_excluded: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    empty_evidence_items: int = 0


def _export_document(document: Document) -> ExportDocument:
    return ExportDocument(
        docid=document.docid, tokens=document.token_texts(), sentence_ranges=document.sentences
    )


def _items_queryset(project: Project, params: ExportParams, worker_id: int | None):
    items = Item.objects.filter(project=project)
    annotations = Assignment.objects.filter(status=AssignmentStatus.SUBMITTED)
    if params.variant:
        annotations = annotations.filter(variant__name=params.variant)
    if worker_id is not None:
        annotations = annotations.filter(worker_id=worker_id)
    if params.selection == "submitted":
        items = items.filter(pk__in=annotations.values("item_id"))
    documents = Prefetch(
        "item_documents",
        queryset=ItemDocument.objects.select_related("document").order_by("position"),
    )
    if params.selection == "reference":
        spans = Prefetch(
            "spans", queryset=RationaleSpan.objects.select_related("document").order_by("position")
        )
        sets = Prefetch(
            "reference_sets",
            queryset=RationaleSet.objects.prefetch_related(spans).order_by("position"),
        )
        return items.prefetch_related(documents, sets).order_by("pk")
    spans = Prefetch(
        "spans", queryset=RationaleSpan.objects.select_related("document").order_by("position")
    )
    sets = Prefetch(
        "rationale_sets", queryset=RationaleSet.objects.prefetch_related(spans).order_by("position")
    )
    chosen = Prefetch(
        "assignments",
        queryset=annotations.select_related("annotation", "variant", "worker")
        .prefetch_related(
            Prefetch(
                "annotation__rationale_sets",
                queryset=RationaleSet.objects.prefetch_related(spans).order_by("position"),
            )
        )
        .order_by("pk"),
        to_attr="chosen_assignments",
    )
    return items.prefetch_related(documents, chosen).order_by("pk")


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
        extra=item.source_extra or {},
        omit_keys=omit,
    )


def _annotation_tokens(annotation: Annotation) -> dict[str, set[int]]:
    tokens: dict[str, set[int]] = defaultdict(set)
    for rset in annotation.rationale_sets.all():
        for span in rset.spans.all():
            tokens[span.document.docid].update(range(span.start_token, span.end_token))
    return tokens


def _aggregate(item: Item, params: ExportParams) -> list[list[ExportEvidence]]:
    annotations = [a.annotation for a in item.chosen_assignments]
    if params.aggregation in ("annotator", "all_sets"):
        return [
            [ExportEvidence(s.document.docid, s.start_token, s.end_token) for s in rset.spans.all()]
            for annotation in annotations
            for rset in annotation.rationale_sets.all()
            if rset.spans.all()
        ]
    counts: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for annotation in annotations:
        for docid, tokens in _annotation_tokens(annotation).items():
            for token in tokens:
                counts[docid][token] += 1
    needed = 1 if params.aggregation == "union" else len(annotations) // 2 + 1
    group = [
        ExportEvidence(docid, start, end)
        for docid in sorted(counts)
        for start, end in runs_of(t for t, n in counts[docid].items() if n >= needed)
    ]
    return [group] if group else []


def _record_quality(item: Item, stats: BuildStats) -> None:
    """Annotation counts, times, workers and intra-variant kappa of one item."""
    chosen = item.chosen_assignments
    stats.annotations += len(chosen)
    stats.annotations_per_item[len(chosen)] = stats.annotations_per_item.get(len(chosen), 0) + 1
    offsets, total = {}, 0
    for link in item.item_documents.all():
        offsets[link.document.docid] = total
        total += link.document.token_count
    by_variant: dict[str, list[np.ndarray]] = defaultdict(list)
    for assignment in chosen:
        stats.time_spent_ms.append(assignment.annotation.time_spent_ms)
        name = assignment.variant.name
        stats.workers_per_variant[name].add(assignment.worker_id)
        vector = np.zeros(total, dtype=bool)
        for docid, tokens in _annotation_tokens(assignment.annotation).items():
            vector[[offsets[docid] + t for t in tokens]] = True
        by_variant[name].append(vector)
    for name, vectors in by_variant.items():
        pairs = [(a, b) for i, a in enumerate(vectors) for b in vectors[i + 1 :]]
        if not pairs:
            continue
        kappas = cohen_kappa_pairs(np.stack([a for a, _ in pairs]), np.stack([b for _, b in pairs]))
        stats.kappa_excluded[name] += int(np.isnan(kappas).sum())
        if not np.all(np.isnan(kappas)):
            stats.kappa_per_variant[name].append(float(np.nanmean(kappas)))


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


def export_build(
    *,
    project: Project,
    params: ExportParams,
    out_dir: Path,
    progress: Callable[[str, int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> BuildStats:
    """Write the ERASER dataset for `params` into the (empty) directory `out_dir`."""
    worker_id = None
    if params.aggregation == "annotator":
        worker_id = (
            get_user_model()
            .objects.filter(username=params.annotator)
            .values_list("pk", flat=True)
            .first()
        )
        if worker_id is None:
            raise ApplicationError(f"annotator: no user named {params.annotator!r}")
    if (
        params.variant
        and not InstructionVariant.objects.filter(project=project, name=params.variant).exists()
    ):
        raise ApplicationError(f"variant: this project has no variant named {params.variant!r}")
    items = _items_queryset(project, params, worker_id)
    item_ids = list(items.values_list("pk", flat=True))
    if not item_ids:
        raise ApplicationError("nothing to export: no item matches these parameters")
    if params.splits == "keep":
        item_split = dict(Item.objects.filter(pk__in=item_ids).values_list("pk", "split"))
        unassigned = [pk for pk, split in item_split.items() if split == Split.UNASSIGNED]
        if unassigned:
            raise ApplicationError(
                f"splits: {len(unassigned)} item(s) have no split; choose new splits from ratios instead"
            )
    else:
        item_split = _new_splits(project, item_ids, params)
        _check_disjoint(item_split)

    out_dir.mkdir(parents=True, exist_ok=True)
    stats = BuildStats()
    handles = {split: open(out_dir / f"{split}.jsonl", "w", encoding="utf-8") for split in SPLITS}  # noqa: SIM115
    try:
        for start in range(0, len(item_ids), CHUNK):
            if should_cancel and should_cancel():
                raise ExportCancelled
            chunk = items.filter(pk__in=item_ids[start : start + CHUNK])
            for item in chunk:
                documents = {
                    link.document.docid: _export_document(link.document)
                    for link in item.item_documents.all()
                }
                if params.selection == "reference":
                    instance = _reference_instance(item, documents)
                else:
                    _record_quality(item, stats)
                    instance = ExportInstance(
                        annotation_id=item.annotation_id_value,
                        classification=item.label,
                        docids=list(documents),
                        evidences=_aggregate(item, params),
                        query=item.query,
                        query_type=item.query_type,
                    )
                    stats.empty_evidence_items += not instance.evidences
                split = item_split[item.pk]
                handles[split].write(instance.line(documents) + "\n")
                stats.instances[split] += 1
            if progress:
                progress("instances", min(start + CHUNK, len(item_ids)), len(item_ids))
    finally:
        for handle in handles.values():
            handle.close()

    doc_ids = (
        ItemDocument.objects.filter(item_id__in=item_ids)
        .values_list("document_id", flat=True)
        .distinct()
    )
    documents = Document.objects.filter(pk__in=doc_ids).order_by("docid").iterator(chunk_size=CHUNK)
    stats.documents = write_documents(
        out_dir, (_export_document(d) for d in documents), params.layout
    )
    return stats


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    # A directory: the hash of its manifest (relative path and sha256 of every file, sorted).
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(path).as_posix()}\t{_sha256_of(file)}\n".encode())
    return digest.hexdigest()


def zip_directory(source: Path, target: Path, root_name: str) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            archive.write(file, f"{root_name}/{file.relative_to(source).as_posix()}")


def export_write_datasheet(
    *, project: Project, params: ExportParams, stats: BuildStats, out_dir: Path
) -> dict:
    sheet = datasheet_build(project=project, params=params, stats=stats)
    (out_dir / "datasheet.json").write_text(
        json.dumps(sheet, indent=2, sort_keys=True, default=str) + "\n"
    )
    (out_dir / "datasheet.md").write_text(datasheet_markdown(sheet))
    return sheet


@transaction.atomic
def export_start(*, project: Project, acting_user, raw_params: dict) -> Export:
    params = export_params_from(raw_params)
    export = Export.objects.create(project=project, created_by=acting_user, params=params.as_dict())
    from exports.tasks import export_execute

    transaction.on_commit(lambda: export_execute.delay(export.pk))
    return export


def export_cancel(*, export: Export) -> Export:
    updated = Export.objects.filter(
        pk=export.pk, status__in=[ExportStatus.PENDING, ExportStatus.RUNNING]
    ).update(cancel_requested=True)
    if not updated:
        raise ApplicationError(
            f"export {export.pk} is {export.status}; only pending or running exports can be cancelled"
        )
    export.refresh_from_db()
    if export.status == ExportStatus.PENDING:
        Export.objects.filter(pk=export.pk, status=ExportStatus.PENDING).update(
            status=ExportStatus.CANCELLED, finished_at=timezone.now()
        )
        export.refresh_from_db()
    return export


def _exports_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "exports"


def export_run(*, export_id: int) -> Export:
    """Run a queued export. Safe to run twice: finished exports are left as they are, and a
    rerun after a crash starts again from a clean temporary folder."""
    with transaction.atomic():
        export = Export.objects.select_for_update().select_related("project").get(pk=export_id)
        if export.status not in (ExportStatus.PENDING, ExportStatus.RUNNING):
            return export
        export.status = ExportStatus.RUNNING
        export.started_at = timezone.now()
        export.save(update_fields=["status", "started_at"])

    params = export_params_from(export.params)
    work = _exports_root() / "tmp" / f"{export.pk}-{uuid.uuid4().hex}"
    name = f"{export.project.name.replace('/', '-').replace(' ', '_')}-export-{export.pk}"
    dataset = work / name

    def progress(phase: str, done: int, total: int) -> None:
        Export.objects.filter(pk=export.pk).update(
            phase=phase, progress_done=done, progress_total=total
        )

    def should_cancel() -> bool:
        return Export.objects.filter(pk=export.pk, cancel_requested=True).exists()

    try:
        stats = export_build(
            project=export.project,
            params=params,
            out_dir=dataset,
            progress=progress,
            should_cancel=should_cancel,
        )
        sheet = export_write_datasheet(
            project=export.project, params=params, stats=stats, out_dir=dataset
        )
        if should_cancel():
            raise ExportCancelled
        if params.archive == "zip":
            built = work / f"{name}.zip"
            zip_directory(dataset, built, name)
        else:
            built = dataset
        final_dir = _exports_root() / str(export.pk)
        final_dir.mkdir(parents=True, exist_ok=True)
        final = final_dir / built.name
        digest = _sha256_of(built)
        os.replace(built, final)  # one rename: the complete file appears at once
        size = (
            final.stat().st_size
            if final.is_file()
            else sum(p.stat().st_size for p in final.rglob("*") if p.is_file())
        )
        export.status = ExportStatus.SUCCEEDED
        export.file_path = final.relative_to(Path(settings.MEDIA_ROOT)).as_posix()
        export.sha256 = digest
        export.size_bytes = size
        export.datasheet = sheet
        export.summary = {
            "instances": stats.instances,
            "documents": stats.documents,
            "annotations": stats.annotations,
        }
    except ExportCancelled:
        export.status = ExportStatus.CANCELLED
    except (ApplicationError, DocumentNotExportable) as exc:
        export.status = ExportStatus.FAILED
        export.error = str(exc)
    except Exception as exc:
        logger.exception("export %s crashed", export.pk)
        export.status = ExportStatus.FAILED
        export.error = f"internal error: {type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    export.finished_at = timezone.now()
    export.phase = "done"
    export.save()
    return export


def export_file_path(export: Export) -> Path | None:
    if export.status != ExportStatus.SUCCEEDED or not export.file_path:
        return None
    path = Path(settings.MEDIA_ROOT) / export.file_path
    return path if path.exists() else None
