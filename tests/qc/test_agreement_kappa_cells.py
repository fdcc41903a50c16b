"""A kappa matrix computed over disjoint sets of units and merged (qc/kappa_cells.py) is
exactly, float for float and cell for cell in the same order, the matrix computed over all
units at once: the cohort matrix split over ranges of items stores the bytes of the one
computed whole."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qc.kappa_cells import cell_contributions, cells_merged
from rationale_metrics.agreement import TokenAnnotation, variant_agreement
from tests.hypothesis_budget import examples

GROUPS = ["a", "b|c", "master", "no platform record"]


@st.composite
def annotations_and_split(draw):
    """Annotations in input order (each unit's length fixed), and a partition of the units
    into chunks."""
    n_units = draw(st.integers(0, 8))
    lengths = [draw(st.integers(1, 12)) for _ in range(n_units)]
    annotations = []
    for _ in range(draw(st.integers(0, 30)) if n_units else 0):
        unit = draw(st.integers(0, n_units - 1))
        n = lengths[unit]
        tokens = draw(st.frozensets(st.integers(0, n - 1), max_size=n))
        annotations.append(
            TokenAnnotation(
                item=f"{unit}|v",
                annotator="w",
                variant=draw(st.sampled_from(GROUPS)),
                n_tokens=n,
                tokens=tokens,
            )
        )
    chunk_of_unit = [draw(st.integers(0, 3)) for _ in range(n_units)]
    return annotations, chunk_of_unit


def split_and_merged(annotations, chunk_of_unit, undefined, met_within_cell=False):
    chunks: dict[int, tuple[list, list]] = {}
    for order, annotation in enumerate(annotations):
        chunk = chunk_of_unit[int(annotation.item.split("|")[0])]
        members, orders = chunks.setdefault(chunk, ([], []))
        members.append(annotation)
        orders.append(order)
    contributions = [
        cell_contributions(members, orders, undefined=undefined, met_within_cell=met_within_cell)
        for _, (members, orders) in sorted(chunks.items())
    ]
    return cells_merged(contributions, undefined=undefined)


@settings(max_examples=examples(300), deadline=None)
@given(annotations_and_split(), st.sampled_from(["exclude", "one"]))
def test_merged_chunks_equal_the_whole_matrix(case, undefined):
    annotations, chunk_of_unit = case

    merged = split_and_merged(annotations, chunk_of_unit, undefined)
    whole = variant_agreement(annotations, undefined=undefined)

    assert merged == whole
    assert list(merged["cells"]) == list(whole["cells"]), "cells in the same order"


@settings(max_examples=examples(300), deadline=None)
@given(annotations_and_split(), st.sampled_from(["exclude", "one"]))
def test_merged_cells_equal_each_cell_computed_from_its_own_two_groups(case, undefined):
    """The variant matrix: its diagonal computed from one variant's annotations, each
    other cell from the two variants' (the chunks of variants and of pairs of variants)."""
    annotations, chunk_of_unit = case

    merged = split_and_merged(annotations, chunk_of_unit, undefined, met_within_cell=True)

    whole_cells = variant_agreement(annotations, undefined=undefined)["cells"]
    assert set(merged["cells"]) == set(whole_cells)
    for cell, figures in merged["cells"].items():
        a, b = next((x, y) for x in GROUPS for y in GROUPS if f"{x}|{y}" == cell)
        own = [x for x in annotations if x.variant in (a, b)]
        alone = variant_agreement(own, undefined=undefined, only={(a, b)})["cells"][cell]
        assert figures == alone


def test_a_mean_over_units_in_the_whole_computations_order():
    """Three units whose kappas summed in another order give another last bit: the merge
    follows the order the units were met in, not the order of the chunks."""
    n = 10
    annotations = []
    kappas_summed_forwards_and_backwards_differ = [
        ({8, 9}, {6, 8}),
        ({5, 7, 9}, {0, 6, 8}),
        ({8, 9}, {0, 6}),
    ]
    for unit, (first, second) in enumerate(kappas_summed_forwards_and_backwards_differ):
        for group, tokens in (("a", first), ("b", second)):
            annotations.append(TokenAnnotation(f"{unit}|v", "w", group, n, frozenset(tokens)))
    whole = variant_agreement(annotations, undefined="exclude")

    backwards = split_and_merged(annotations, [2, 1, 0], "exclude")

    assert backwards == whole
    assert whole["cells"]["a|b"]["kappa"] == -0.10119047619047618
    assert float(np.mean([-0.25, -0.42857142857142855, 0.375])) != -0.10119047619047618
    assert whole["cells"]["a|b"]["items"] == 3 and whole["cells"]["a|b"]["pairs"] == 3


def test_no_annotations_give_an_empty_matrix():
    assert cells_merged([], undefined="exclude") == variant_agreement([], undefined="exclude")
    assert cell_contributions([], [], undefined="exclude") == {"groups": [], "cells": []}
