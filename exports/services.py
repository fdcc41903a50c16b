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
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from annotate.models import (
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
from exports.aggregation import AnnotationRow, QualityTally, evidences_for, tally_item
from exports.datasheet import datasheet_build, datasheet_markdown
from exports.models import Export, ExportStatus
from exports.params import BENCHMARK_LAYOUT, ExportParams, export_params_from
from qc.models import VerdictOutcome
from qc.selectors import flag_counts
from rationale_metrics.eraser_writer import (
    DatasetSink,
    DirectorySink,
    DocumentNotExportable,
    ExportDocument,
    ExportEvidence,
    ExportInstance,
    ZipSink,
    write_documents,
)

logger = logging.getLogger(__name__)
CHUNK = 500
SPLITS = ("train", "val", "test")


class ExportCancelled(Exception):
    pass


class NothingToExport(ApplicationError):
    """No item matches the parameters: a failed export, but a datasheet preview can still
    show the rest of the sheet."""


@dataclass
class BuildStats:
    instances: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPLITS, 0))
    documents: int = 0
    empty_evidence_items: int = 0
    tally: QualityTally = field(default_factory=QualityTally)
    perturbed_instances: int = 0
    perturbed_per_type: dict[str, int] = field(default_factory=dict)

    def count_perturbation(self, link: dict) -> None:
        if link:
            self.perturbed_instances += 1
            for key in link["perturbation_types"]:
                self.perturbed_per_type[key] = self.perturbed_per_type.get(key, 0) + 1


def _perturbation_link(original_id: str | None, original_is_int: bool, types) -> dict:
    """The extra keys of a perturbed instance's line (README, "Export"): its original's
    annotation_id, with the JSON type it was imported with, and its perturbation types.
    Lines of items that are not perturbations stay exactly as ERASER writes them."""
    if original_id is None and not types:
        return {}
    original = int(original_id) if original_id is not None and original_is_int else original_id
    return {"perturbation_of": original, "perturbation_types": list(types or [])}


def _export_document(document: Document) -> ExportDocument:
    return ExportDocument(
        docid=document.docid, tokens=document.token_texts(), sentence_ranges=document.sentences
    )


def _submitted_assignments(project: Project, params: ExportParams, worker_id: int | None):
    """The newest round of each annotation (earlier rounds sent back for revision are
    superseded); only accepted ones for `accepted`; optionally one variant, one cohort."""
    chosen = Assignment.objects.filter(
        item__project=project,
        status=AssignmentStatus.SUBMITTED,
        annotation__revisions__isnull=True,
    )
    if params.selection == "accepted":
        chosen = chosen.filter(annotation__verdict__outcome=VerdictOutcome.ACCEPTED)
    if params.cohort:
        chosen = chosen.filter(
            worker__project_standings__project=project,
            worker__project_standings__cohort=params.cohort,
        )
    if params.variant:
        chosen = chosen.filter(variant__name=params.variant)
    if worker_id is not None:
        chosen = chosen.filter(worker_id=worker_id)
    return chosen


def _selected_item_ids(project: Project, params: ExportParams, worker_id: int | None) -> list[int]:
    items = Item.objects.filter(project=project)
    if params.selection != "reference":
        items = items.filter(
            pk__in=_submitted_assignments(project, params, worker_id).values("item_id")
        )
    return list(items.order_by("pk").values_list("pk", flat=True))


def _document_rows(document_ids) -> dict[int, ExportDocument]:
    rows = Document.objects.filter(pk__in=document_ids).values_list(
        "pk", "docid", "text", "tokens", "sentences"
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
            "perturbation_of__annotation_id",
            "perturbation_of__annotation_id_is_int",
            "perturbation_types",
        )
    )
    links = list(
        ItemDocument.objects.filter(item_id__in=chunk)
        .order_by("item_id", "position")
        .values_list("item_id", "document_id")
    )
    documents = _document_rows({doc_id for _, doc_id in links})
    item_documents: dict[int, list[ExportDocument]] = defaultdict(list)
    for item_id, doc_id in links:
        item_documents[item_id].append(documents[doc_id])
    return items, item_documents, _annotation_rows(project, params, worker_id, chunk, flags)


def _annotation_rows(
    project: Project, params: ExportParams, worker_id: int | None, chunk: list[int], flags: dict
) -> dict[int, list[AnnotationRow]]:
    """The chunk's chosen annotations per item, with their sets in order, and their flag
    counts added to `flags`: three queries."""
    assignments = list(
        _submitted_assignments(project, params, worker_id)
        .filter(item_id__in=chunk)
        .order_by("pk")
        .values_list(
            "item_id", "worker_id", "variant__name", "annotation__pk", "annotation__time_spent_ms"
        )
    )
    sets: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    spans = (
        RationaleSpan.objects.filter(rationale_set__annotation_id__in=[a[3] for a in assignments])
        .order_by("rationale_set__annotation_id", "rationale_set__position", "position")
        .values_list(
            "rationale_set__annotation_id",
            "rationale_set__position",
            "document__docid",
            "start_token",
            "end_token",
        )
    )
    for annotation_id, position, docid, start, end in spans:
        sets[annotation_id][position].append((docid, start, end))
    annotations: dict[int, list[AnnotationRow]] = defaultdict(list)
    for kind, n in flag_counts(annotation_ids=[a[3] for a in assignments]).items():
        flags[kind] = flags.get(kind, 0) + n
    for item_id, worker, variant, annotation_id, time_ms in assignments:
        by_position = sets.get(annotation_id, {})
        annotations[item_id].append(
            AnnotationRow(worker, variant, time_ms, [by_position[p] for p in sorted(by_position)])
        )
    return annotations


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
    return _perturbation_link(
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


def export_build(
    *,
    project: Project,
    params: ExportParams,
    sink: DatasetSink,
    progress: Callable[[str, int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> BuildStats:
    """Write the ERASER dataset for `params` into `sink` (a directory or a zip)."""
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
    item_ids = _selected_item_ids(project, params, worker_id)
    if not item_ids:
        raise NothingToExport("nothing to export: no item matches these parameters")
    if params.layout == BENCHMARK_LAYOUT:
        # Imported here, not at the top: that module builds on this one's readers.
        from exports.benchmark import benchmark_export_write

        return benchmark_export_write(
            project=project,
            params=params,
            item_ids=item_ids,
            worker_id=worker_id,
            sink=sink,
            progress=progress,
            should_cancel=should_cancel,
        )
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

    stats = BuildStats()
    handles = {split: sink.open_text(f"{split}.jsonl") for split in SPLITS}
    try:
        for start in range(0, len(item_ids), CHUNK):
            if should_cancel and should_cancel():
                raise ExportCancelled
            chunk = item_ids[start : start + CHUNK]
            if params.selection == "reference":
                for item in _reference_items(chunk):
                    documents = {
                        link.document.docid: _export_document(link.document)
                        for link in item.item_documents.all()
                    }
                    handles[item_split[item.pk]].write(
                        _reference_instance(item, documents).line(documents) + "\n"
                    )
                    stats.instances[item_split[item.pk]] += 1
                    stats.count_perturbation(_reference_link(item))
            else:
                items, item_documents, annotations = _submitted_chunk(
                    project, params, worker_id, chunk, stats.tally.flags
                )
                for item in items:
                    docs = {d.docid: d for d in item_documents[item["pk"]]}
                    rows = annotations[item["pk"]]
                    link = _perturbation_link(
                        item["perturbation_of__annotation_id"],
                        item["perturbation_of__annotation_id_is_int"],
                        item["perturbation_types"],
                    )
                    stats.count_perturbation(link)
                    tally_item(
                        rows, {docid: len(d.tokens) for docid, d in docs.items()}, stats.tally
                    )
                    instance = ExportInstance(
                        annotation_id=int(item["annotation_id"])
                        if item["annotation_id_is_int"]
                        else item["annotation_id"],
                        classification=item["label"],
                        docids=list(docs),
                        evidences=evidences_for(rows, params.aggregation),
                        query=item["query"],
                        query_type=item["query_type"],
                        extra=link,
                    )
                    stats.empty_evidence_items += not instance.evidences
                    split = item_split[item["pk"]]
                    handles[split].write(instance.line(docs) + "\n")
                    stats.instances[split] += 1
            if progress:
                progress("instances", min(start + CHUNK, len(item_ids)), len(item_ids))
    finally:
        for handle in handles.values():
            handle.close()

    doc_ids = sorted(
        set(ItemDocument.objects.filter(item_id__in=item_ids).values_list("document_id", flat=True))
    )

    def documents():
        for begin in range(0, len(doc_ids), CHUNK):
            yield from _document_rows(doc_ids[begin : begin + CHUNK]).values()

    stats.documents = write_documents(sink, documents(), params.layout)
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


def export_write_datasheet(
    *, project: Project, params: ExportParams, stats: BuildStats, sink: DatasetSink
) -> dict:
    sheet = datasheet_build(project=project, params=params, stats=stats)
    sink.write_text(
        "datasheet.json", json.dumps(sheet, indent=2, sort_keys=True, default=str) + "\n"
    )
    sink.write_text("datasheet.md", datasheet_markdown(sheet))
    return sheet


@transaction.atomic
def export_start(*, project: Project, acting_user, raw_params: dict) -> Export:
    params = export_params_from(raw_params)
    if params.layout == BENCHMARK_LAYOUT:
        from exports.benchmark import benchmark_export_check

        benchmark_export_check(project=project, params=params)  # refused now, not in the job
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
        export.heartbeat_at = timezone.now()
        export.save(update_fields=["status", "started_at", "heartbeat_at"])
    _remove_work_folders(export.pk)  # left by a run whose worker died

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
        if params.archive == "zip":
            built = work / f"{name}.zip"
            sink = ZipSink(built, name, work / "scratch")
        else:
            built = dataset
            sink = DirectorySink(dataset)
        try:
            stats = export_build(
                project=export.project,
                params=params,
                sink=sink,
                progress=progress,
                should_cancel=should_cancel,
            )
            sheet = export_write_datasheet(
                project=export.project, params=params, stats=stats, sink=sink
            )
        finally:
            sink.close()
        if should_cancel():
            raise ExportCancelled
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
            "annotations": stats.tally.annotations,
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


def _remove_work_folders(export_id: int) -> None:
    for folder in (_exports_root() / "tmp").glob(f"{export_id}-*"):
        shutil.rmtree(folder, ignore_errors=True)


def export_fail_if_worker_lost(export: Export) -> Export:
    """A running export whose worker stopped reporting is marked failed and its temporary
    folder removed; nothing was published, since publishing is the job's last step."""
    if export.status != ExportStatus.RUNNING:
        return export
    last = export.heartbeat_at or export.started_at
    if last and (timezone.now() - last).total_seconds() < settings.JOB_HEARTBEAT_TIMEOUT_SECONDS:
        return export
    updated = Export.objects.filter(pk=export.pk, status=ExportStatus.RUNNING).update(
        status=ExportStatus.FAILED,
        phase="done",
        finished_at=timezone.now(),
        error=(
            f"the worker running this export stopped (no report for {settings.JOB_HEARTBEAT_TIMEOUT_SECONDS} s); "
            "no file was published; start the export again"
        ),
    )
    if updated:
        _remove_work_folders(export.pk)
    export.refresh_from_db()
    return export


def export_file_path(export: Export) -> Path | None:
    if export.status != ExportStatus.SUCCEEDED or not export.file_path:
        return None
    path = Path(settings.MEDIA_ROOT) / export.file_path
    return path if path.exists() else None
