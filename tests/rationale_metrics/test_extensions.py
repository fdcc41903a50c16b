"""Extensions computed by hand: rationale sets, MAP consistency, top-k, one-to-one IOU, AOPC."""

import math

import numpy as np
import pytest

from rationale_metrics.extensions import (
    aopc_paper,
    choose_gold_set,
    map_consistency,
    rationale_set_scores,
    runs,
    set_f1,
    top_k_indices,
)
from rationale_metrics.spans import SpanTable, instance_prf, iou_f1, top_k_tables

S = frozenset


def test_best_single_set_takes_the_earliest_of_equal_f1s():
    sets = [S({1, 2}), S({3, 4}), S({1, 2, 9})]

    assert choose_gold_set(S({1, 3}), sets, best_single=True) == S({1, 2})


def test_greedy_union_replaces_the_single_set_only_when_strictly_better():
    predicted = S({1, 2, 3, 4})
    sets = [S({1, 2}), S({3, 4}), S({7})]

    # {1,2}: F1 = 2*2/(4+2) = 0.667; the union {1,2,3,4} has F1 = 1.
    assert choose_gold_set(predicted, sets) == S({1, 2, 3, 4})
    assert choose_gold_set(predicted, sets, best_single=True) == S({1, 2})


def test_greedy_union_skips_covered_and_non_overlapping_sets_and_those_that_do_not_help():
    predicted = S({1, 2})
    sets = [S({1}), S({1}), S({5, 6}), S({2, 8, 9, 10})]

    # {1} alone: F1 = 2/3. Adding {2,8,9,10} gives {1,2,8,9,10}: F1 = 4/7 < 2/3: not added.
    assert choose_gold_set(predicted, sets) == S({1})


def test_nothing_overlapping_gives_an_empty_gold_and_zero():
    assert choose_gold_set(S({1}), [S({5})]) == S()
    assert set_f1(S({1}), S()) == 0.0


def test_rationale_set_scores_divide_by_all_gold_instances():
    gold = {"a": [[S({1, 2})]], "b": [[S({3})]], "c": [[S({4})]]}
    predicted = {"a": [S({1, 2})], "b": [S({3, 9})]}

    result = rationale_set_scores(gold, predicted)

    # a: F1 1, IoU 1; b: F1 2/3, IoU 1/2 (a match at 0.5); c: no prediction.
    assert result["f1"] == pytest.approx((1 + 2 / 3) / 3)
    assert result["iou_match"] == 1.0


def test_sentence_pair_instances_average_their_two_parts():
    gold = {"a": [[S({1})], [S({5})]]}
    predicted = {"a": [S({1}), S({6})]}

    assert rationale_set_scores(gold, predicted)["f1"] == pytest.approx(0.5)


def test_map_consistency_by_hand():
    original = ["good", "film", "great"]
    perturbed = ["great", "good", "plot"]

    # i=1: P1 'great' in O1 ['good']? no -> 0; i=2: {great, good} in O1..2 -> 'good' yes -> 1/2;
    # i=3: O1..3 has great, good -> 2/3.  MAP = (0 + 1/2 + 2/3) / 3
    assert map_consistency(original, perturbed) == pytest.approx((0 + 0.5 + 2 / 3) / 3)


def test_repeated_strings_count_at_each_position():
    # i=1: 'b' not in ['a'] -> 0; i=2: both 'b's are in ['a', 'b'] -> 2/2.
    assert map_consistency(["a", "b"], ["b", "b"]) == pytest.approx(0.5)


def test_top_k_breaks_ties_by_position():
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1])

    assert top_k_indices(scores, 3).tolist() == [1, 0, 2]
    assert top_k_indices(scores, 99).tolist() == [1, 0, 2, 3, 4]


def test_runs_merge_contiguous_tokens():
    assert runs([5, 1, 2, 3, 9]) == [(1, 4), (5, 6), (9, 10)]


def test_one_to_one_iou_matching_caps_recall_at_one():
    gold = SpanTable.build([0], [0], [10])
    halves = SpanTable.build([0, 0], [0, 5], [5, 10])

    default = iou_f1(gold, halves, 0.5, n_keys=1)
    one_to_one = iou_f1(gold, halves, 0.5, n_keys=1, one_to_one=True)

    assert default["micro"]["r"] == 2.0
    assert one_to_one["micro"]["r"] == 1.0
    assert one_to_one["micro"]["p"] == 0.5


def test_paper_aopc_formula():
    assert aopc_paper(0.31, 5) == pytest.approx(0.31 * 5 / 6)
    assert aopc_paper(None, 5) is None
    assert math.isclose(aopc_paper(0.6, 2), 0.4)


def test_instance_prf_by_hand():
    gold = SpanTable.build([0, 0, 1], [0, 5, 2], [2, 7, 3])
    predicted = SpanTable.build([0, 2], [0, 9], [2, 10])

    result = instance_prf(gold, predicted, universe=np.array([0, 1, 2]), n_keys=3)

    assert result["instance_micro"] == {
        "p": 0.5,
        "r": pytest.approx(1 / 3),
        "f1": pytest.approx(0.4),
    }
    # key 0: p 1, r 1/2; key 1: p 0, r 0; key 2: p 0, r 0.
    assert result["instance_macro"]["p"] == pytest.approx(1 / 3)
    assert result["instance_macro"]["r"] == pytest.approx(1 / 6)
    assert result["instance_macro"]["f1"] == pytest.approx((2 / 3) / 3)


def test_token_table_expands_spans():
    tokens = SpanTable.build([0, 0], [1, 2], [3, 4]).tokens()

    assert tokens.start.tolist() == [1, 2, 3] and tokens.end.tolist() == [2, 3, 4]


def test_top_k_tables_take_runs_per_segment():
    table = top_k_tables(
        np.array([4, 3]), np.array([0.9, 0.8, 0.1, 0.7, 0.0, 0.5, 0.5]), np.array([7, 9]), k=2
    )

    assert list(zip(table.key.tolist(), table.start.tolist(), table.end.tolist(), strict=True)) == [
        (7, 0, 2),
        (9, 1, 3),
    ]
