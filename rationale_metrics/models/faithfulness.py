"""Faithfulness measured by the model itself, every erasure of many instances in few
forward passes: ERASER's comprehensiveness, sufficiency and AOPC, and Kendall's tau
between an explanation and leave-one-out occlusion.

The ERASER prediction lines that `explain_lines` writes carry the same probabilities; this
module gives the per-instance figures directly (for the benchmark, and to compare with
other tools)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rationale_metrics.models.classifier import ModelInput, TransformersClassifier

# Leave-one-out drops closer than this are ties. A float32 forward pass rounds a
# probability to about 6e-8, and the padding and size of the pass that computes it change
# that rounding by a unit or two: on a model whose probability hardly moves without any one
# word, the order of such drops is the rounding's, and the batched erasures and a plain
# loop over them ranked them differently (Kendall's tau -0.43 against -0.53).
LOO_TIE = 1e-6


# Rows of pairs compared at once: memory stays O(n x block) on documents of thousands of
# words, where the whole n x n table would take gigabytes.
_TAU_BLOCK = 512


def kendall_tau_b(x: np.ndarray, y: np.ndarray, *, x_tie: float = 0.0) -> float:
    """Kendall's tau-b (ties corrected, as scipy's default); x values within `x_tie` of
    each other are a tie. NaN when either side is constant."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    concordant = x_pairs = y_pairs = 0.0
    for start in range(0, len(x), _TAU_BLOCK):
        rows = slice(start, start + _TAU_BLOCK)
        later = np.arange(len(x))[None, :] > np.arange(start, start + len(x[rows]))[:, None]
        dx = x[rows, None] - x[None, :]
        sx = np.where(later & (np.abs(dx) > x_tie), np.sign(dx), 0.0)
        sy = np.where(later, np.sign(y[rows, None] - y[None, :]), 0.0)
        concordant += float(np.sum(sx * sy))
        x_pairs += float(np.sum(sx * sx))
        y_pairs += float(np.sum(sy * sy))
    denominator = np.sqrt(x_pairs * y_pairs)
    if denominator == 0:
        return float("nan")
    return concordant / denominator


@dataclass(frozen=True)
class InstanceFaithfulness:
    label_index: int
    comprehensiveness: float
    sufficiency: float
    # Per AOPC bin, p[y] minus p[y] without (comprehensiveness) or with only (sufficiency)
    # the top ceil(bin x n) words; the AOPC is their mean.
    comprehensiveness_bins: tuple[float, ...]
    sufficiency_bins: tuple[float, ...]
    tau_loo: float

    @property
    def aopc_comprehensiveness(self) -> float:
        return float(np.mean(self.comprehensiveness_bins))

    @property
    def aopc_sufficiency(self) -> float:
        return float(np.mean(self.sufficiency_bins))


def model_faithfulness(
    model: TransformersClassifier,
    inputs: Sequence[ModelInput],
    scores: Sequence[np.ndarray],
    *,
    k: int,
    aopc_thresholds: Sequence[float],
    loo_tie: float = LOO_TIE,
) -> list[InstanceFaithfulness]:
    """Each instance's faithfulness towards the model's label on the whole input, from one
    pooled set of forward passes: the whole input, the top-k and AOPC erasures, and every
    leave-one-word-out input. Leave-one-out drops within `loo_tie` are ties in Kendall's
    tau (0: every drop ranked as it comes out, as ferret and scipy rank them)."""
    from rationale_metrics.explain import erasure_masks

    encoded = [model.encode(inp) for inp in inputs]
    keeps = []
    for enc, s in zip(encoded, scores, strict=True):
        if len(s) != enc.n_words:
            raise ValueError(f"{len(s)} scores for an input of {enc.n_words} words")
        keeps.append(
            np.vstack(
                [
                    np.ones((1, enc.n_words), dtype=bool),
                    erasure_masks(np.asarray(s), k, aopc_thresholds),
                    ~np.eye(enc.n_words, dtype=bool),
                ]
            )
        )
    probabilities = model.probabilities(encoded, keeps)
    bins = len(aopc_thresholds)
    out = []
    for s, p in zip(scores, probabilities, strict=True):
        y = int(np.argmax(p[0]))
        drop = p[0, y] - p[:, y]
        erased = drop[1 : 3 + 2 * bins]
        loo = drop[3 + 2 * bins :]
        out.append(
            InstanceFaithfulness(
                label_index=y,
                comprehensiveness=float(erased[0]),
                sufficiency=float(erased[1]),
                comprehensiveness_bins=tuple(float(v) for v in erased[2::2]),
                sufficiency_bins=tuple(float(v) for v in erased[3::2]),
                tau_loo=kendall_tau_b(loo, s, x_tie=loo_tie),
            )
        )
    return out
