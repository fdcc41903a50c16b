"""Metrics beyond the ERASER reference (docs/reference/metrics.md), each reported under its own key.

- token F1 against rationale *sets* and its IoU-match figure (the fine-grained benchmark);
- MAP between the rationale tokens of an original and of a perturbed instance
  (`fine_grained` sums it over the benchmark's pairs, beside New-P);
- top-k discretization of soft scores;
- the paper's AOPC formula.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rationale_metrics.gold_sets import choose_gold, token_f1
from rationale_metrics.spans import SpanTable, common_keys

TokenSet = frozenset


def set_f1(predicted: set | frozenset, gold: set | frozenset) -> float:
    """F1 of two token sets (0 when either is empty)."""
    return float(token_f1(list(gold), list(predicted)))


def choose_gold_set(
    predicted: frozenset, sets: Sequence[frozenset], *, best_single: bool = False
) -> frozenset:
    """The gold token set a prediction is scored against: `gold_sets.choose_gold`, the
    benchmark's rule with its default arithmetic, over sets of tokens."""
    chosen = choose_gold(
        [sorted(s) for s in sets],
        sorted(predicted),
        gold_choice="best_single_set" if best_single else "greedy_union",
    )
    return frozenset(chosen)


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


def rationale_set_scores_from_tokens(
    n_instances: int,
    group_instance: np.ndarray,
    gold_tokens: SpanTable,
    predicted_instances: np.ndarray,
    predicted_tokens: SpanTable,
    *,
    iou_threshold: float = 0.5,
) -> dict[str, dict]:
    """`rationale_set_scores` in both modes, over token tables of single-part instances.

    Instances are numbered 0..n_instances-1. Gold set g belongs to instance
    `group_instance[g]`; `gold_tokens` holds each set's tokens as one-token spans keyed by
    g, `predicted_tokens` each predicted instance's tokens keyed by its instance. Tokens are
    any integer codes that tell (document, position) apart.

    With at most one gold set, both modes choose that set when it overlaps the prediction
    and nothing otherwise, so those instances are counted with array operations; instances
    with several sets go through `choose_gold_set`.
    """
    sets_per_instance = np.bincount(group_instance, minlength=n_instances)
    token_instance = group_instance[gold_tokens.key]
    single = sets_per_instance[token_instance] == 1
    gold_single = SpanTable(
        token_instance[single], gold_tokens.start[single], gold_tokens.end[single]
    )
    predicted_count = np.bincount(predicted_tokens.key, minlength=n_instances)
    gold_count = np.bincount(gold_single.key, minlength=n_instances)
    common = np.bincount(common_keys(gold_single, predicted_tokens), minlength=n_instances)

    simple = predicted_instances[sets_per_instance[predicted_instances] <= 1]
    p, g, c = (x[simple].astype(np.float64) for x in (predicted_count, gold_count, common))
    f1 = np.where(c > 0, 2 * c / np.where(c > 0, p + g, 1), 0.0)
    # The chosen gold is the set when it overlaps, else nothing: union P | G or just P.
    union = np.where(c > 0, p + g - c, p)
    matched = (union > 0) & (c / np.where(union > 0, union, 1) >= iou_threshold)
    simple_f1, simple_matches = float(f1.sum()), int(matched.sum())

    several = predicted_instances[sets_per_instance[predicted_instances] > 1]
    groups = np.flatnonzero(np.isin(group_instance, several))  # in set order
    group_tokens = _sets_by_key(gold_tokens, groups)
    sets: dict[int, list[frozenset]] = {i: [] for i in several.tolist()}
    for group, instance in zip(groups.tolist(), group_instance[groups].tolist(), strict=True):
        sets[instance].append(group_tokens.get(group, frozenset()))
    predicted = _sets_by_key(predicted_tokens, several)

    results = {}
    for mode, best_single in (("greedy_union", False), ("best_single_set", True)):
        total_f1, matches = simple_f1, simple_matches
        for instance, instance_sets in sets.items():
            tokens = predicted.get(instance, frozenset())
            gold = choose_gold_set(tokens, instance_sets, best_single=best_single)
            total_f1 += set_f1(tokens, gold)
            union_set = tokens | gold
            if union_set and len(tokens & gold) / len(union_set) >= iou_threshold:
                matches += 1
        results[mode] = {
            "mode": mode,
            "f1": total_f1 / n_instances if n_instances else 0.0,
            "iou_match": matches / len(predicted_instances) if len(predicted_instances) else 0.0,
            "instances": n_instances,
        }
    return results


def _sets_by_key(tokens: SpanTable, keys: np.ndarray) -> dict[int, frozenset]:
    """The token codes of each of `keys` as a set (a key without tokens is left out)."""
    keep = np.isin(tokens.key, keys)
    codes: dict[int, list[int]] = {}
    for key, code in zip(tokens.key[keep].tolist(), tokens.start[keep].tolist(), strict=True):
        codes.setdefault(key, []).append(code)
    return {key: frozenset(values) for key, values in codes.items()}


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


def top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the k highest scores, ties broken by position (earlier first), in
    descending order of importance."""
    k = max(0, min(int(k), len(scores)))
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores, dtype=np.float64)))
    return order[:k]


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
