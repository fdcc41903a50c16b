"""Metrics beyond the ERASER reference (METRICS.md sections 3-5), each reported under its own key.

- token F1 against rationale *sets* and its IoU-match figure (the fine-grained benchmark);
- MAP consistency between original and perturbed instances, and New-P;
- top-k discretization of soft scores;
- the paper's AOPC formula.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

TokenSet = frozenset


def set_f1(predicted: set | frozenset, gold: set | frozenset) -> float:
    if not predicted or not gold:
        return 0.0
    common = len(predicted & gold)
    if common == 0:
        return 0.0
    return 2 * common / (len(predicted) + len(gold))


def choose_gold_set(
    predicted: frozenset, sets: Sequence[frozenset], *, best_single: bool = False
) -> frozenset:
    """The gold token set a prediction is scored against.

    First the single set with the highest F1 (earliest wins a tie). Then, unless
    `best_single`, for each start s from the first set to the second-to-last, a greedy
    union from s onward that adds a set only if it is not already covered, has F1 > 0 on
    its own and strictly raises the union's F1; a union replaces the gold only if its F1 is
    strictly higher. Nothing overlapping at all gives the empty set.
    """
    if not sets:
        return frozenset()
    scores = [set_f1(predicted, s) for s in sets]
    best_index = int(np.argmax(scores))
    gold, best = sets[best_index], scores[best_index]
    if not best_single:
        for start in range(len(sets) - 1):
            union: frozenset = frozenset()
            union_f1 = 0.0
            for candidate, own in zip(sets[start:], scores[start:], strict=True):
                if candidate <= union or own <= 0:
                    continue
                merged = union | candidate
                merged_f1 = set_f1(predicted, merged)
                if merged_f1 > union_f1:
                    union, union_f1 = merged, merged_f1
            if union_f1 > best:
                gold, best = union, union_f1
    return gold if best > 0 else frozenset()


def rationale_set_scores(
    gold_sets: dict[str, list[list[frozenset]]],
    predicted: dict[str, list[frozenset]],
    *,
    best_single: bool = False,
    iou_threshold: float = 0.5,
) -> dict:
    """Token F1 against rationale sets, and the benchmark's IoU-match rate.

    `gold_sets[instance]` holds, per part of the instance (one part, or two sentences of a
    pair), its alternative gold token sets; `predicted[instance]` the predicted tokens per
    part. Instance F1 averages its parts. F1 sums over instances with a prediction and
    divides by the number of gold instances; the IoU figure counts parts whose IoU with the
    chosen gold reaches the threshold, divided by the number of predicted parts.
    """
    total_f1 = 0.0
    matches = predicted_parts = 0
    for key, parts in predicted.items():
        if key not in gold_sets:
            continue
        f1s = []
        for tokens, sets in zip(parts, gold_sets[key], strict=False):
            gold = choose_gold_set(tokens, sets, best_single=best_single)
            f1s.append(set_f1(tokens, gold))
            predicted_parts += 1
            union = tokens | gold
            if union and len(tokens & gold) / len(union) >= iou_threshold:
                matches += 1
        total_f1 += float(np.mean(f1s)) if f1s else 0.0
    return {
        "mode": "best_single_set" if best_single else "greedy_union",
        "f1": total_f1 / len(gold_sets) if gold_sets else 0.0,
        "iou_match": matches / predicted_parts if predicted_parts else 0.0,
        "instances": len(gold_sets),
    }


def map_consistency(original: Sequence[str], perturbed: Sequence[str]) -> float:
    """MAP of the perturbed rationale's tokens against the original's, by token text:
    (1/|P|) * sum_i (1/i) * #{j <= i : P_j in O_1..i}."""
    if not perturbed:
        return 0.0
    total = 0.0
    for i in range(1, len(perturbed) + 1):
        window = set(original[:i])
        total += sum(1 for token in perturbed[:i] if token in window) / i
    return total / len(perturbed)


def consistency_score(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]], n_perturbed_gold: int
) -> float:
    """Sum of MAP over linked (original, perturbed) pairs that both have predictions,
    divided by the number of perturbed instances in the gold data."""
    if n_perturbed_gold == 0:
        return 0.0
    return sum(map_consistency(o, p) for o, p in pairs) / n_perturbed_gold


def new_p(
    full_labels: dict[str, str],
    rationale_labels: dict[str, str],
    rest_labels: dict[str, str],
    n_gold: int,
) -> float:
    """An instance scores 1 when the label on the rationale alone equals the full-input
    label and the label on the rest differs; divided by the number of gold instances."""
    hits = sum(
        1
        for key, label in full_labels.items()
        if rationale_labels.get(key) == label and rest_labels.get(key) not in (None, label)
    )
    return hits / n_gold if n_gold else 0.0


def top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the k highest scores, ties broken by position (earlier first), in
    descending order of importance."""
    k = max(0, min(int(k), len(scores)))
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores, dtype=np.float64)))
    return order[:k]


def ratio_k(n_tokens: int, ratio: float) -> int:
    return math.ceil(ratio * n_tokens)


def runs(indices: Sequence[int] | np.ndarray) -> list[tuple[int, int]]:
    """Contiguous runs of token indexes as half-open spans."""
    spans: list[tuple[int, int]] = []
    for index in sorted(int(i) for i in indices):
        if spans and spans[-1][1] == index:
            spans[-1] = (spans[-1][0], index + 1)
        else:
            spans.append((index, index + 1))
    return spans


def aopc_paper(reference_aopc: float | None, n_bins: int) -> float | None:
    """The paper's AOPC divides by |B| + 1 with a zero k = 0 term."""
    if reference_aopc is None:
        return None
    return reference_aopc * n_bins / (n_bins + 1)
