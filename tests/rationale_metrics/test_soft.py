"""The batched soft metrics equal scikit-learn's per-key functions."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

from rationale_metrics.soft import soft_metrics_per_key

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


@settings(max_examples=300, deadline=None)
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
