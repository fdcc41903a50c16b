"""The numpy classification report, entropy and KL equal scikit-learn's and scipy's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy
from sklearn.metrics import classification_report as sklearn_report

from rationale_metrics.classification import classification_report, entropy_rows, kl_rows
from tests.hypothesis_budget import examples

LABELS = ["a", "b", "c"]
pairs = st.lists(
    st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=40
)


@settings(max_examples=examples(300), deadline=None)
@given(pairs)
def test_report_equals_scikit_learn(rows):
    truth, guessed = [t for t, _ in rows], [g for _, g in rows]

    ours = classification_report(truth, guessed, LABELS)
    theirs = sklearn_report(
        truth, guessed, labels=LABELS, target_names=LABELS, output_dict=True, zero_division=0
    )

    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        if isinstance(value, dict):
            for metric, number in value.items():
                assert ours[key][metric] == pytest.approx(number, abs=1e-12), (key, metric)
        else:
            assert ours[key] == pytest.approx(value, abs=1e-12)


probabilities = st.lists(st.floats(0, 1), min_size=3, max_size=3).filter(lambda v: sum(v) > 1e-6)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(probabilities, probabilities), min_size=1, max_size=10))
def test_entropy_and_kl_equal_scipy(rows):
    p = np.array([a for a, _ in rows])
    q = np.array([b for _, b in rows])

    assert entropy_rows(p) == pytest.approx(entropy(p, axis=1), abs=1e-12)
    assert kl_rows(p, q) == pytest.approx(entropy(p, q, axis=1), abs=1e-12, nan_ok=True)
