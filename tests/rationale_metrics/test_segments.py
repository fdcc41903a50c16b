"""Sorting within segments, and token F1 against rationale sets over token tables, each held
to a plain per-segment or per-instance computation."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rationale_metrics import segments as segments_module
from rationale_metrics.extensions import rationale_set_scores, rationale_set_scores_from_tokens
from rationale_metrics.segments import (
    Segments,
    chunk_bounds,
    descending_within_segments,
    distinct,
    top_k_within_segments,
)
from rationale_metrics.spans import SpanTable
from tests.hypothesis_budget import examples


def by_segment(values, lengths):
    starts = np.cumsum(lengths) - lengths
    return [(int(s), values[s : s + n]) for s, n in zip(starts, lengths, strict=True)]


def expected_descending(values, lengths):
    """Each segment alone, highest first, equal values earlier first."""
    return np.concatenate(
        [s + np.argsort(-part, kind="stable") for s, part in by_segment(values, lengths)]
        or [np.zeros(0, np.int64)]
    )


def expected_top_k(values, lengths, k):
    return np.sort(
        np.concatenate(
            [s + np.argsort(-part, kind="stable")[:k] for s, part in by_segment(values, lengths)]
            or [np.zeros(0, np.int64)]
        )
    )


# Lengths that take each way through the code: equal lengths (a reshape), similar
# lengths (a padded matrix), a few long ones of different lengths (one sort each), and
# many short ones beside a long one (one sort of everything).
SHAPES = {
    "equal": [16] * 300,
    "similar": [10, 12, 16, 9, 16] * 60,
    "few long": [20_000, 600, 600],
    "many short, one long": [6000] + [1, 2, 3] * 40,
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 3, 16, 700])
def test_top_k_and_order_take_the_highest_and_the_earliest_of_equals(shape, k):
    rng = np.random.default_rng(7)
    lengths = np.array(SHAPES[shape], dtype=np.int64)
    values = rng.choice([0.0, 0.25, 0.5, 1.0, -2.0], size=int(lengths.sum()))  # many ties

    assert np.array_equal(
        top_k_within_segments(values, lengths, k), expected_top_k(values, lengths, k)
    )
    order = descending_within_segments(values, lengths)
    assert np.array_equal(order, expected_descending(values, lengths))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("chunk", [1, 37, 1000])
def test_top_k_in_chunks_is_the_top_k_of_the_whole(monkeypatch, shape, chunk):
    # Given segments worked on a few at a time (chunks smaller than some segments too)
    monkeypatch.setattr(segments_module, "CHUNK_ELEMENTS", chunk)
    rng = np.random.default_rng(9)
    lengths = np.array(SHAPES[shape], dtype=np.int64)
    values = rng.choice([0.0, 0.25, 0.5, 1.0, -2.0], size=int(lengths.sum()))

    # Then the positions are those of all segments at once, in ascending order
    assert np.array_equal(
        top_k_within_segments(values, lengths, 3), expected_top_k(values, lengths, 3)
    )


def test_chunk_bounds_cover_every_segment_once_within_the_bound():
    lengths = np.array([5, 1, 1, 9, 2, 2, 2, 0, 3], dtype=np.int64)

    chunks = chunk_bounds(lengths, 4)

    assert chunks[0][0] == 0 and chunks[-1][1] == len(lengths)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
    for first, end in chunks:
        assert end - first == 1 or lengths[first:end].sum() <= 4
    assert chunk_bounds(np.zeros(0, dtype=np.int64), 4) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_unstable_order_sorts_each_segment_but_may_reorder_equals(shape):
    rng = np.random.default_rng(8)
    lengths = np.array(SHAPES[shape], dtype=np.int64)
    values = rng.choice([0.0, 0.5, 1.0], size=int(lengths.sum()))

    order = descending_within_segments(values, lengths, stable=False)

    segment = np.repeat(np.arange(len(lengths)), lengths)
    assert np.array_equal(np.sort(order), np.arange(len(values)))
    assert np.array_equal(segment[order], segment)
    same_segment = segment[order][1:] == segment[order][:-1]
    assert (values[order][1:][same_segment] <= values[order][:-1][same_segment]).all()


segments = st.lists(
    st.lists(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(-3, 3), min_size=1, max_size=12),
    max_size=10,
)


@settings(max_examples=examples(300), deadline=None)
@given(segments, st.integers(0, 14))
def test_small_segments_agree_with_sorting_each_alone(vectors, k):
    values = np.array([v for vector in vectors for v in vector], dtype=np.float64)
    lengths = np.array([len(v) for v in vectors], dtype=np.int64)

    assert np.array_equal(
        top_k_within_segments(values, lengths, k), expected_top_k(values, lengths, k)
    )
    assert np.array_equal(
        descending_within_segments(values, lengths), expected_descending(values, lengths)
    )


def test_taking_segments_keeps_their_values():
    segs = Segments.from_vectors([np.array([1.0, 2.0]), np.array([3.0]), np.array([4.0, 5.0, 6.0])])

    taken = segs.take(np.array([2, 0]))

    assert taken.values.tolist() == [4.0, 5.0, 6.0, 1.0, 2.0]
    assert taken.lengths.tolist() == [3, 2]


token_set = st.frozensets(st.integers(0, 12), max_size=6)
instance = st.tuples(st.lists(token_set, max_size=4), st.none() | token_set)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(instance, min_size=1, max_size=8))
def test_token_tables_give_the_set_definition_in_both_modes(instances):
    # The set-based definition: gold sets per instance, predicted tokens where predicted.
    gold_sets = {i: [list(sets)] for i, (sets, _) in enumerate(instances)}
    predicted = {i: [tokens] for i, (_, tokens) in enumerate(instances) if tokens is not None}
    # The same as token tables: sets keyed by set number, predictions keyed by instance.
    set_instance = [i for i, (sets, _) in enumerate(instances) for _ in sets]
    set_rows = [
        (g, t) for g, tokens in enumerate(s for sets, _ in instances for s in sets) for t in tokens
    ]
    pred_rows = [(i, t) for i, tokens in predicted.items() for t in tokens[0]]

    def table(rows):
        key, token = (
            (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)) if rows else ([], [])
        )
        return SpanTable.build(key, token, np.asarray(token, dtype=np.int64) + 1)

    from_tokens = rationale_set_scores_from_tokens(
        len(instances),
        np.array(set_instance, dtype=np.int64),
        table(set_rows),
        np.array(sorted(predicted), dtype=np.int64),
        table(pred_rows),
    )

    for mode, best_single in (("greedy_union", False), ("best_single_set", True)):
        expected = rationale_set_scores(gold_sets, predicted, best_single=best_single)
        assert from_tokens[mode]["f1"] == pytest.approx(expected["f1"], abs=1e-12)
        assert from_tokens[mode]["iou_match"] == pytest.approx(expected["iou_match"], abs=1e-12)
        assert from_tokens[mode]["instances"] == expected["instances"]


@given(st.lists(st.integers(-5, 5) | st.integers(-(2**62), 2**62), max_size=40))
def test_distinct_is_numpy_unique(values):
    values = np.array(values, dtype=np.int64)

    assert np.array_equal(distinct(values), np.unique(values))
