"""Metrics of the fine-grained interpretability benchmark
(docs/reference/metrics.md#token-f1-against-rationale-sets, #consistency-under-perturbation).

- `plausibility.token_f1`: token F1 against rationale sets, the gold of each instance
  chosen by a greedy union over its sets; macro over all gold instances.
- `plausibility.iou_match_rate`: the benchmark's "IOU-F1", the share of predicted sentences
  whose IoU with that chosen gold reaches 0.5. Not ERASER's IOU F1, hence its own name.
- `consistency.map`: MAP between the rationale tokens of originals and their perturbed copies.
- `faithfulness.new_p`: label kept on the rationale alone and lost without it.

All values are fractions in 0..1; the benchmark's own scripts print them x 100.

The default arithmetic is the public scoring code's, because it decides which union of
gold sets wins: precision and recall as floats, F1 = 2pr / (p + r) compared as floats, and
the predicted rationale counted as the list it is (a repeated index counts twice in its
length). `comparison="exact"` does the same with fractions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from rationale_metrics.benchmark_format import (
    BenchmarkInstance,
    BenchmarkPrediction,
    SentId,
)
from rationale_metrics.choices import COMPARISONS, GOLD_CHOICES
from rationale_metrics.extensions import map_consistency
from rationale_metrics.gold_sets import choose_gold, token_f1

# The rationale length ratio the benchmark's own pipeline cuts every explainer's ranking at
# (its top ceil(ratio x n) tokens per sentence), per task and language; one per sentence.
# They are the RATIO_DIC values of its generation script, PUBLISHED_RATIOS_SOURCE, which
# passes them to newp_text_generate.py --ratio; they differ from the paper's Table 3 RLR.
PUBLISHED_RATIOS_SOURCE = (
    "PaddleNLP examples/model_interpretation/rationale_extraction/generate.sh (RATIO_DIC)"
)
PUBLISHED_RATIOS: dict[tuple[str, str], tuple[float, ...]] = {
    ("sentiment", "en"): (0.192,),
    ("sentiment", "zh"): (0.311,),
    ("similarity", "en"): (0.511, 0.505),
    ("similarity", "zh"): (0.701, 0.709),
    ("reading_comprehension", "en"): (0.102,),
    ("reading_comprehension", "zh"): (0.096,),
}


@dataclass(frozen=True)
class FineGrainedOptions:
    """How to score. `ratios`: one per sentence, the share of each sentence's tokens kept
    from the top of a predicted rationale; None scores the rationales as they are."""

    ratios: tuple[float, ...] | None = None
    gold_choice: str = "greedy_union"
    comparison: str = "float"
    iou_threshold: float = 0.5

    def __post_init__(self):
        if self.gold_choice not in GOLD_CHOICES:
            raise ValueError(f"gold_choice must be one of {GOLD_CHOICES}, got {self.gold_choice!r}")
        if self.comparison not in COMPARISONS:
            raise ValueError(f"comparison must be one of {COMPARISONS}, got {self.comparison!r}")


# ---------------------------------------------------------------- rationale length


def top_k_count(n_tokens: int, ratio: float) -> int:
    """How many of a sentence's n tokens its rationale keeps: ceil(ratio x n)."""
    return math.ceil(n_tokens * ratio)


def gold_ratios(instances: Sequence[BenchmarkInstance]) -> tuple[float, ...]:
    """Per sentence position, the mean over instances of (tokens in the union of its gold
    sets) / (tokens in the sentence); sentences without tokens are left out."""
    if not instances:
        return ()
    n_sentences = len(instances[0].tokens)
    ratios = []
    for s in range(n_sentences):
        shares = [
            len({t for group in inst.rationale_sets[s] for t in group}) / len(inst.tokens[s])
            for inst in instances
            if inst.tokens[s]
        ]
        ratios.append(sum(shares) / len(shares) if shares else 0.0)
    return tuple(ratios)


def resolve_ratios(
    spec: Sequence[str], task: str, language: str, gold: Sequence[BenchmarkInstance]
) -> tuple[tuple[float, ...] | None, str]:
    """The ratios a command-line `--ratio` names, and where they came from.

    "published": the benchmark's own per-task values; "gold": computed from the gold file;
    "none": rationales scored as given; one number for every sentence, or one per sentence.
    """
    n_sentences = 2 if task == "similarity" else 1
    words = [s.lower() for s in spec]
    if words == ["published"]:
        return PUBLISHED_RATIOS[(task, language)], "published"
    if words == ["gold"]:
        return gold_ratios(gold) or (0.0,) * n_sentences, "gold"
    if words == ["none"]:
        return None, "none"
    try:
        values = tuple(float(s) for s in spec)
    except ValueError:
        raise ValueError(
            f"--ratio must be 'published', 'gold', 'none' or numbers, got {' '.join(spec)!r}"
        ) from None
    if len(values) == 1:
        values *= n_sentences
    if len(values) != n_sentences or not all(0 < v <= 1 for v in values):
        raise ValueError(
            f"--ratio for {task} takes 1 or {n_sentences} number(s) in (0, 1], got {' '.join(spec)}"
        )
    return values, "given"


def rationale_at_ratio(
    prediction: BenchmarkPrediction,
    instance: BenchmarkInstance,
    ratios: tuple[float, ...] | None,
) -> tuple[list[list[int]], list[list[str]]]:
    """Per sentence, the predicted rationale's top ceil(ratio x n) indexes and their tokens.

    The tokens are the prediction's `rationale_token` when it has them (what the public MAP
    reads), else the gold tokens at those indexes.
    """
    indexes, tokens = [], []
    for s, chosen in enumerate(prediction.rationale):
        words = (
            prediction.rationale_tokens[s]
            if prediction.rationale_tokens is not None
            else [instance.tokens[s][i] for i in chosen]
        )
        if ratios is not None:
            keep = top_k_count(len(instance.tokens[s]), ratios[s])
            chosen, words = chosen[:keep], words[:keep]
        indexes.append(chosen)
        tokens.append(words)
    return indexes, tokens


# ---------------------------------------------------------------- plausibility


def _meets(part: int, whole: int, threshold: float, exact: bool) -> bool:
    if not whole:
        return False
    if exact:
        return Fraction(part, whole) >= Fraction(threshold)
    return part / whole >= threshold


@dataclass
class InstanceScore:
    """One predicted instance: its chosen gold per sentence, F1 (mean over sentences) and
    how many of its sentences reach the IoU threshold."""

    sent_id: SentId
    chosen_gold: list[list[int]]
    f1: float | Fraction
    iou_matches: int


def score_instance(
    instance: BenchmarkInstance, rationale: list[list[int]], options: FineGrainedOptions
) -> InstanceScore:
    exact = options.comparison == "exact"
    chosen, f1s, matches = [], [], 0
    for sets, predicted in zip(instance.rationale_sets, rationale, strict=True):
        gold = choose_gold(sets, predicted, gold_choice=options.gold_choice, exact=exact)
        chosen.append(gold)
        f1s.append(token_f1(gold, predicted, exact=exact))
        predicted_set = set(predicted)
        overlap = len(predicted_set.intersection(gold))
        union = len(predicted_set) + len(set(gold)) - overlap
        matches += _meets(overlap, union, options.iou_threshold, exact)
    return InstanceScore(instance.sent_id, chosen, sum(f1s) / len(f1s), matches)


# ---------------------------------------------------------------- consistency, faithfulness


def consistency_map(
    gold: Sequence[BenchmarkInstance], rationale_tokens: dict[SentId, list[list[str]]]
) -> tuple[float | None, int]:
    """MAP summed over linked (original, perturbed) pairs that both have rationale tokens,
    per sentence, divided by the number of perturbed gold instances; the mean over
    sentences. Returns (MAP, pairs scored); MAP is None without perturbed instances.

    Pairs are summed in the order of `rationale_tokens` (the predictions file's), as the
    public code does, so the float sums agree to the last bit.
    """
    n_perturbed = sum(1 for inst in gold if not inst.is_original)
    if not n_perturbed:
        return None, 0
    by_id = {inst.sent_id: inst for inst in gold}
    n_sentences = len(gold[0].tokens)
    totals = [0.0] * n_sentences
    pairs = 0
    for sent_id, original in rationale_tokens.items():
        inst = by_id[sent_id]
        if not inst.is_original:
            continue
        for perturbed_id in inst.rel_ids:
            perturbed = rationale_tokens.get(perturbed_id)
            if perturbed is None:
                continue
            pairs += 1
            for s in range(n_sentences):
                totals[s] += map_consistency(original[s], perturbed[s])
    return sum(t / n_perturbed for t in totals) / n_sentences, pairs


def new_p(predictions: Sequence[BenchmarkPrediction], n_gold: int) -> float | None:
    """Share of gold instances whose label on the rationale alone equals the full-input
    label and whose label on the rest differs; None when the predictions carry no labels."""
    if not predictions or any(
        p.pred_label is None or p.rationale_pred is None or p.no_rationale_pred is None
        for p in predictions
    ):
        return None
    hits = sum(
        1
        for p in predictions
        if p.rationale_pred == p.pred_label and p.no_rationale_pred != p.pred_label
    )
    return hits / n_gold if n_gold else 0.0


# ---------------------------------------------------------------- everything


def score_fine_grained(
    gold: Sequence[BenchmarkInstance],
    predictions: Sequence[BenchmarkPrediction],
    options: FineGrainedOptions | None = None,
) -> dict:
    """Every metric of the benchmark for predictions already checked against `gold`."""
    options = options or FineGrainedOptions()
    by_id = {inst.sent_id: inst for inst in gold}
    exact = options.comparison == "exact"
    total_f1 = Fraction(0) if exact else 0.0
    matches = sentences = cut = 0
    tokens_by_id: dict[SentId, list[list[str]]] = {}
    for prediction in predictions:
        instance = by_id[prediction.id]
        rationale, tokens = rationale_at_ratio(prediction, instance, options.ratios)
        cut += any(
            len(kept) < len(given)
            for kept, given in zip(rationale, prediction.rationale, strict=True)
        )
        tokens_by_id[prediction.id] = tokens
        scored = score_instance(instance, rationale, options)
        total_f1 += scored.f1
        matches += scored.iou_matches
        sentences += len(rationale)
    map_score, pairs = consistency_map(gold, tokens_by_id)
    n_gold = len(gold)
    n_perturbed = sum(1 for inst in gold if not inst.is_original)
    return {
        "plausibility": {
            "token_f1": float(total_f1 / n_gold) if n_gold else 0.0,
            "iou_match_rate": matches / sentences if sentences else 0.0,
        },
        "consistency": {"map": map_score},
        "faithfulness": {"new_p": new_p(predictions, n_gold)},
        "counts": {
            "gold_instances": n_gold,
            "originals": n_gold - n_perturbed,
            "perturbed": n_perturbed,
            "predictions": len(predictions),
            # Shortened by the cut to `options.ratios`: with none, the scores are the
            # public scripts' on the rationales as given.
            "cut_to_ratio": cut,
            "pairs_scored": pairs,
        },
    }
