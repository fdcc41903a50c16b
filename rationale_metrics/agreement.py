"""Token-level agreement between annotators
(docs/reference/metrics.md#human-annotation-statistics), vectorised with numpy.

Cohen's kappa between two binary token vectors: (p_o - p_e) / (1 - p_e). When p_e = 1
(both vectors constant and equal) kappa is undefined: by default such pairs are excluded
from averages and counted; the `one` policy counts them as 1.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations, product
from pathlib import Path

import numpy as np

from rationale_metrics.extensions import set_f1
from rationale_metrics.problems import ProblemList
from rationale_metrics.stop_words import StopWordRule, is_punctuation


def cohen_kappa_counts(both: int, ones_a: int, ones_b: int, n: int) -> float | None:
    """Kappa of two binary vectors of length n from their counts of ones and of shared ones;
    None when undefined (p_e = 1). For a few small sets this beats building arrays."""
    if n <= 0:
        return None
    only_a, only_b = ones_a - both, ones_b - both
    neither = n - ones_a - ones_b + both
    # In integers, as _kappa_of_table explains: p_e rounds to 1 for long, sparse vectors.
    denominator = ones_a * (only_a + neither) + (n - ones_a) * ones_b
    if denominator == 0:
        return None
    return 2 * (both * neither - only_a * only_b) / denominator


def cohen_kappa_pairs(a: np.ndarray, b: np.ndarray, *, undefined: str = "exclude") -> np.ndarray:
    """Kappa for each row pair of two (pairs x tokens) boolean arrays; NaN where undefined
    (unless `undefined == "one"`)."""
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    n = a.shape[1]
    return cohen_kappa_masked(a, b, np.full(a.shape[0], n), undefined=undefined)


def cohen_kappa_masked(
    a: np.ndarray, b: np.ndarray, lengths: np.ndarray, *, undefined: str = "exclude"
) -> np.ndarray:
    """Like cohen_kappa_pairs, for rows padded with False beyond each row's length."""
    lengths = np.asarray(lengths, dtype=np.int64)
    both = (a & b).sum(axis=1, dtype=np.int64)
    ones_a = a.sum(axis=1, dtype=np.int64)
    ones_b = b.sum(axis=1, dtype=np.int64)
    kappa = _kappa_of_table(both, ones_a - both, ones_b - both, lengths - ones_a - ones_b + both)
    if undefined == "one":
        kappa[np.isnan(kappa) & (lengths > 0)] = 1.0
    return kappa


def _kappa_of_table(both, only_a, only_b, neither) -> np.ndarray:
    """Kappa from the 2 x 2 table's cells, NaN where undefined.

    The textbook (p_o - p_e) / (1 - p_e) subtracts numbers close to 1 when a long vector
    has few ones: 1 - p_e is then about 1e-5 for 100,000 tokens, and a tolerance that
    tests p_e == 1 takes it for undefined. Multiplied through by n^2 it becomes
    2 (both x neither - only_a x only_b) / (ones_a x zeros_b + zeros_a x ones_b), computed
    here in integers (exact while n^2 fits in 63 bits, about 3e9 tokens). The denominator
    is 0 exactly when both vectors are constant and equal, the one undefined case.
    """
    numerator = 2 * (both * neither - only_a * only_b)
    denominator = (both + only_a) * (only_a + neither) + (only_b + neither) * (both + only_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = numerator / denominator.astype(np.float64)
    kappa[denominator == 0] = np.nan
    return np.asarray(kappa, dtype=np.float64)


@dataclass
class TokenAnnotation:
    item: str
    annotator: str
    variant: str
    n_tokens: int
    tokens: frozenset[int]

    def vector(self, width: int) -> np.ndarray:
        row = np.zeros(width, dtype=bool)
        row[list(self.tokens)] = True
        return row


def _pair_kappas(
    pairs: list[tuple[TokenAnnotation, TokenAnnotation]], undefined: str
) -> np.ndarray:
    if not pairs:
        return np.zeros(0)
    width = max(p[0].n_tokens for p in pairs)
    a = np.stack([x.vector(width) for x, _ in pairs])
    b = np.stack([y.vector(width) for _, y in pairs])
    return cohen_kappa_masked(a, b, np.array([x.n_tokens for x, _ in pairs]), undefined=undefined)


def variant_agreement(
    annotations: list[TokenAnnotation],
    *,
    undefined: str = "exclude",
    only: set[tuple[str, str]] | None = None,
) -> dict:
    """Intra-variant (pairs within a variant) and cross-variant (all pairs a in A, b in B)
    kappa: per item the mean over its pairs, then the mean over items. With `only`, just
    those (a, b) cells, a <= b, are computed (a worker computing one pair of variants)."""
    by_item: dict[str, dict[str, list[TokenAnnotation]]] = defaultdict(lambda: defaultdict(list))
    for ann in annotations:
        by_item[ann.item][ann.variant].append(ann)
    variants = sorted({a.variant for a in annotations})
    cells: dict[tuple[str, str], list[tuple[str, list]]] = defaultdict(list)
    for item, groups in by_item.items():
        for va, vb in product(variants, repeat=2):
            if va > vb or (only is not None and (va, vb) not in only):
                continue
            if va == vb:
                pairs = list(combinations(groups.get(va, []), 2))
            else:
                pairs = list(product(groups.get(va, []), groups.get(vb, [])))
            if pairs:
                cells[(va, vb)].append((item, pairs))
    matrix = {}
    for (va, vb), item_pairs in cells.items():
        flat = [pair for _, pairs in item_pairs for pair in pairs]
        kappas = _pair_kappas(flat, undefined)
        per_item, offset, excluded = [], 0, 0
        for _, pairs in item_pairs:
            chunk = kappas[offset : offset + len(pairs)]
            offset += len(pairs)
            excluded += int(np.isnan(chunk).sum())
            if not np.all(np.isnan(chunk)):
                per_item.append(float(np.nanmean(chunk)))
        matrix[f"{va}|{vb}"] = {
            "kappa": float(np.mean(per_item)) if per_item else None,
            "items": len(per_item),
            "pairs": len(flat),
            "excluded_pairs": excluded,
        }
    return {"variants": variants, "undefined_policy": undefined, "cells": matrix}


def read_token_annotations(path: Path) -> list[TokenAnnotation]:
    problems = ProblemList()
    annotations = []
    with open(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                n = record["n_tokens"]
                tokens = frozenset(record["tokens"])
                if not isinstance(n, int) or n <= 0:
                    raise ValueError("n_tokens must be a positive integer")
                if any(not isinstance(t, int) or t < 0 or t >= n for t in tokens):
                    raise ValueError(f"token indexes must be integers in [0, {n})")
                annotations.append(
                    TokenAnnotation(
                        item=str(record["item"]),
                        annotator=str(record["annotator"]),
                        variant=str(record.get("variant", "all")),
                        n_tokens=n,
                        tokens=tokens,
                    )
                )
            except KeyError as exc:
                problems.add(path.name, number, str(exc.args[0]), "missing")
            except (ValueError, TypeError) as exc:
                problems.add(path.name, number, None, str(exc))
    problems.raise_if_any()
    return annotations


def agreement_from_jsonl(path: Path, *, undefined: str = "exclude") -> dict:
    return variant_agreement(read_token_annotations(path), undefined=undefined)


# ---------------------------------------------------------------- the whole matrix at once


def kappa_from_counts(
    both: np.ndarray, ones_a: np.ndarray, ones_b: np.ndarray, n: np.ndarray
) -> np.ndarray:
    """Elementwise kappa from counts (NaN where undefined)."""
    n = n.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = (n - ones_a - ones_b + 2 * both) / n
        pa, pb = ones_a / n, ones_b / n
        p_e = pa * pb + (1 - pa) * (1 - pb)
        kappa = (p_o - p_e) / (1 - p_e)
    kappa[np.isclose(p_e, 1.0)] = np.nan
    return kappa


def kappa_matrix(highlights: np.ndarray) -> dict:
    """Intra- and cross-variant kappa for a balanced design.

    `highlights`: boolean (items, variants, annotators, tokens). Intra-variant cell (v, v):
    per item the mean over that variant's annotator pairs, then the mean over items;
    cross-variant (a, b): per item the mean over all annotators of a x all of b. Returns
    the variants x variants matrix of means, item counts and excluded (undefined) pairs.
    """
    items, variants, annotators, tokens = highlights.shape
    flat = highlights.reshape(items, variants * annotators, tokens).astype(np.float32)
    both = np.matmul(flat, flat.transpose(0, 2, 1))  # (items, V*A, V*A) shared ones
    ones = flat.sum(axis=2)
    kappa = kappa_from_counts(both, ones[:, :, None], ones[:, None, :], np.full_like(both, tokens))
    kappa = kappa.reshape(items, variants, annotators, variants, annotators)
    mean = np.full((variants, variants), np.nan)
    counted = np.zeros((variants, variants), dtype=np.int64)
    excluded = np.zeros((variants, variants), dtype=np.int64)
    upper = np.triu(np.ones((annotators, annotators), dtype=bool), k=1)
    for a in range(variants):
        for b in range(a, variants):
            block = kappa[:, a, :, b, :]
            pairs = block[:, upper] if a == b else block.reshape(items, -1)
            excluded[a, b] = excluded[b, a] = int(np.isnan(pairs).sum())
            valid = ~np.all(np.isnan(pairs), axis=1)
            with np.errstate(invalid="ignore"):
                per_item = np.nanmean(pairs[valid], axis=1) if valid.any() else np.zeros(0)
            mean[a, b] = mean[b, a] = float(per_item.mean()) if len(per_item) else np.nan
            counted[a, b] = counted[b, a] = len(per_item)
    return {"kappa": mean, "items": counted, "excluded_pairs": excluded}


# ---------------------------------------------------------------- against the majority


def mean_pairwise_kappa(token_sets: list[set], n_tokens: int) -> tuple[float | None, int]:
    """An item's mean kappa over all pairs of its annotations (token index sets over
    n_tokens), and how many pairs were excluded as undefined."""
    kappas = [
        cohen_kappa_counts(len(a & b), len(a), len(b), n_tokens)
        for i, a in enumerate(token_sets)
        for b in token_sets[i + 1 :]
    ]
    defined = [k for k in kappas if k is not None]
    return (sum(defined) / len(defined) if defined else None), len(kappas) - len(defined)


def mean_pairwise_f1(token_sets: list[set]) -> float | None:
    """An item's mean token F1 over all pairs of its annotations (symmetric: F1 does not
    care which of the two is the reference); None with fewer than two annotations. Two
    empty annotations score 0, as `extensions.set_f1` scores any empty side."""
    scores = [set_f1(a, b) for i, a in enumerate(token_sets) for b in token_sets[i + 1 :]]
    return sum(scores) / len(scores) if scores else None


@dataclass(frozen=True)
class PairSums:
    """Pairs of annotations between two groups (or within one): how many, how many of
    them with a defined kappa, and the sums of their kappas and F1s."""

    pairs: int
    kappa_pairs: int
    kappa_sum: float
    f1_sum: float


def pairwise_sums_by_group(
    token_sets: list[set], groups: list, n_tokens: int
) -> dict[tuple, PairSums]:
    """For each pair of groups (each annotation's group, as its instruction variant; the
    key (a, b) with a <= b, (a, a) for pairs within one group), the sums over the pairs of
    annotations between them. The mean pairwise kappa and F1 among the annotations of any
    set of groups is then the sums over the pairs of groups within it, over their counts
    (`means_of_groups`): what mean_pairwise_kappa and mean_pairwise_f1 give on those
    annotations alone, without their token sets."""
    found: dict[tuple, list] = {}
    for i, j in combinations(range(len(token_sets)), 2):
        a, b = token_sets[i], token_sets[j]
        key = tuple(sorted((groups[i], groups[j])))
        sums = found.setdefault(key, [0, 0, 0.0, 0.0])
        kappa = cohen_kappa_counts(len(a & b), len(a), len(b), n_tokens)
        sums[0] += 1
        if kappa is not None:
            sums[1] += 1
            sums[2] += kappa
        sums[3] += set_f1(a, b)
    return {key: PairSums(*sums) for key, sums in found.items()}


def means_of_groups(sums: dict[tuple, PairSums], chosen) -> tuple[float | None, float | None]:
    """The mean pairwise kappa (undefined pairs left out) and F1 among the annotations of
    the `chosen` groups, from pairwise_sums_by_group's sums; None where no pair counts."""
    chosen = set(chosen)
    within = [s for (a, b), s in sums.items() if a in chosen and b in chosen]
    kappa_pairs = sum(s.kappa_pairs for s in within)
    pairs = sum(s.pairs for s in within)
    kappa = sum(s.kappa_sum for s in within) / kappa_pairs if kappa_pairs else None
    return kappa, (sum(s.f1_sum for s in within) / pairs if pairs else None)


def against_majority(row: np.ndarray, majority: np.ndarray) -> dict:
    """One annotation (boolean tokens) against the majority: kappa (None when undefined),
    precision, recall and F1."""
    both, a, m = int((row & majority).sum()), int(row.sum()), int(majority.sum())
    precision = both / a if a else 0.0
    recall = both / m if m else 0.0
    return {
        "kappa": cohen_kappa_counts(both, a, m, len(majority)),
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    }


def majority_vote(matrix: np.ndarray) -> np.ndarray:
    """Tokens chosen by more than half of the annotators (rows)."""
    matrix = np.asarray(matrix, dtype=bool)
    return matrix.sum(axis=0) > matrix.shape[0] / 2


def token_highlight_shares(token_sets: list[set[int]], n_tokens: int) -> list[float]:
    """Per token of a document of n_tokens, the share of annotators (one token set each)
    who highlighted it: what an item's agreement strip shows. No annotators: all zero."""
    if not token_sets:
        return [0.0] * n_tokens
    counts = np.zeros(n_tokens, dtype=np.int64)
    for tokens in token_sets:
        inside = [t for t in tokens if 0 <= t < n_tokens]
        counts[inside] += 1
    return (counts / len(token_sets)).tolist()


def summarize(values: dict[str, list[float]]) -> dict:
    return {
        name: {
            "mean": float(np.mean(v)) if v else None,
            "sd": float(np.std(v)) if v else None,
            "n": len(v),
        }
        for name, v in values.items()
    }


def majority_agreement(item_annotations: list[np.ndarray]) -> dict:
    """ERASER's human agreement: each annotator against the per-token majority of all the
    item's annotators (more than half). `item_annotations[i]`: boolean (annotators, tokens).
    Returns mean and sd of kappa, precision, recall and F1 over (annotator, item) pairs."""
    return summarize(majority_agreement_values(item_annotations))


def majority_agreement_values(item_annotations: list[np.ndarray]) -> dict[str, list[float]]:
    """The (annotator, item) values `majority_agreement` summarizes, in item order: the
    values of consecutive ranges of items, joined, summarize to the same figures."""
    rows: dict[str, list[float]] = {"kappa": [], "precision": [], "recall": [], "f1": []}
    for matrix in item_annotations:
        matrix = np.asarray(matrix, dtype=bool)
        majority = majority_vote(matrix)
        for row in matrix:
            for name, value in against_majority(row, majority).items():
                if value is not None:
                    rows[name].append(value)
    return rows


# ---------------------------------------------------------------- what annotations look like


def annotation_statistics(
    annotations: list[tuple[list[str], set[int], float]], stop_words: StopWordRule
) -> dict:
    """Length ratio L (mean h/m), stop-word share S (mean s/h over non-empty annotations),
    punctuation share (likewise, counted apart), empty rate, and seconds per item.

    Each annotation: (the item's token texts, highlighted token indexes, seconds spent).
    Annotations of one item share its token list, whose stop-word mask is found once."""
    ratios, stop_shares, punct_shares, seconds = [], [], [], []
    empty = 0
    masks: dict[int, list[bool]] = {}
    for tokens, chosen, spent in annotations:
        ratios.append(len(chosen) / len(tokens) if tokens else 0.0)
        seconds.append(spent)
        if not chosen:
            empty += 1
            continue
        words = [tokens[i] for i in chosen]
        punctuation = sum(1 for w in words if is_punctuation(w))
        mask = masks.get(id(tokens))
        if mask is None:
            mask = masks[id(tokens)] = stop_words.mask(tokens)
        stop = sum(1 for i in chosen if mask[i])
        stop_shares.append(stop / len(words))
        punct_shares.append(punctuation / len(words))
    quartiles = np.percentile(seconds, [25, 50, 75]).tolist() if seconds else [None] * 3
    return {
        "annotations": len(annotations),
        "length_ratio": float(np.mean(ratios)) if ratios else None,
        "stop_word_share": float(np.mean(stop_shares)) if stop_shares else None,
        "punctuation_share": float(np.mean(punct_shares)) if punct_shares else None,
        "empty_rate": empty / len(annotations) if annotations else None,
        "seconds": {"q1": quartiles[0], "median": quartiles[1], "q3": quartiles[2]},
    }


# ---------------------------------------------------------------- more than two annotators


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa. `counts[subject, category]`: how many raters put the subject in the
    category; every subject needs the same number of raters (at least two)."""
    counts = np.asarray(counts, dtype=np.float64)
    raters = counts.sum(axis=1)
    if len(counts) == 0 or raters.min() != raters.max() or raters[0] < 2:
        return None
    n = raters[0]
    p_category = counts.sum(axis=0) / counts.sum()
    p_subject = ((counts * (counts - 1)).sum(axis=1)) / (n * (n - 1))
    p_bar, p_e = p_subject.mean(), (p_category**2).sum()
    if np.isclose(p_e, 1.0):
        return None
    return float((p_bar - p_e) / (1 - p_e))


def krippendorff_alpha_nominal(units: list[list]) -> float | None:
    """Krippendorff's alpha for nominal data. `units[u]`: the values coders gave unit u
    (missing values left out); units with fewer than two values are not pairable."""
    coincidence: dict[tuple, float] = defaultdict(float)
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidence[(a, b)] += 1 / (m - 1)
    if not coincidence:
        return None
    totals: dict = defaultdict(float)
    for (a, _b), weight in coincidence.items():
        totals[a] += weight
    n = sum(totals.values())
    observed = sum(w for (a, b), w in coincidence.items() if a != b)
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b) / (n - 1)
    if expected == 0:
        return None
    return 1 - observed / expected


# ---------------------------------------------------------------- uncertainty


def bootstrap_ci(
    per_item: np.ndarray, *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of the mean, resampling items."""
    values = np.asarray(per_item, dtype=np.float64)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return None
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def permutation_test(
    a: np.ndarray, b: np.ndarray, *, permutations: int = 5000, seed: int = 0
) -> dict:
    """Two-sided permutation test of the difference in means between two variants' per-item
    values (labels shuffled between the groups)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if len(a) == 0 or len(b) == 0:
        return {"difference": None, "p_value": None, "permutations": 0}
    observed = a.mean() - b.mean()
    pooled = np.concatenate([a, b])
    rng = np.random.default_rng(seed)
    orders = rng.permuted(np.tile(pooled, (permutations, 1)), axis=1)
    differences = orders[:, : len(a)].mean(axis=1) - orders[:, len(a) :].mean(axis=1)
    extreme = int((np.abs(differences) >= abs(observed) - 1e-12).sum())
    return {
        "difference": float(observed),
        "p_value": (extreme + 1) / (permutations + 1),
        "permutations": permutations,
    }


# ---------------------------------------------------------------- explainers vs humans


def explainer_plausibility(
    items: list[tuple[np.ndarray, list[np.ndarray]]], *, undefined: str = "exclude"
) -> dict:
    """Plausibility of an explainer against one variant's annotations, after the instruction
    study (docs/reference/metrics.md#explainer-plausibility-per-variant): per item, k =
    floor(mean highlight length of the item's annotations); the explainer's k highest-scoring
    tokens (ties: the earlier token) against each annotation by Cohen's kappa; the maximum; then
    the mean over items.

    `items`: (token scores, [boolean highlight vectors of the same length]). A kappa is
    undefined when both vectors are constant and equal (k = 0 against an empty annotation,
    say); an item whose kappas are all undefined is excluded and counted, or with
    `undefined="one"` such a kappa counts as 1."""
    best, excluded = [], 0
    for number, (scores, highlights) in enumerate(items):
        if not highlights:
            continue
        scores = np.asarray(scores, dtype=np.float64)
        if any(len(a) != len(scores) for a in highlights):
            raise ValueError(
                f"item {number}: {len(scores)} scores but highlights of "
                f"{sorted({len(a) for a in highlights})} tokens"
            )
        k = int(np.floor(np.mean([np.count_nonzero(a) for a in highlights])))
        order = np.lexsort((np.arange(len(scores)), -scores))
        top = np.zeros(len(scores), dtype=bool)
        top[order[:k]] = True
        kappas = [
            cohen_kappa_counts(
                int(np.count_nonzero(top & a)), k, int(np.count_nonzero(a)), len(scores)
            )
            for a in (np.asarray(h, dtype=bool) for h in highlights)
        ]
        defined = (
            [1.0 if x is None else x for x in kappas]
            if undefined == "one"
            else [x for x in kappas if x is not None]
        )
        if defined:
            best.append(max(defined))
        else:
            excluded += 1
    return {
        "plausibility": float(np.mean(best)) if best else None,
        "items": len(best),
        "excluded_items": excluded,
    }


def explainer_plausibility_by_variant(
    annotations: list[TokenAnnotation],
    scores: dict[str, np.ndarray],
    *,
    undefined: str = "exclude",
) -> dict:
    """`explainer_plausibility` per instruction variant. `scores` maps an item to the
    explainer's score of each of its tokens; items without scores are left out and counted."""
    by_variant: dict[str, dict[str, list[TokenAnnotation]]] = defaultdict(lambda: defaultdict(list))
    for ann in annotations:
        by_variant[ann.variant][ann.item].append(ann)
    variants = {}
    for variant, items in sorted(by_variant.items()):
        scored = [item for item in items if item in scores]
        result = explainer_plausibility(
            [(scores[item], [a.vector(len(scores[item])) for a in items[item]]) for item in scored],
            undefined=undefined,
        )
        variants[variant] = {**result, "items_without_scores": len(items) - len(scored)}
    return {
        "measure": "per item, the explainer's top-k tokens (k = floor of the mean highlight "
        "length of the variant's annotations) against each annotation by Cohen's kappa, the "
        "maximum; mean over items",
        "undefined_policy": undefined,
        "variants": variants,
    }


def read_token_scores(path: Path, n_tokens: dict[str, int]) -> dict[str, np.ndarray]:
    """An explainer's soft token scores per item, from JSONL lines of either form:
    `{"item": id, "scores": [...]}`, or an ERASER prediction line, whose rationales'
    `soft_rationale_predictions` are joined in the order the line lists them. Each item's
    scores must cover its tokens (`n_tokens`, from the annotations); items the annotations
    do not have are skipped. Every problem is reported by line and field."""
    problems = ProblemList()
    scores: dict[str, np.ndarray] = {}
    with open(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.add(path.name, number, None, f"not JSON: {exc}")
                continue
            if not isinstance(record, dict):
                problems.add(path.name, number, None, "each line must be a JSON object")
                continue
            item, vector, field_name, problem = _scores_of_record(record)
            if problem:
                problems.add(path.name, number, field_name, problem)
                continue
            if item not in n_tokens:
                continue
            if item in scores:
                problems.add(path.name, number, field_name, f"item {item!r} is given twice")
            elif len(vector) != n_tokens[item]:
                problems.add(
                    path.name,
                    number,
                    field_name,
                    f"{len(vector)} scores for item {item!r}, whose annotations have "
                    f"{n_tokens[item]} tokens",
                )
            else:
                scores[item] = vector
    problems.raise_if_any()
    return scores


def _scores_of_record(record: dict) -> tuple[str | None, np.ndarray | None, str | None, str | None]:
    """(item, scores, field, problem) of one line of a token-scores file."""
    if "item" in record:
        item, raw, field_name = record["item"], record.get("scores"), "scores"
        if raw is None:
            return None, None, "scores", "missing"
    elif "annotation_id" in record:
        item, field_name = record["annotation_id"], "rationales"
        rationales = record.get("rationales")
        if not isinstance(rationales, list) or not rationales:
            return None, None, field_name, "must list the documents' rationales"
        raw = []
        for i, rationale in enumerate(rationales):
            part = (
                rationale.get("soft_rationale_predictions") if isinstance(rationale, dict) else None
            )
            if not isinstance(part, list):
                return None, None, f"rationales[{i}].soft_rationale_predictions", "missing"
            raw.extend(part)
    else:
        return None, None, "item", "missing (or annotation_id, for an ERASER prediction line)"
    if not isinstance(raw, list) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in raw
    ):
        return None, None, field_name, "must be a list of numbers"
    vector = np.asarray(raw, dtype=np.float64)
    if not np.all(np.isfinite(vector)):
        return None, None, field_name, "scores must be finite numbers"
    return str(item), vector, field_name, None


def plausibility_from_jsonl(
    annotations_path: Path, scores_path: Path, *, undefined: str = "exclude"
) -> dict:
    annotations = read_token_annotations(annotations_path)
    n_tokens: dict[str, int] = {}
    problems = ProblemList()
    for ann in annotations:
        if n_tokens.setdefault(ann.item, ann.n_tokens) != ann.n_tokens:
            problems.add(
                annotations_path.name,
                None,
                "n_tokens",
                f"item {ann.item!r} has annotations of {n_tokens[ann.item]} and "
                f"{ann.n_tokens} tokens",
            )
    problems.raise_if_any()
    scores = read_token_scores(scores_path, n_tokens)
    return explainer_plausibility_by_variant(annotations, scores, undefined=undefined)
