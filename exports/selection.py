"""What an export reads and counts, whichever its layout (ERASER's, built in
exports/build.py, or the fine-grained benchmark's, in exports/benchmark.py): the chosen
items and their submitted annotations as plain rows, the figures a chunk counts for the
datasheet, and the local files a chunk writes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from django.db.models import Exists, OuterRef, QuerySet

from annotate.benchmark_mapping import benchmark_task
from annotate.models import Annotation, Assignment, AssignmentStatus, Item, Project, RationaleSpan
from exports.aggregation import AnnotationRow, CuratedRow, QualityTally, Span
from exports.params import ExportParams
from qc.curation_rules import HAND, GoldAgreement
from qc.filters import ItemListFilter, item_filter_data
from qc.models import CuratedAnnotation, CuratedSpan, VerdictOutcome
from qc.selectors import flag_counts

# Rows read per query inside a chunk.
CHUNK = 500
SPLITS = ("train", "val", "test")
DOCUMENTS_KEY = "docs"
LINES_KEY = "lines"  # the benchmark layout's one file


class ExportCancelled(Exception):
    pass


@dataclass
class BuildStats:
    instances: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPLITS, 0))
    documents: int = 0
    empty_evidence_items: int = 0
    tally: QualityTally = field(default_factory=QualityTally)
    perturbed_instances: int = 0
    perturbed_per_type: dict[str, int] = field(default_factory=dict)
    # Of the exported items, how many have a curated gold, by hand or by a rule, and the
    # exported annotations against it (by worker id and variant name).
    curated_by_hand: int = 0
    curated_by_rule: int = 0
    gold: GoldAgreement = field(default_factory=GoldAgreement)
    # Chosen items the curated aggregation left out: no curator has curated them (counted
    # by the plan, not by the chunks).
    uncurated_left_out: int = 0

    def count_perturbation(self, link: dict) -> None:
        if link:
            self.perturbed_instances += 1
            for key in link["perturbation_types"]:
                self.perturbed_per_type[key] = self.perturbed_per_type.get(key, 0) + 1

    def count_curated(self, rule: str) -> None:
        if rule == HAND:
            self.curated_by_hand += 1
        else:
            self.curated_by_rule += 1

    def merge(self, other: BuildStats) -> None:
        """Add the figures of a later chunk."""
        for key, n in other.instances.items():
            self.instances[key] = self.instances.get(key, 0) + n
        self.documents += other.documents
        self.empty_evidence_items += other.empty_evidence_items
        self.tally.merge(other.tally)
        self.perturbed_instances += other.perturbed_instances
        for key, n in other.perturbed_per_type.items():
            self.perturbed_per_type[key] = self.perturbed_per_type.get(key, 0) + n
        self.curated_by_hand += other.curated_by_hand
        self.curated_by_rule += other.curated_by_rule
        self.gold.merge(other.gold)

    def as_json(self) -> dict:
        return {
            "instances": self.instances,
            "documents": self.documents,
            "empty_evidence_items": self.empty_evidence_items,
            "tally": self.tally.as_json(),
            "perturbed_instances": self.perturbed_instances,
            "perturbed_per_type": self.perturbed_per_type,
            "curated_by_hand": self.curated_by_hand,
            "curated_by_rule": self.curated_by_rule,
            "gold": self.gold.as_json(),
        }

    @classmethod
    def from_json(cls, data: dict) -> BuildStats:
        return cls(
            instances=dict(data["instances"]),
            documents=data["documents"],
            empty_evidence_items=data["empty_evidence_items"],
            tally=QualityTally.from_json(data["tally"]),
            perturbed_instances=data["perturbed_instances"],
            perturbed_per_type=dict(data["perturbed_per_type"]),
            curated_by_hand=data["curated_by_hand"],
            curated_by_rule=data["curated_by_rule"],
            gold=GoldAgreement.from_json(data["gold"]),
        )


def perturbation_link(original_id: str | None, original_is_int: bool, types) -> dict:
    """The extra keys of a perturbed instance's line (README, "Export"): its original's
    annotation_id, with the JSON type it was imported with, and its perturbation types.
    Lines of items that are not perturbations stay exactly as ERASER writes them."""
    if original_id is None and not types:
        return {}
    original = int(original_id) if original_id is not None and original_is_int else original_id
    return {"perturbation_of": original, "perturbation_types": list(types or [])}


# ---------------------------------------------------------------- selection


def _submitted_assignments(project: Project, params: ExportParams, worker_id: int | None):
    """The newest round of each annotation (earlier rounds sent back for revision are
    superseded); only accepted ones for `accepted`; optionally one variant, one cohort."""
    # "Has no revision" as NOT EXISTS, not as `annotation__revisions__isnull` (a LEFT JOIN
    # and IS NULL): PostgreSQL estimated that form at 1 row, and the plan's streaming
    # cursor, planned for its first rows, then took minutes on 100,000 items; with NOT
    # EXISTS the estimate is right and the same ids stream in 0.6 s.
    chosen = Assignment.objects.filter(
        ~Exists(Annotation.objects.filter(revision_of=OuterRef("annotation"))),
        item__project=project,
        status=AssignmentStatus.SUBMITTED,
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


def selected_items(project: Project, params: ExportParams, worker_id: int | None) -> QuerySet:
    """The items to export: never an excluded or deleted one; with an item filter, only
    those the data manager's list shows for it (its summaries are brought up to date when
    the export is planned). The curated aggregation then leaves out the ones no curator has
    curated (`curated_only`)."""
    items = Item.objects.filter(project=project, excluded=False, deleted_at__isnull=True)
    if params.item_filter is not None:
        items = ItemListFilter(
            data=item_filter_data(params.item_filter),
            queryset=items.filter(summary__project=project),
        ).qs.order_by()
    if params.selection != "reference":
        items = items.filter(
            pk__in=_submitted_assignments(project, params, worker_id).values("item_id")
        )
    return items


def curated_only(items: QuerySet) -> QuerySet:
    return items.filter(curated_annotation__isnull=False)


def curated_rows(chunk: list[int]) -> dict[int, CuratedRow]:
    """The chunk's curated annotations with their gold sets: two queries."""
    found = {
        item_id: (pk, rule, label)
        for pk, item_id, rule, label in CuratedAnnotation.objects.filter(
            item_id__in=chunk
        ).values_list("pk", "item_id", "rule", "label")
    }
    sets: dict[int, dict[int, list[Span]]] = defaultdict(lambda: defaultdict(list))
    spans = (
        CuratedSpan.objects.filter(curated_set__curated_id__in=[v[0] for v in found.values()])
        .order_by("curated_set__curated_id", "curated_set__position", "position")
        .values_list(
            "curated_set__curated_id",
            "curated_set__position",
            "document__docid",
            "start_token",
            "end_token",
        )
    )
    for curated_id, position, docid, start, end in spans:
        sets[curated_id][position].append((docid, start, end))
    return {
        item_id: CuratedRow(rule, label, [sets[pk][p] for p in sorted(sets.get(pk, {}))])
        for item_id, (pk, rule, label) in found.items()
    }


def annotation_rows(
    project: Project, params: ExportParams, worker_id: int | None, chunk: list[int], flags: dict
) -> dict[int, list[AnnotationRow]]:
    """The chunk's chosen annotations per item, with their sets in order, and their flag
    counts added to `flags`: three queries."""
    assignments = list(
        _submitted_assignments(project, params, worker_id)
        .filter(item_id__in=chunk)
        .order_by("pk")
        .values_list(
            "item_id",
            "worker_id",
            "variant__name",
            "annotation__pk",
            "annotation__time_spent_ms",
            "annotation__suggestions",
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
    for item_id, worker, variant, annotation_id, time_ms, suggestions in assignments:
        by_position = sets.get(annotation_id, {})
        annotations[item_id].append(
            AnnotationRow(
                worker,
                variant,
                time_ms,
                [by_position[p] for p in sorted(by_position)],
                suggestions,
            )
        )
    return annotations


# ---------------------------------------------------------------- parts


class PartFiles:
    """The local files a chunk writes, one per key (a split, or the documents), opened on
    first use: a split with no line in this chunk has no file."""

    def __init__(self, folder: Path, prefix: str):
        self.folder = folder
        self.prefix = prefix
        self.handles: dict[str, TextIO] = {}

    def path(self, key: str) -> Path:
        return self.folder / f"{self.prefix}.{key}.jsonl"

    def handle(self, key: str) -> TextIO:
        if key not in self.handles:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.handles[key] = open(self.path(key), "w", encoding="utf-8", newline="")  # noqa: SIM115
        return self.handles[key]

    def close(self) -> dict[str, Path]:
        for handle in self.handles.values():
            handle.close()
        return {key: self.path(key) for key in self.handles}


def benchmark_file_name(project: Project) -> str:
    return f"{benchmark_task(project.task_type)}_{project.language}.jsonl"
