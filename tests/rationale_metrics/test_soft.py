"""The batched soft metrics equal scikit-learn's per-key functions."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

from rationale_metrics import soft as soft_module
from rationale_metrics.soft import soft_metrics_per_key
from tests.hypothesis_budget import examples

key = st.integers(1, 30).flatmap(
    lambda n: st.tuples(
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(
            st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]) | st.floats(-5, 5),
            min_size=n,
            max_size=n,
        ),
    )
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(key, min_size=1, max_size=8))
def test_batched_soft_metrics_equal_scikit_learn(keys):
    truths = [np.array(t, dtype=int) for t, _ in keys]
    scores = [np.array(s, dtype=float) for _, s in keys]

    auprc, ap, roc = soft_metrics_per_key(truths, scores)

    for i, (truth, score) in enumerate(zip(truths, scores, strict=True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            precision, recall, _ = precision_recall_curve(truth, score)
            assert auprc[i] == pytest.approx(auc(recall, precision), abs=1e-12)
            if 0 < truth.sum() < len(truth):
                assert ap[i] == pytest.approx(average_precision_score(truth, score), abs=1e-12)
                assert roc[i] == pytest.approx(roc_auc_score(truth, score), abs=1e-12)
            else:
                assert np.isnan(ap[i]) and np.isnan(roc[i])


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(key, min_size=1, max_size=12), st.integers(1, 40))
def test_any_cut_into_chunks_gives_the_same_figures_bit_for_bit(keys, chunk):
    truths = [np.array(t, dtype=int) for t, _ in keys]
    scores = [np.array(s, dtype=float) for _, s in keys]
    whole = soft_metrics_per_key(truths, scores)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(soft_module, "CHUNK_ELEMENTS", chunk)
        chunked = soft_metrics_per_key(truths, scores)

    for a, b in zip(whole, chunked, strict=True):
        assert np.array_equal(a, b, equal_nan=True)


def test_long_keys_of_many_tied_scores_equal_scikit_learn():
    # Evidence Inference's shape: thousands of scores per key, few positives, many ties.
    rng = np.random.default_rng(7)
    truths, scores = [], []
    for length in (4761, 3000, 5000, 1):
        truth = np.zeros(length, dtype=int)
        start = int(rng.integers(0, max(1, length - 40)))
        truth[start : start + 40] = 1
        truths.append(truth)
        scores.append(np.round(rng.random(length), 2))
    truths.append(np.zeros(2000, dtype=int))
    scores.append(rng.random(2000))

    auprc, ap, roc = soft_metrics_per_key(truths, scores)

    for i, (truth, score) in enumerate(zip(truths, scores, strict=True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            precision, recall, _ = precision_recall_curve(truth, score)
            assert auprc[i] == pytest.approx(auc(recall, precision), abs=1e-12)
            if 0 < truth.sum() < len(truth):
                assert ap[i] == pytest.approx(average_precision_score(truth, score), abs=1e-12)
                assert roc[i] == pytest.approx(roc_auc_score(truth, score), abs=1e-12)
            else:
                assert np.isnan(ap[i]) and np.isnan(roc[i])
