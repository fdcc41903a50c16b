"""A kappa matrix computed over disjoint sets of units and merged, giving exactly what
`rationale_metrics.agreement.variant_agreement` gives over all of them at once.

`variant_agreement` takes each cell's kappa as the mean, over units (items), of the mean
kappa of the unit's pairs. Each pair's kappa depends only on the pair, so a chunk holding
every annotation of some units can compute those units' means; what the merge needs
besides is the order in which the whole computation met the units, since a mean of floats
depends on the order of its terms. A unit is met at its first annotation, so each unit's
entry carries the smallest `order` (the caller's sequence number of an annotation: its
position in the whole computation's input) of its annotations: of all of them when the
whole computation saw every group at once (the cohort matrix), of those in the cell's two
groups when each cell was computed from its own groups' annotations (the variant matrix:
a variant's diagonal from that variant's annotations, a pair of variants from the two).

Plain data in, plain JSON out (a chunk's contribution is stored between the chunk and
the assembly); no Django.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations, product

import numpy as np

from rationale_metrics.agreement import TokenAnnotation, cohen_kappa_masked


def cell_contributions(
    annotations: Sequence[TokenAnnotation],
    orders: Sequence[int],
    *,
    undefined: str,
    met_within_cell: bool = False,
) -> dict:
    """What these annotations add to each cell of the matrix between their groups
    (`TokenAnnotation.variant`), pairs formed within a unit (`TokenAnnotation.item`).

    `annotations` must hold every annotation of each unit it touches; `orders[i]` is
    annotation i's position in the whole computation's input; with `met_within_cell`, a
    unit's place in a cell is that of its first annotation in the cell's groups, else of
    its first annotation. Returns {"groups": the
    groups seen, "cells": [[a, b, [[order, mean kappa or None, pairs, excluded pairs], one
    per unit with pairs in cell (a, b)]], ...]}, as JSON-ready lists (the groups stay
    apart: a group's name may hold any character).
    """
    units: dict[str, dict[str, list[TokenAnnotation]]] = defaultdict(lambda: defaultdict(list))
    first: dict[str, dict[str, int]] = defaultdict(dict)
    for annotation, order in zip(annotations, orders, strict=True):
        units[annotation.item][annotation.variant].append(annotation)
        met = first[annotation.item]
        met[annotation.variant] = min(order, met.get(annotation.variant, order))
    groups = sorted({a.variant for a in annotations})
    unit_pairs: list[
        tuple[str, tuple[str, str], list[tuple[TokenAnnotation, TokenAnnotation]]]
    ] = []
    for unit, by_group in units.items():
        for a, b in product(groups, repeat=2):
            if a > b:
                continue
            if a == b:
                pairs = list(combinations(by_group.get(a, []), 2))
            else:
                pairs = list(product(by_group.get(a, []), by_group.get(b, [])))
            if pairs:
                unit_pairs.append((unit, (a, b), pairs))
    kappas = _pair_kappas([pair for _, _, pairs in unit_pairs for pair in pairs], undefined)
    cells: dict[tuple[str, str], list[list]] = defaultdict(list)
    offset = 0
    for unit, (a, b), pairs in unit_pairs:
        chunk = kappas[offset : offset + len(pairs)]
        offset += len(pairs)
        undefined_pairs = int(np.isnan(chunk).sum())
        mean = None if undefined_pairs == len(pairs) else float(np.nanmean(chunk))
        met = first[unit]
        order = min(met[a], met[b]) if met_within_cell else min(met.values())
        cells[(a, b)].append([order, mean, len(pairs), undefined_pairs])
    return {"groups": groups, "cells": [[a, b, entries] for (a, b), entries in cells.items()]}


def cells_merged(contributions: Iterable[dict], *, undefined: str) -> dict:
    """The matrix, in `variant_agreement`'s shape and order, from the contributions of
    disjoint sets of units."""
    groups: set[str] = set()
    entries: dict[tuple[str, str], list[list]] = defaultdict(list)
    for contribution in contributions:
        groups.update(contribution["groups"])
        for a, b, cell_entries in contribution["cells"]:
            entries[(a, b)].extend(cell_entries)
    # The whole computation adds a cell when it meets the cell's first unit, and within a
    # unit in the order of its (a, b) pairs of groups.
    order = sorted(entries, key=lambda cell: (min(e[0] for e in entries[cell]), cell))
    matrix = {}
    for a, b in order:
        ordered = sorted(entries[(a, b)], key=lambda e: e[0])
        means = [e[1] for e in ordered if e[1] is not None]
        matrix[f"{a}|{b}"] = {
            "kappa": float(np.mean(means)) if means else None,
            "items": len(means),
            "pairs": sum(e[2] for e in ordered),
            "excluded_pairs": sum(e[3] for e in ordered),
        }
    return {"variants": sorted(groups), "undefined_policy": undefined, "cells": matrix}


def _pair_kappas(
    pairs: list[tuple[TokenAnnotation, TokenAnnotation]], undefined: str
) -> np.ndarray:
    """Each pair's kappa, in one vectorised pass; rows are padded with False beyond their
    own length, which changes no count."""
    if not pairs:
        return np.zeros(0)
    width = max(a.n_tokens for a, _ in pairs)
    left = np.zeros((len(pairs), width), dtype=bool)
    right = np.zeros((len(pairs), width), dtype=bool)
    for row, (a, b) in enumerate(pairs):
        left[row, list(a.tokens)] = True
        right[row, list(b.tokens)] = True
    lengths = np.array([a.n_tokens for a, _ in pairs])
    return cohen_kappa_masked(left, right, lengths, undefined=undefined)
