"""Curation's pure rules (qc/curation_rules.py): shares, set operations, the auto-merge
test and the figures against the gold, as properties and on small cases worked by hand."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qc.curation_rules import (
    AutoMergeRule,
    GoldAgreement,
    against_gold,
    annotation_tokens,
    auto_merge,
    mean_pairwise_f1,
    pairwise_agreement,
    sets_intersection,
    sets_union,
    token_shares,
    tokens_marked_by_at_least,
)
from rationale_metrics.agreement import mean_pairwise_kappa

N = 12
token_set = st.frozensets(st.integers(0, N - 1), max_size=N)
annotation = st.lists(token_set, min_size=0, max_size=3)
annotations = st.lists(annotation, min_size=0, max_size=5)


@given(annotations)
def test_a_tokens_share_is_the_fraction_of_annotations_that_marked_it(chosen):
    shares = token_shares(chosen, N)

    for token, share in enumerate(shares):
        marked = sum(token in annotation_tokens(sets) for sets in chosen)
        assert share == (marked / len(chosen) if chosen else 0.0)


@given(annotations, st.integers(1, 6))
def test_at_least_k_is_the_tokens_whose_share_reaches_k(chosen, k):
    marked = tokens_marked_by_at_least(chosen, k)
    shares = token_shares(chosen, N)

    assert marked == {t for t, s in enumerate(shares) if chosen and s * len(chosen) >= k - 1e-9}


@given(annotations)
def test_at_least_one_is_the_union_and_at_least_all_is_the_intersection(chosen):
    tokens = [annotation_tokens(sets) for sets in chosen]

    assert tokens_marked_by_at_least(chosen, 1) == sets_union(tokens)
    if chosen:
        assert tokens_marked_by_at_least(chosen, len(chosen)) == sets_intersection(tokens)


@given(st.lists(token_set, max_size=5))
def test_intersection_lies_inside_every_set_and_every_set_inside_the_union(sets):
    inner, outer = sets_intersection(sets), sets_union(sets)

    for chosen in sets:
        assert inner <= chosen <= outer
    assert sets_intersection([]) == frozenset()


@given(st.lists(token_set, min_size=2, max_size=5))
def test_pairwise_kappa_is_the_agreement_reports_own(sets):
    kappa, _ = pairwise_agreement([[s] for s in sets], N)

    assert kappa == mean_pairwise_kappa([set(s) for s in sets], N)[0]


@given(st.lists(token_set, min_size=2, max_size=5))
def test_pairwise_f1_is_symmetric_and_between_0_and_1(sets):
    forward, backward = mean_pairwise_f1(sets), mean_pairwise_f1(list(reversed(sets)))

    assert 0 <= forward <= 1
    assert math.isclose(forward, backward)


@given(annotations)
def test_a_unanimous_merge_happens_exactly_when_every_annotation_has_the_same_sets(chosen):
    outcome = auto_merge(chosen, N, AutoMergeRule())
    shapes = [{frozenset(s) for s in sets if s} for sets in chosen]
    same = len(chosen) >= 2 and all(shape == shapes[0] for shape in shapes) and shapes[0]

    assert (outcome.sets is not None) == bool(same)
    if outcome.sets is not None:
        assert set(outcome.sets) == shapes[0]


@given(
    st.lists(annotation, min_size=2, max_size=5),
    st.sampled_from(["majority", "union", "intersection"]),
)
def test_a_threshold_merge_of_disagreeing_annotations_is_its_merge_of_their_tokens(chosen, merge):
    outcome = auto_merge(chosen, N, AutoMergeRule(test="f1", threshold=0.0, merge=merge))
    tokens = [annotation_tokens(sets) for sets in chosen]
    shapes = [{frozenset(s) for s in sets if s} for sets in chosen]
    wanted = {
        "union": sets_union(tokens),
        "intersection": sets_intersection(tokens),
        "majority": tokens_marked_by_at_least(chosen, len(chosen) // 2 + 1),
    }[merge]

    if all(shape == shapes[0] for shape in shapes):
        return  # unanimous: the sets as they are (the test above)
    if wanted:
        assert outcome.sets == [wanted]
    else:
        assert outcome.skipped == "merged set is empty"


def test_thresholds_decide_by_the_mean_pairwise_figure():
    # Over 10 tokens, a = {0,1,2,3}, b = {0,1,2}: both=3, only_a=1, only_b=0, neither=6.
    # kappa = 2(3*6 - 1*0) / (4*(1+6) + (10-4)*3) = 36 / 46 = 0.7826...
    # F1 = 2 * (3/3) * (3/4) / (1 + 3/4) = 6/7 = 0.857...
    chosen = [[{0, 1, 2, 3}], [{0, 1, 2}]]

    assert pairwise_agreement(chosen, 10) == (pytest.approx(36 / 46), pytest.approx(6 / 7))
    assert auto_merge(chosen, 10, AutoMergeRule("kappa", 0.78, "union")).sets == [
        frozenset({0, 1, 2, 3})
    ]
    assert auto_merge(chosen, 10, AutoMergeRule("kappa", 0.79)).skipped == "annotators disagree"
    assert auto_merge(chosen, 10, AutoMergeRule("f1", 0.85, "intersection")).sets == [
        frozenset({0, 1, 2})
    ]
    # Majority of two is both of them.
    assert auto_merge(chosen, 10, AutoMergeRule("f1", 0.5, "majority")).sets == [
        frozenset({0, 1, 2})
    ]
    assert auto_merge([[{1}]], 10, AutoMergeRule()).skipped == "fewer than two annotations"
    assert auto_merge([[], []], 10, AutoMergeRule()).skipped == "merged set is empty"
    assert AutoMergeRule("kappa", 0.8, "majority").name == "kappa>=0.8:majority"


def test_figures_against_the_gold_worked_by_hand():
    # 10 tokens, gold {0,1,2}. Annotator x marks {0,1,2,3}: both 3, only x 1, neither 6:
    # kappa = 2(3*6 - 1*0) / (4*(1+6) + 6*3) = 36/46; F1 = 2*(3/4)*1/(3/4+1) = 6/7.
    # Annotator y marks {5}: both 0, only y 1, only gold 3, neither 6:
    # kappa = 2(0*6 - 1*3) / (1*(1+6) + 9*3) = -6/34 (p_o 0.6, p_e 0.66: -0.06/0.34); F1 = 0.
    gold = {0, 1, 2}

    assert against_gold({0, 1, 2, 3}, gold, 10) == (pytest.approx(36 / 46), pytest.approx(6 / 7))
    assert against_gold({5}, gold, 10) == (pytest.approx(-6 / 34), 0.0)
    assert against_gold(set(), set(), 10) == (None, 1.0)

    tally = GoldAgreement()
    tally.add_item([("x", "v1", {0, 1, 2, 3}), ("y", "v1", {5})], gold, 10)
    summary = tally.summary()
    assert summary["annotators"]["x"] == {
        "f1": pytest.approx(6 / 7),
        "kappa": pytest.approx(36 / 46),
        "n": 1,
    }
    # Variant v1: the mean of both annotators: F1 (6/7 + 0)/2 = 3/7, kappa (36/46 - 6/33)/2.
    assert summary["variants"]["v1"]["f1"] == pytest.approx(3 / 7)
    assert summary["variants"]["v1"]["kappa"] == pytest.approx((36 / 46 - 6 / 34) / 2)


@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from(["v1", "v2"]), token_set, token_set),
        max_size=8,
    ),
    st.integers(0, 8),
)
def test_gold_agreement_parts_joined_in_order_give_the_same_summary(rows, cut):
    whole, first, second = GoldAgreement(), GoldAgreement(), GoldAgreement()
    for index, (who, variant, tokens, gold) in enumerate(rows):
        whole.add_item([(who, variant, tokens)], gold, N)
        (first if index < cut else second).add_item([(who, variant, tokens)], gold, N)
    first.merge(GoldAgreement.from_json(second.as_json()))

    assert first.summary() == whole.summary()
