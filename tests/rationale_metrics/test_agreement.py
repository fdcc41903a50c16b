"""Kappa equals scikit-learn's cohen_kappa_score except in the documented undefined case."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from rationale_metrics.agreement import (
    TokenAnnotation,
    cohen_kappa_counts,
    cohen_kappa_pairs,
    variant_agreement,
)
from tests.hypothesis_budget import examples

vectors = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
    )
)


@settings(max_examples=examples(400), deadline=None)
@given(vectors)
def test_kappa_matches_scikit_learn(pair):
    a, b = (np.array(v) for v in pair)

    [ours] = cohen_kappa_pairs(a[None], b[None])

    constant_and_equal = len(set(a)) == 1 and (a == b).all()
    if constant_and_equal:
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_undefined_pairs_can_count_as_one():
    empty = np.zeros((1, 5), dtype=bool)

    assert cohen_kappa_pairs(empty, empty, undefined="one")[0] == 1.0


def ann(item, annotator, variant, tokens, n=4):
    return TokenAnnotation(str(item), annotator, variant, n, frozenset(tokens))


def test_intra_and_cross_variant_agreement_by_hand():
    annotations = [
        ann(1, "a", "A", {0, 1}),
        ann(1, "b", "A", {0, 1}),
        ann(1, "c", "B", {2, 3}),
        ann(2, "a", "A", set()),
        ann(2, "b", "A", set()),
    ]

    report = variant_agreement(annotations)

    # Item 1: A-A identical -> 1; item 2: both empty -> undefined, excluded.
    assert report["cells"]["A|A"] == {"kappa": 1.0, "items": 1, "pairs": 2, "excluded_pairs": 1}
    # Item 1: each A annotation vs the B one: complementary vectors -> kappa -1.
    assert report["cells"]["A|B"]["kappa"] == pytest.approx(-1.0)
    assert report["cells"]["A|B"]["pairs"] == 2


@settings(max_examples=examples(200), deadline=None)
@given(vectors)
def test_kappa_from_counts_matches_the_vectorised_kappa(pair):
    from rationale_metrics.agreement import cohen_kappa_counts

    a, b = (np.array(v) for v in pair)

    from_counts = cohen_kappa_counts(int((a & b).sum()), int(a.sum()), int(b.sum()), len(a))

    [vectorised] = cohen_kappa_pairs(a[None], b[None])
    if np.isnan(vectorised):
        assert from_counts is None
    else:
        assert from_counts == pytest.approx(vectorised, abs=1e-12)


def test_fleiss_kappa_by_hand():
    from rationale_metrics.agreement import fleiss_kappa

    # 3 subjects x 3 raters, categories (0, 1): p = (4/9, 5/9); P_i = 1, 1, 1/3;
    # P-bar = 7/9, P_e = 41/81, kappa = (7/9 - 41/81) / (1 - 41/81) = 22/40.
    assert fleiss_kappa(np.array([[3, 0], [0, 3], [1, 2]])) == pytest.approx(0.55)
    assert fleiss_kappa(np.array([[2, 0], [1, 2]])) is None  # unequal raters


def test_krippendorff_alpha_nominal_by_hand():
    from rationale_metrics.agreement import krippendorff_alpha_nominal

    # Coincidences o_aa = 2, o_ab = o_ba = 1, o_bb = 2; n_a = n_b = 3, n = 6:
    # alpha = 1 - (n - 1) * 2 / (2 * 3 * 3) = 1 - 10/18 = 4/9.
    assert krippendorff_alpha_nominal([["a", "a"], ["a", "b"], ["b", "b"]]) == pytest.approx(4 / 9)
    assert krippendorff_alpha_nominal([["a", "a", "a"], ["b", "b"]]) == pytest.approx(1.0)
    assert krippendorff_alpha_nominal([["a"]]) is None


def test_majority_agreement_by_hand():
    from rationale_metrics.agreement import majority_agreement

    matrix = np.array(
        [[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]], dtype=bool
    )  # majority = [1, 1, 0, 0]

    result = majority_agreement([matrix])

    # A matches exactly (kappa 1); B: P 1, R 1/2, kappa 1/2; C: P 2/3, R 1, kappa 1/2.
    assert result["kappa"]["mean"] == pytest.approx(2 / 3)
    assert result["precision"]["mean"] == pytest.approx((1 + 1 + 2 / 3) / 3)
    assert result["recall"]["mean"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert result["f1"]["mean"] == pytest.approx((1 + 2 / 3 + 0.8) / 3)


def test_annotation_statistics_by_hand():
    from rationale_metrics.agreement import annotation_statistics
    from rationale_metrics.stop_words import StopWordRule

    tokens = ["The", "film", "is", "great", "!"]
    result = annotation_statistics(
        [(tokens, {0, 3}, 10.0), (tokens, {3, 4}, 20.0), (tokens, set(), 30.0)],
        stop_words=StopWordRule(frozenset({"the", "is"})),
    )

    assert result["length_ratio"] == pytest.approx((2 / 5 + 2 / 5 + 0) / 3)
    assert result["stop_word_share"] == pytest.approx((1 / 2 + 0) / 2)
    assert result["punctuation_share"] == pytest.approx((0 + 1 / 2) / 2)
    assert result["empty_rate"] == pytest.approx(1 / 3)
    assert result["seconds"]["median"] == 20.0


def test_kappa_matrix_equals_the_pairwise_definition():
    from rationale_metrics.agreement import kappa_matrix

    rng = np.random.default_rng(5)
    highlights = rng.random((30, 3, 3, 12)) < 0.3
    annotations = [
        TokenAnnotation(
            str(i), f"{v}-{a}", f"v{v}", 12, frozenset(np.flatnonzero(highlights[i, v, a]).tolist())
        )
        for i in range(30)
        for v in range(3)
        for a in range(3)
    ]

    fast = kappa_matrix(highlights)
    slow = variant_agreement(annotations)

    for a in range(3):
        for b in range(a, 3):
            cell = slow["cells"][f"v{a}|v{b}"]
            assert fast["kappa"][a, b] == pytest.approx(cell["kappa"], abs=1e-9)
            assert fast["excluded_pairs"][a, b] == cell["excluded_pairs"]


def test_bootstrap_and_permutation():
    from rationale_metrics.agreement import bootstrap_ci, permutation_test

    values = np.array([0.2, 0.4, 0.6, 0.8])
    low, high = bootstrap_ci(values, seed=1)
    assert low < values.mean() < high
    assert bootstrap_ci(np.array([0.5, 0.5])) == (0.5, 0.5)
    assert permutation_test(values, values)["p_value"] > 0.9
    far = permutation_test(
        np.full(20, 0.9) + np.linspace(0, 0.01, 20), np.full(20, 0.1), permutations=999
    )
    # linspace(0, 0.01, 20) is symmetric about 0.005, so the first mean is 0.9 + 0.005 =
    # 0.905 and the difference 0.905 - 0.1 = 0.805. Every first value exceeds every second,
    # so only the observed split and its mirror reach that difference, and a shuffle does
    # with probability 2 / C(40, 20) = 1 / 68,923,264,410: none of the 999 does, and the
    # p-value is (0 + 1) / (999 + 1).
    assert far["difference"] == pytest.approx(0.805, rel=0, abs=1e-12)
    assert far["p_value"] == 1 / 1000


def test_explainer_plausibility_by_hand():
    from rationale_metrics.agreement import explainer_plausibility

    annotations = [np.array([1, 0, 1, 0], dtype=bool), np.array([1, 0, 0, 0], dtype=bool)]

    # k = floor(1.5) = 1: the top token is 0; kappa 1/2 against the first, 1 against the second.
    assert explainer_plausibility([(np.array([0.9, 0.1, 0.8, 0.0]), annotations)]) == {
        "plausibility": 1.0,
        "items": 1,
        "excluded_items": 0,
    }


def _long_pair(n: int, ones_a: set[int], ones_b: set[int]) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    a[list(ones_a)] = True
    b[list(ones_b)] = True
    return a, b


# Long documents with a few highlighted tokens, or almost all of them: where p_e lies
# within 1e-5 of 1 while kappa is still defined.
long_vectors = st.integers(10_000, 200_000).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.sets(st.integers(0, n - 1), max_size=4),
        st.sets(st.integers(0, n - 1), max_size=4),
        st.booleans(),
        st.booleans(),
    )
)


@settings(max_examples=examples(150), deadline=None)
@given(long_vectors)
def test_kappa_on_long_vectors_matches_scikit_learn(case):
    n, ones_a, ones_b, invert_a, invert_b = case
    a, b = _long_pair(n, ones_a, ones_b)
    a, b = a ^ invert_a, b ^ invert_b

    [ours] = cohen_kappa_pairs(a[None], b[None])
    from_counts = cohen_kappa_counts(int((a & b).sum()), int(a.sum()), int(b.sum()), n)

    if len(set(a)) == 1 and (a == b).all():
        assert np.isnan(ours)
        assert from_counts is None
    else:
        assert ours == pytest.approx(cohen_kappa_score(a, b), rel=1e-9, abs=1e-12)
        assert from_counts == pytest.approx(ours, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    ("ones_a", "ones_b", "expected"),
    [({7}, set(), 0.0), ({7}, {7}, 1.0), ({7}, {8}, -1e-5 / (1 - 1e-5))],
)
def test_one_highlight_in_100k_tokens_has_a_kappa(ones_a, ones_b, expected):
    a, b = _long_pair(100_000, ones_a, ones_b)

    [kappa] = cohen_kappa_pairs(a[None], b[None])

    assert kappa == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_sums_by_group_give_each_set_of_groups_its_own_mean_pairwise_agreement():
    from itertools import combinations

    from rationale_metrics.agreement import (
        mean_pairwise_f1,
        mean_pairwise_kappa,
        means_of_groups,
        pairwise_sums_by_group,
    )

    # Two annotations under a, two under b, one under c (alone, no pair); two empty sets
    # (b's second and c's) make a pair whose kappa is undefined.
    token_sets = [{0, 1, 2}, {1, 2, 3}, {5, 6}, set(), set()]
    groups = ["a", "a", "b", "b", "c"]
    sums = pairwise_sums_by_group(token_sets, groups, 10)

    for size in (1, 2, 3):
        for chosen in combinations("abc", size):
            alone = [t for t, g in zip(token_sets, groups, strict=True) if g in chosen]
            expected_kappa, _ = mean_pairwise_kappa(alone, 10)
            kappa, f1 = means_of_groups(sums, chosen)
            assert kappa == pytest.approx(expected_kappa), chosen
            assert f1 == pytest.approx(mean_pairwise_f1(alone)), chosen
    assert means_of_groups(sums, ["c"]) == (None, None)
    assert sums[("b", "c")].pairs == 2 and sums[("b", "c")].kappa_pairs == 1
