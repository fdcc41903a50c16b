"""Turn annotators' highlights into ERASER evidences, and per-item quality figures.

Plain functions over plain rows (no ORM), so they are easy to test and cheap to run for
every item of a large export.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from dataclasses import dataclass, field

from qc.curation_rules import GoldAgreement
from rationale_metrics.agreement import mean_pairwise_kappa
from rationale_metrics.eraser_writer import ExportEvidence, runs_of

Span = tuple[str, int, int]  # docid, start token, end token


@dataclass
class AnnotationRow:
    worker_id: int
    variant: str
    time_spent_ms: int
    sets: list[list[Span]]  # in set order, spans in position order
    # What the annotation records of model suggestions (annotate's Annotation.suggestions).
    suggestions: dict | None = None

    def tokens(self) -> dict[str, set[int]]:
        chosen: dict[str, set[int]] = defaultdict(set)
        for spans in self.sets:
            for docid, start, end in spans:
                chosen[docid].update(range(start, end))
        return chosen


@dataclass(frozen=True)
class CuratedRow:
    """An item's curated gold (qc's CuratedAnnotation) as plain rows."""

    rule: str
    label: str | None
    sets: list[list[Span]]  # in set order, spans in position order

    def tokens(self, offsets: dict[str, int]) -> set[int]:
        """The gold's tokens (any set) numbered across the item's documents."""
        return {
            offsets[docid] + t
            for spans in self.sets
            for docid, start, end in spans
            for t in range(start, end)
        }


def _kappas() -> array:
    return array("d")


@dataclass
class QualityTally:
    """An export's quality figures, accumulated item by item.

    The per-annotation times and per-item kappas are machine arrays (8 bytes a value)
    rather than lists of Python numbers (32 to 36 bytes): at 100,000 items x 3 annotations
    that is 3 MB instead of 14 MB, most of what an export held in proportion to its items.
    They keep every value, in item order, so that chunks merged in order give the same
    quartiles and means as one pass."""

    annotations: int = 0
    annotations_per_item: dict[int, int] = field(default_factory=dict)
    time_spent_ms: array = field(default_factory=lambda: array("q"))
    workers_per_variant: dict[str, set] = field(default_factory=lambda: defaultdict(set))
    kappa_per_variant: dict[str, array] = field(default_factory=lambda: defaultdict(_kappas))
    kappa_excluded: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    flags: dict[str, int] = field(default_factory=dict)  # automatic flags by kind
    # Per variant: annotations made with model suggestions, and suggested tokens accepted.
    with_suggestions: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    suggestions_accepted: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def merge(self, other: QualityTally) -> None:
        """Add the figures of the items that follow (a later chunk)."""
        self.annotations += other.annotations
        for n, count in other.annotations_per_item.items():
            self.annotations_per_item[n] = self.annotations_per_item.get(n, 0) + count
        self.time_spent_ms.extend(other.time_spent_ms)
        for name, workers in other.workers_per_variant.items():
            self.workers_per_variant[name] |= workers
        for name, values in other.kappa_per_variant.items():
            self.kappa_per_variant[name].extend(values)
        for name, n in other.kappa_excluded.items():
            self.kappa_excluded[name] += n
        for kind, n in other.flags.items():
            self.flags[kind] = self.flags.get(kind, 0) + n
        for name, n in other.with_suggestions.items():
            self.with_suggestions[name] += n
        for name, n in other.suggestions_accepted.items():
            self.suggestions_accepted[name] += n

    def as_json(self) -> dict:
        """Plain JSON, exact: floats round-trip through their shortest repr."""
        return {
            "annotations": self.annotations,
            "annotations_per_item": [[n, c] for n, c in sorted(self.annotations_per_item.items())],
            "time_spent_ms": self.time_spent_ms.tolist(),
            "workers_per_variant": {k: sorted(v) for k, v in self.workers_per_variant.items()},
            "kappa_per_variant": {k: v.tolist() for k, v in self.kappa_per_variant.items()},
            "kappa_excluded": dict(self.kappa_excluded),
            "flags": self.flags,
            "with_suggestions": dict(self.with_suggestions),
            "suggestions_accepted": dict(self.suggestions_accepted),
        }

    @classmethod
    def from_json(cls, data: dict) -> QualityTally:
        tally = cls(
            annotations=data["annotations"],
            annotations_per_item={n: c for n, c in data["annotations_per_item"]},
            time_spent_ms=array("q", data["time_spent_ms"]),
            flags=dict(data["flags"]),
        )
        for name, workers in data["workers_per_variant"].items():
            tally.workers_per_variant[name] = set(workers)
        for name, values in data["kappa_per_variant"].items():
            tally.kappa_per_variant[name] = array("d", values)
        for name, n in data["kappa_excluded"].items():
            tally.kappa_excluded[name] = n
        # Parts staged before suggestions were recorded have neither.
        for name, n in data.get("with_suggestions", {}).items():
            tally.with_suggestions[name] = n
        for name, n in data.get("suggestions_accepted", {}).items():
            tally.suggestions_accepted[name] = n
        return tally


def evidences_for(
    annotations: list[AnnotationRow], aggregation: str, curated: CuratedRow | None = None
) -> list[list[ExportEvidence]]:
    """`majority`: tokens chosen by more than half the annotators, one group of runs;
    `union`: tokens chosen by anyone; `annotator` / `all_sets` / `accepted_sets` (the
    rows are then accepted annotations only): every set is a group; `curated`: each of the
    curators' gold sets is a group (none without a curated gold)."""
    if aggregation == "curated":
        if curated is None:
            return []
        return [
            [ExportEvidence(docid, start, end) for docid, start, end in spans]
            for spans in curated.sets
            if spans
        ]
    if aggregation in ("annotator", "all_sets", "accepted_sets"):
        return [
            [ExportEvidence(docid, start, end) for docid, start, end in spans]
            for annotation in annotations
            for spans in annotation.sets
            if spans
        ]
    votes: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for annotation in annotations:
        for docid, tokens in annotation.tokens().items():
            for token in tokens:
                votes[docid][token] += 1
    needed = 1 if aggregation == "union" else len(annotations) // 2 + 1
    group = [
        ExportEvidence(docid, start, end)
        for docid in sorted(votes)
        for start, end in runs_of(t for t, n in votes[docid].items() if n >= needed)
    ]
    return [group] if group else []


def suggestions_extra(annotations: list[AnnotationRow]) -> dict:
    """The extra key of an instance's line whose annotations include any made with model
    suggestions: for each of those, in order, its variant, the run and k it was shown, and
    the suggested tokens it accepted. Other lines stay exactly as ERASER writes them."""
    shown = [
        {
            "variant": a.variant,
            "run": a.suggestions["run"],
            "k": a.suggestions["k"],
            "accepted": a.suggestions.get("accepted", []),
        }
        for a in annotations
        if a.suggestions is not None
    ]
    return {"annotations_with_suggestions": shown} if shown else {}


def tally_item(
    annotations: list[AnnotationRow], doc_lengths: dict[str, int], tally: QualityTally
) -> None:
    """Counts, times, workers, and the item's mean pairwise kappa within each variant."""
    tally.annotations += len(annotations)
    tally.annotations_per_item[len(annotations)] = (
        tally.annotations_per_item.get(len(annotations), 0) + 1
    )
    total = sum(doc_lengths.values())
    by_variant: dict[str, list[set]] = defaultdict(list)
    for annotation in annotations:
        tally.time_spent_ms.append(annotation.time_spent_ms)
        tally.workers_per_variant[annotation.variant].add(annotation.worker_id)
        chosen = {(docid, t) for docid, tokens in annotation.tokens().items() for t in tokens}
        by_variant[annotation.variant].append(chosen)
        if annotation.suggestions is not None:
            tally.with_suggestions[annotation.variant] += 1
            tally.suggestions_accepted[annotation.variant] += len(
                annotation.suggestions.get("accepted", ())
            )
    for name, sets in by_variant.items():
        mean, excluded = mean_pairwise_kappa(sets, total)
        tally.kappa_excluded[name] += excluded
        if mean is not None:
            tally.kappa_per_variant[name].append(mean)


def tally_against_gold(
    annotations: list[AnnotationRow],
    curated: CuratedRow,
    doc_lengths: dict[str, int],
    stats_gold: GoldAgreement,
) -> None:
    """Each annotation of an item (its tokens in any set) against the item's curated gold,
    by worker id and variant: token F1 and kappa over the item's documents."""
    offsets, total = {}, 0
    for docid, length in doc_lengths.items():
        offsets[docid] = total
        total += length
    gold = curated.tokens(offsets)
    stats_gold.add_item(
        [
            (
                str(a.worker_id),
                a.variant,
                {offsets[d] + t for d, tokens in a.tokens().items() for t in tokens},
            )
            for a in annotations
        ],
        gold,
        total,
    )
