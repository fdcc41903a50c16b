"""Token-level agreement between annotators (METRICS.md section 6), vectorised with numpy.

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

from rationale_metrics.problems import ProblemList


def cohen_kappa_counts(both: int, ones_a: int, ones_b: int, n: int) -> float | None:
    """Kappa of two binary vectors of length n from their counts of ones and of shared ones;
    None when undefined (p_e = 1). For a few small sets this beats building arrays."""
    if n <= 0:
        return None
    neither = n - ones_a - ones_b + both
    p_o = (both + neither) / n
    pa, pb = ones_a / n, ones_b / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if abs(1 - p_e) < 1e-12:
        return None
    return (p_o - p_e) / (1 - p_e)


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
    lengths = np.asarray(lengths, dtype=np.float64)
    both = (a & b).sum(axis=1)
    ones_a = a.sum(axis=1)
    ones_b = b.sum(axis=1)
    neither = lengths - ones_a - ones_b + both
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = (both + neither) / lengths
        pa, pb = ones_a / lengths, ones_b / lengths
        p_e = pa * pb + (1 - pa) * (1 - pb)
        kappa = (p_o - p_e) / (1 - p_e)
    undefined_rows = np.isclose(p_e, 1.0)
    kappa[undefined_rows] = 1.0 if undefined == "one" else np.nan
    return kappa


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


def variant_agreement(annotations: list[TokenAnnotation], *, undefined: str = "exclude") -> dict:
    """Intra-variant (pairs within a variant) and cross-variant (all pairs a in A, b in B)
    kappa: per item the mean over its pairs, then the mean over items."""
    by_item: dict[str, dict[str, list[TokenAnnotation]]] = defaultdict(lambda: defaultdict(list))
    for ann in annotations:
        by_item[ann.item][ann.variant].append(ann)
    variants = sorted({a.variant for a in annotations})
    cells: dict[tuple[str, str], list[tuple[str, list]]] = defaultdict(list)
    for item, groups in by_item.items():
        for va, vb in product(variants, repeat=2):
            if va > vb:
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
