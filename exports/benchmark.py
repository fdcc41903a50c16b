"""Exports in the fine-grained benchmark's own format
(docs/reference/metrics.md#fine-grained-benchmark-files).

One JSON-lines file, `<task>_<language>.jsonl` (`sentiment_en.jsonl`, `similarity_zh.jsonl`,
`reading_comprehension_en.jsonl`), holds every chosen item, since the format has no splits;
the datasheet goes beside it. The project's task type decides the task, and the mapping is
the import's, reversed (annotate/benchmark_mapping.py). Items and rationales are chosen as
for ERASER: each evidence group of the chosen aggregation is one token-index set. Sentiment
keeps every group as an alternative set; similarity and reading comprehension hold one set
(per sentence), so aggregations that give several sets per item are refused for them.
Perturbation links become `sample_type` and the originals' `rel_ids`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from django.db.models import QuerySet

from annotate.benchmark_mapping import (
    BenchmarkMisfit,
    ItemDocumentRows,
    ItemRows,
    Span,
    benchmark_task,
    instance_for_item,
)
from annotate.models import (
    Document,
    Item,
    ItemDocument,
    Project,
    RationaleSet,
    RationaleSpan,
    TaskType,
)
from config.exceptions import ApplicationError
from exports.aggregation import evidences_for, tally_against_gold, tally_item
from exports.params import ExportParams
from exports.selection import (
    CHUNK,
    LINES_KEY,
    BuildStats,
    ExportCancelled,
    PartFiles,
    annotation_rows,
    benchmark_file_name,
    curated_rows,
    perturbation_link,
    selected_items,
)
from rationale_metrics.benchmark_format import SentId, write_benchmark_gold

# Aggregations that keep each annotator's sets apart: several sets for one item.
SEVERAL_SETS = ("all_sets", "accepted_sets")
SHOWN_IDS = 5


def benchmark_export_check(*, project: Project, params: ExportParams) -> None:
    """Refuse, before any work, the choices the benchmark's format cannot hold."""
    task = benchmark_task(project.task_type)
    if task is None:
        raise ApplicationError(
            f"layout: a {TaskType(project.task_type).label} project has no benchmark task; the "
            "benchmark format holds sentiment (Single text), similarity (Text pair) and "
            "reading comprehension: export ERASER instead"
        )
    if task != "sentiment" and params.aggregation in SEVERAL_SETS:
        raise ApplicationError(
            f"aggregation: {params.aggregation!r} keeps every annotator's sets apart, but the "
            f"benchmark's {task} format holds one set per sentence: choose majority, union, "
            "annotator or reference"
        )
    if task != "sentiment" and params.aggregation == "curated":
        raise ApplicationError(
            f"aggregation: a curated gold may hold several sets per item, but the benchmark's "
            f"{task} format holds one set per sentence: choose majority, union, annotator or "
            "reference"
        )


def benchmark_plan_check(*, project: Project, params: ExportParams, selected: QuerySet) -> None:
    """Refuse, before any line is written, what the format cannot hold: the choices
    (`benchmark_export_check`), and a chosen perturbed item whose original is not chosen:
    its line would name no original, and the benchmark counts it as a pair that can never
    score. One query, whatever the number of items."""
    benchmark_export_check(project=project, params=params)
    orphans = list(
        selected.filter(perturbation_of__isnull=False)
        .exclude(perturbation_of__in=selected.values("pk"))
        .order_by("pk")
        .values_list("annotation_id", flat=True)
    )
    if orphans:
        shown = ", ".join(repr(a) for a in orphans[:SHOWN_IDS])
        more = f" and {len(orphans) - SHOWN_IDS} more" if len(orphans) > SHOWN_IDS else ""
        raise ApplicationError(
            f"benchmark: {len(orphans)} perturbed item(s) are chosen without their original "
            f"({shown}{more}); the format lists each perturbed line under its original in the "
            "same file: choose items so that their originals are chosen too (annotate the "
            "originals, or use selection 'reference')"
        )


def benchmark_write_chunk(
    *,
    project: Project,
    params: ExportParams,
    worker_id: int | None,
    pks: list[int],
    folder: Path,
    prefix: str,
    should_cancel: Callable[[], bool] | None = None,
) -> tuple[dict[str, Path], BuildStats]:
    """Write the chosen items `pks` (in order) as lines of the benchmark's gold file into
    a local part; return it and the chunk's figures."""
    task = benchmark_task(project.task_type)
    assert task is not None
    name = benchmark_file_name(project)
    stats = BuildStats(instances={name: 0})
    selected = selected_items(project, params, worker_id)
    files = PartFiles(folder, prefix)
    try:
        for start in range(0, len(pks), CHUNK):
            if should_cancel and should_cancel():
                raise ExportCancelled
            batch = pks[start : start + CHUNK]
            rel_ids = _exported_links(selected, batch)
            instances = []
            for item_rows in _chunk_rows(project, params, worker_id, batch, rel_ids, stats):
                try:
                    instances.append(instance_for_item(item_rows, task, project.language))
                except BenchmarkMisfit as exc:
                    raise ApplicationError(f"benchmark: {exc}") from exc
            stats.instances[name] += write_benchmark_gold(
                instances, files.handle(LINES_KEY), task, project.language
            )
    finally:
        written = files.close()
    return written, stats


def _exported_links(selected: QuerySet, originals: list[int]) -> dict[int, list[SentId]]:
    """The `rel_ids` of each of these originals: its chosen perturbed copies, in item
    order (the plan refused chosen copies whose original is not chosen)."""
    rel_ids: dict[int, list[SentId]] = defaultdict(list)
    perturbed = (
        selected.filter(perturbation_of__in=originals)
        .order_by("pk")
        .values_list("perturbation_of_id", "annotation_id", "annotation_id_is_int")
    )
    for original, annotation_id, is_int in perturbed:
        rel_ids[original].append(int(annotation_id) if is_int else annotation_id)
    return rel_ids


_ITEM_FIELDS = (
    "pk",
    "annotation_id",
    "annotation_id_is_int",
    "label",
    "query",
    "answer",
    "source_extra",
    "perturbation_of_id",
    "perturbation_types",
    "perturbation_of__annotation_id",
    "perturbation_of__annotation_id_is_int",
    "perturbation_of__source_extra",
)


def _chunk_rows(
    project: Project,
    params: ExportParams,
    worker_id: int | None,
    chunk: list[int],
    rel_ids: dict[int, list[SentId]],
    stats: BuildStats,
) -> list[ItemRows]:
    """Each item of the chunk as plain rows; a fixed number of queries per chunk (five for
    reference rationales, six for annotations)."""
    items = list(Item.objects.filter(pk__in=chunk).order_by("pk").values(*_ITEM_FIELDS))
    links = list(
        ItemDocument.objects.filter(item_id__in=chunk)
        .order_by("item_id", "position")
        .values_list("item_id", "role", "document_id")
    )
    documents = {
        pk: (docid, text, [text[s:e] for s, e in tokens.tolist()])
        for pk, docid, text, tokens in Document.objects.filter(
            pk__in={doc_id for _, _, doc_id in links}
        ).values_list("pk", "docid", "text", "tokens")
    }
    item_documents: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for item_id, role, doc_id in links:
        item_documents[item_id].append((role, doc_id))
    if params.selection == "reference":
        groups = _reference_groups(chunk)
    else:
        annotations = annotation_rows(project, params, worker_id, chunk, stats.tally.flags)
        curated = curated_rows(chunk)
        groups = {}
        for item in items:
            rows = annotations[item["pk"]]
            gold = curated.get(item["pk"])
            lengths = {documents[d][0]: len(documents[d][2]) for _, d in item_documents[item["pk"]]}
            tally_item(rows, lengths, stats.tally)
            if gold is not None:
                stats.count_curated(gold.rule)
                tally_against_gold(rows, gold, lengths, stats.gold)
            groups[item["pk"]] = [
                [(ev.docid, ev.start_token, ev.end_token) for ev in group]
                for group in evidences_for(rows, params.aggregation, gold)
            ]
            stats.empty_evidence_items += not groups[item["pk"]]
    out = []
    for item in items:
        pk = item["pk"]
        stats.count_perturbation(
            perturbation_link(
                item["perturbation_of__annotation_id"],
                item["perturbation_of__annotation_id_is_int"],
                item["perturbation_types"],
            )
        )
        rows = ItemRows(
            sent_id=int(item["annotation_id"])
            if item["annotation_id_is_int"]
            else item["annotation_id"],
            label=item["label"],
            query=item["query"],
            answer=item["answer"],
            source_extra=item["source_extra"] or {},
            documents=[
                ItemDocumentRows(documents[d][0], role, documents[d][1], documents[d][2])
                for role, d in item_documents[pk]
            ],
            groups=groups.get(pk, []),
            is_perturbed=item["perturbation_of_id"] is not None,
            rel_ids=rel_ids.get(pk, []),
            perturbation_types=list(item["perturbation_types"] or []),
            original_source_extra=item["perturbation_of__source_extra"] or {},
        )
        out.append(rows)
    return out


def _reference_groups(chunk: list[int]) -> dict[int, list[list[Span]]]:
    """The imported reference sets of each item, empty sets included, in set order."""
    groups: dict[int, dict[int, list[Span]]] = defaultdict(dict)
    for item_id, position in (
        RationaleSet.objects.filter(reference_item_id__in=chunk)
        .order_by("reference_item_id", "position")
        .values_list("reference_item_id", "position")
    ):
        groups[item_id][position] = []
    for item_id, position, docid, start, end in (
        RationaleSpan.objects.filter(rationale_set__reference_item_id__in=chunk)
        .order_by("rationale_set__reference_item_id", "rationale_set__position", "position")
        .values_list(
            "rationale_set__reference_item_id",
            "rationale_set__position",
            "document__docid",
            "start_token",
            "end_token",
        )
    ):
        groups[item_id][position].append((docid, start, end))
    return {item_id: [sets[p] for p in sorted(sets)] for item_id, sets in groups.items()}
