"""Kendall's tau between leave-one-out drops and an explanation: scipy's tau-b, except that
drops closer than a float32 forward pass's rounding are ties, so the order of such drops
does not change with how the forward passes were batched."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from rationale_metrics.models.faithfulness import LOO_TIE, kendall_tau_b


def test_without_a_tie_width_it_is_scipys_tau_b_ties_included():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 4, 9).astype(float)
        y = rng.normal(size=9)

        assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y)[0], abs=1e-12)


def test_drops_closer_than_rounding_are_ties_wherever_their_last_bits_fall():
    scores = np.array([0.5, 0.4, 0.3, 0.2, 0.1])
    drops = np.array([0.2, 0.1, 3e-7, 2e-7, 1e-7])
    rounded_otherwise = np.array([0.2, 0.1, 2e-7, 2e-7, 3e-7])

    tau = kendall_tau_b(drops, scores, x_tie=LOO_TIE)

    assert tau == kendall_tau_b(rounded_otherwise, scores, x_tie=LOO_TIE)
    # 7 ordered pairs agree, 3 are ties: tau-b = 7 / sqrt(7 x 10).
    assert tau == pytest.approx(7 / np.sqrt(70))
    assert kendall_tau_b(drops, scores) == 1.0
    assert np.isnan(kendall_tau_b(np.full(5, 1e-7), scores, x_tie=LOO_TIE))


def test_a_document_longer_than_one_block_of_pairs_gives_the_same_tau(monkeypatch):
    # Pairs are compared a block of rows at a time (memory O(n x block), not n x n).
    from rationale_metrics.models import faithfulness

    rng = np.random.default_rng(1)
    x = rng.integers(0, 6, 40).astype(float)
    y = rng.normal(size=40)
    whole = kendall_tau_b(x, y)

    monkeypatch.setattr(faithfulness, "_TAU_BLOCK", 7)

    assert kendall_tau_b(x, y) == pytest.approx(whole, abs=1e-12)
    assert whole == pytest.approx(kendalltau(x, y)[0], abs=1e-12)
