"""Kappa equals scikit-learn's cohen_kappa_score except in the documented undefined case."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from rationale_metrics.agreement import TokenAnnotation, cohen_kappa_pairs, variant_agreement

vectors = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
    )
)


@settings(max_examples=400, deadline=None)
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


@settings(max_examples=200, deadline=None)
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
