"""Per-key AUPRC, average precision and ROC AUC for many keys at once.

The definitions are scikit-learn's, applied to each key: `precision_recall_curve` + `auc`
for AUPRC (keys with one class included), `average_precision_score` and `roc_auc_score`
(keys with one class skipped). Calling those functions once per key costs ~1 ms of input
checking each, minutes on e-SNLI's 20,000 keys; here all keys are worked on at once.
tests/rationale_metrics/test_soft.py checks equality with scikit-learn to 1e-12.

Gold rationales are short: a few dozen positive tokens in a document of thousands. The
precision-recall curve only moves up (recall grows) at the thresholds of positive scores,
and every other step adds an exact zero to the areas. So the curves are evaluated at the
positives' distinct scores only: for each, how many of its key's scores are above it and
equal to it, found by bisection in the key's sorted scores. Nothing of the scores' length
is made beyond that sort (values only, no permutation), and the areas are the same sums,
term for term and in the same order, as over every threshold. ROC AUC is the Mann-Whitney
count of (positive, negative) pairs in order, ties counting one half, in exact integers:
the trapezoids' area under the ROC curve, divided once.
"""

from __future__ import annotations

import numpy as np

from rationale_metrics.segments import CHUNK_ELEMENTS, ascending_within_segments, chunk_bounds

SoftPerKey = tuple[np.ndarray, np.ndarray, np.ndarray]  # auprc, average precision, ROC AUC


def soft_metrics_per_key(truths: list[np.ndarray], scores: list[np.ndarray]) -> SoftPerKey:
    """(auprc, average_precision, roc_auc) per key; the last two are NaN for one-class keys."""
    lengths = np.fromiter(map(len, truths), dtype=np.int64, count=len(truths))
    if not len(truths):
        empty = np.zeros(0)
        return empty, empty, empty
    return soft_metrics_per_segment(np.concatenate(truths), np.concatenate(scores), lengths)


def soft_metrics_per_segment(
    truth: np.ndarray, score: np.ndarray, lengths: np.ndarray
) -> SoftPerKey:
    """The same over keys stored end to end: key i is the next `lengths[i]` values."""
    return soft_metrics_of_positives(score, lengths, np.flatnonzero(truth))


def soft_metrics_of_positives(
    score: np.ndarray, lengths: np.ndarray, positives: np.ndarray
) -> SoftPerKey:
    """The same, the gold given as the positions of the positive values (ascending, each
    once) in `score`."""
    lengths = np.asarray(lengths, dtype=np.int64)
    positives = np.asarray(positives, dtype=np.int64)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    cuts = np.searchsorted(positives, bounds)
    results = [
        _chunk(
            score[bounds[first] : bounds[end]],
            lengths[first:end],
            positives[cuts[first] : cuts[end]] - bounds[first],
        )
        for first, end in chunk_bounds(lengths, CHUNK_ELEMENTS)
    ]
    if not results:
        empty = np.zeros(0)
        return empty, empty, empty
    return tuple(np.concatenate([r[i] for r in results]) for i in range(3))  # type: ignore[return-value]


def _first_index(
    ordered: np.ndarray, low: np.ndarray, high: np.ndarray, value: np.ndarray, *, above: bool
) -> np.ndarray:
    """Per row, the first index in ordered[low:high] (ascending) whose value is above
    `value` (`above`) or at least `value`; `high` where there is none."""
    low, high = low.copy(), high.copy()
    for _ in range(int(np.max(high - low, initial=0)).bit_length()):
        searching = low < high
        middle = (low + high) >> 1
        probe = ordered[np.where(searching, middle, 0)]
        right = searching & ((probe <= value) if above else (probe < value))
        low = np.where(right, middle + 1, low)
        high = np.where(searching & ~right, middle, high)
    return low


def _sums(key: np.ndarray, terms: np.ndarray, n_keys: int) -> np.ndarray:
    """Per key, the sum of its terms added in order (bincount; floats even with no terms)."""
    return np.bincount(key, weights=terms, minlength=n_keys).astype(np.float64, copy=False)


def _chunk(score: np.ndarray, lengths: np.ndarray, positives: np.ndarray) -> SoftPerKey:
    n_keys = len(lengths)
    score = score.astype(np.float64, copy=False)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    ordered = ascending_within_segments(score, lengths)

    # The positives' distinct scores, key by key, from the highest: one curve step each.
    key = np.searchsorted(ends, positives, side="right")
    positive_count = np.bincount(key, minlength=n_keys)
    negative_count = lengths - positive_count
    value = score[positives]
    order = np.lexsort((-value, key))
    key, value = key[order], value[order]
    fresh = np.ones(len(key), dtype=bool)
    fresh[1:] = (key[1:] != key[:-1]) | (value[1:] != value[:-1])
    step = np.flatnonzero(fresh)
    key, value = key[step], value[step]
    positive_here = np.diff(np.append(step, len(order)))  # positives at this score
    before = np.cumsum(positive_here) - positive_here  # over all keys so far
    positive_above = before - before[np.searchsorted(key, key)]  # less the earlier keys'

    # Scores above and equal to each step's, in its key.
    above_start = _first_index(ordered, starts[key], ends[key], value, above=True)
    at_start = _first_index(ordered, starts[key], above_start, value, above=False)
    above = ends[key] - above_start
    here = above_start - at_start

    # The curve after this step's threshold, and before it (at the higher scores only).
    positives_of_key = positive_count[key].astype(np.float64)
    tps = (positive_above + positive_here).astype(np.float64)
    precision = tps / (above + here)
    recall = tps / positives_of_key
    fresh_curve = above == 0
    previous_precision = np.where(
        fresh_curve, 1.0, positive_above / np.where(fresh_curve, 1, above)
    )
    previous_recall = np.where(fresh_curve, 0.0, positive_above / positives_of_key)
    auprc = _sums(key, (recall - previous_recall) * (precision + previous_precision) / 2, n_keys)
    average_precision = _sums(key, (recall - previous_recall) * precision, n_keys)
    # Without positives, recall is 1 from the first threshold on, where precision is 0:
    # one step from (0, 1) to (1, 0).
    auprc[positive_count == 0] = 0.5

    # Twice the Mann-Whitney U: pairs with the positive above count 2, ties 1.
    negative_above = above - positive_above
    negative_here = here - positive_here
    twice_u = _sums(
        key, positive_here * (2 * (negative_count[key] - negative_above) - negative_here), n_keys
    )
    two_class = (positive_count > 0) & (negative_count > 0)
    pairs = np.where(two_class, 2 * positive_count * negative_count, 1)
    roc = twice_u / pairs

    average_precision[~two_class] = np.nan
    roc[~two_class] = np.nan
    return auprc, average_precision, roc
