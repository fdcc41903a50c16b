"""Curation's rules as plain functions (no ORM): how annotators' highlights become an item's
gold rationale sets, when annotators agree enough for a rule to curate an item alone, and how
well each annotation matches the curated gold.

Tokens are numbered across the item's documents in their order (the first document's tokens
0..n0-1, the next one's from n0, ...), so one item is one token space of `n_tokens` tokens
and a rationale set is a set of token numbers. An annotation is a list of such sets; where a
figure is per annotation, the annotation's tokens are the union of its sets. Kappa and F1
are the ones the agreement report and the metrics use (rationale_metrics), not copies.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rationale_metrics.agreement import cohen_kappa_counts, mean_pairwise_kappa
from rationale_metrics.gold_sets import token_f1

TokenSet = frozenset[int]
# One annotation's rationale sets, in order.
AnnotationSets = Sequence[Iterable[int]]

HAND = "hand"

# What an auto-merge rule tests, and how it builds the gold set when the test passes.
UNANIMOUS = "unanimous"
KAPPA = "kappa"
F1 = "f1"
AGREEMENT_TESTS = (UNANIMOUS, KAPPA, F1)
MAJORITY = "majority"
UNION = "union"
INTERSECTION = "intersection"
MERGES = (MAJORITY, UNION, INTERSECTION)


def annotation_tokens(sets: AnnotationSets) -> TokenSet:
    """Every token an annotation highlighted, in any of its sets."""
    return frozenset(token for tokens in sets for token in tokens)


def token_shares(annotations: Sequence[AnnotationSets], n_tokens: int) -> list[float]:
    """Per token of the item, the share of the annotations that highlighted it (0 with no
    annotation)."""
    counts = [0] * n_tokens
    for sets in annotations:
        for token in annotation_tokens(sets):
            if 0 <= token < n_tokens:
                counts[token] += 1
    return [count / len(annotations) if annotations else 0.0 for count in counts]


def sets_union(sets: Iterable[Iterable[int]]) -> TokenSet:
    return frozenset(token for tokens in sets for token in tokens)


def sets_intersection(sets: Iterable[Iterable[int]]) -> TokenSet:
    """The tokens every one of `sets` holds; nothing when there is no set."""
    chosen = [frozenset(tokens) for tokens in sets]
    if not chosen:
        return frozenset()
    return frozenset.intersection(*chosen)


def tokens_marked_by_at_least(annotations: Sequence[AnnotationSets], k: int) -> TokenSet:
    """The tokens at least `k` annotations highlighted (k of at most 0 counts as 1)."""
    counts: dict[int, int] = defaultdict(int)
    for sets in annotations:
        for token in annotation_tokens(sets):
            counts[token] += 1
    return frozenset(token for token, n in counts.items() if n >= max(k, 1))


def mean_pairwise_f1(token_sets: Sequence[Iterable[int]]) -> float | None:
    """The mean over all pairs of annotations of their token F1 (symmetric: F1 of a against
    b equals F1 of b against a; two empty ones agree, F1 1); None with fewer than two."""
    chosen = [sorted(set(tokens)) for tokens in token_sets]
    values = [
        float(token_f1(a, b)) if a or b else 1.0
        for i, a in enumerate(chosen)
        for b in chosen[i + 1 :]
    ]
    return math.fsum(values) / len(values) if values else None


def pairwise_agreement(
    annotations: Sequence[AnnotationSets], n_tokens: int
) -> tuple[float | None, float | None]:
    """An item's mean pairwise token kappa (undefined pairs left out, as the agreement
    report does) and mean pairwise token F1 among its annotations."""
    tokens = [set(annotation_tokens(sets)) for sets in annotations]
    kappa, _ = mean_pairwise_kappa(tokens, n_tokens)
    return kappa, mean_pairwise_f1(tokens)


def _normalised(sets: AnnotationSets) -> list[TokenSet]:
    """An annotation's non-empty sets, order and repeats of equal sets aside."""
    return sorted({frozenset(tokens) for tokens in sets if tokens}, key=sorted)


@dataclass(frozen=True)
class AutoMergeRule:
    """When annotators agree enough (`test`, at `threshold` for kappa and F1), and how their
    highlights become the gold set (`merge`; a unanimous item keeps its sets as they are)."""

    test: str = UNANIMOUS
    threshold: float = 1.0
    merge: str = MAJORITY

    @property
    def name(self) -> str:
        """What the curated annotation records as its rule, e.g. 'kappa>=0.8:majority'."""
        if self.test == UNANIMOUS:
            return UNANIMOUS
        return f"{self.test}>={self.threshold:g}:{self.merge}"


@dataclass(frozen=True)
class MergeOutcome:
    """The gold sets a rule gives an item, or None and why it was skipped."""

    sets: list[TokenSet] | None
    skipped: str | None = None


def merged_tokens(annotations: Sequence[AnnotationSets], merge: str) -> TokenSet:
    tokens = [annotation_tokens(sets) for sets in annotations]
    if merge == UNION:
        return sets_union(tokens)
    if merge == INTERSECTION:
        return sets_intersection(tokens)
    return tokens_marked_by_at_least(annotations, len(annotations) // 2 + 1)


def auto_merge(
    annotations: Sequence[AnnotationSets], n_tokens: int, rule: AutoMergeRule
) -> MergeOutcome:
    """The gold sets of an item whose annotators agree by `rule`, or why it was skipped:
    'fewer than two annotations', 'annotators disagree', 'agreement undefined' (kappa with
    every pair undefined, e.g. all highlighted nothing) or 'merged set is empty'."""
    if len(annotations) < 2:
        return MergeOutcome(None, "fewer than two annotations")
    shapes = [_normalised(sets) for sets in annotations]
    if all(shape == shapes[0] for shape in shapes):
        if not shapes[0]:
            return MergeOutcome(None, "merged set is empty")
        return MergeOutcome(list(shapes[0]))
    if rule.test == UNANIMOUS:
        return MergeOutcome(None, "annotators disagree")
    kappa, f1 = pairwise_agreement(annotations, n_tokens)
    value = kappa if rule.test == KAPPA else f1
    if value is None:
        return MergeOutcome(None, "agreement undefined")
    if value < rule.threshold:
        return MergeOutcome(None, "annotators disagree")
    merged = merged_tokens(annotations, rule.merge)
    if not merged:
        return MergeOutcome(None, "merged set is empty")
    return MergeOutcome([merged])


def against_gold(
    tokens: Iterable[int], gold: Iterable[int], n_tokens: int
) -> tuple[float | None, float]:
    """One annotation's token kappa (None when undefined) and token F1 against the gold
    tokens (F1 of two empty sets is 1: nothing to find, nothing found)."""
    mine, wanted = set(tokens), set(gold)
    kappa = cohen_kappa_counts(len(mine & wanted), len(mine), len(wanted), n_tokens)
    f1 = 1.0 if not mine and not wanted else float(token_f1(sorted(wanted), sorted(mine)))
    return kappa, f1


@dataclass
class GoldAgreement:
    """Annotations against the curated gold, per annotator and per variant: every value
    kept in the order added, so that parts joined in order give the same means as one pass
    (means are exact sums, math.fsum)."""

    f1: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: {"annotators": defaultdict(list), "variants": defaultdict(list)}
    )
    kappa: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: {"annotators": defaultdict(list), "variants": defaultdict(list)}
    )
    kappa_undefined: int = 0

    def add(self, *, annotator: str, variant: str, kappa: float | None, f1: float) -> None:
        for group, key in (("annotators", annotator), ("variants", variant)):
            self.f1[group][key].append(f1)
            if kappa is not None:
                self.kappa[group][key].append(kappa)
        self.kappa_undefined += kappa is None

    def add_item(
        self,
        annotations: Sequence[tuple[str, str, Iterable[int]]],
        gold: Iterable[int],
        n_tokens: int,
    ) -> None:
        """Each (annotator, variant, tokens) of one item against its gold tokens."""
        wanted = set(gold)
        for annotator, variant, tokens in annotations:
            kappa, f1 = against_gold(tokens, wanted, n_tokens)
            self.add(annotator=annotator, variant=variant, kappa=kappa, f1=f1)

    def merge(self, other: GoldAgreement) -> None:
        for name in ("f1", "kappa"):
            for group, values in getattr(other, name).items():
                for key, numbers in values.items():
                    getattr(self, name)[group][key].extend(numbers)
        self.kappa_undefined += other.kappa_undefined

    def summary(self) -> dict:
        """{"annotators"|"variants": {key: {"f1", "kappa", "n"}}, "kappa_undefined"}; means
        are None where no value was defined."""

        def mean(values: list[float]) -> float | None:
            return math.fsum(values) / len(values) if values else None

        return {
            group: {
                key: {
                    "f1": mean(self.f1[group][key]),
                    "kappa": mean(self.kappa[group].get(key, [])),
                    "n": len(self.f1[group][key]),
                }
                for key in sorted(self.f1[group])
            }
            for group in ("annotators", "variants")
        } | {"kappa_undefined": self.kappa_undefined}

    def as_json(self) -> dict:
        return {
            "f1": {g: dict(v) for g, v in self.f1.items()},
            "kappa": {g: dict(v) for g, v in self.kappa.items()},
            "kappa_undefined": self.kappa_undefined,
        }

    @classmethod
    def from_json(cls, data: dict) -> GoldAgreement:
        found = cls(kappa_undefined=data["kappa_undefined"])
        for name in ("f1", "kappa"):
            for group, values in data[name].items():
                for key, numbers in values.items():
                    getattr(found, name)[group][key].extend(numbers)
        return found
