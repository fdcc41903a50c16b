"""Hard-rationale metrics over tables of spans: one numpy array per column.

A span table holds (key, start, end) rows, de-duplicated and sorted; a key numbers one
(annotation_id, docid) pair. Exact-match P/R/F1 and IOU F1 are then sorts, adjacent
comparisons and per-key counts (bincount), instead of Python sets per key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rationale_metrics.segments import distinct, top_k_within_segments


@dataclass(frozen=True)
class SpanTable:
    key: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __len__(self) -> int:
        return len(self.key)

    @staticmethod
    def build(key, start, end) -> SpanTable:
        key, start, end = (np.asarray(c, dtype=np.int64).reshape(-1) for c in (key, start, end))
        if len(key) == 0:
            return SpanTable(key, start, end)
        order = np.lexsort((end, start, key))
        key, start, end = key[order], start[order], end[order]
        fresh = np.ones(len(key), dtype=bool)
        fresh[1:] = (key[1:] != key[:-1]) | (start[1:] != start[:-1]) | (end[1:] != end[:-1])
        return SpanTable(key[fresh], start[fresh], end[fresh])

    def tokens(self) -> SpanTable:
        """Every covered token as a one-token span."""
        lengths = self.end - self.start
        total = int(lengths.sum())
        first = np.repeat(np.cumsum(lengths) - lengths, lengths)
        token = np.repeat(self.start, lengths) + (np.arange(total) - first)
        return SpanTable.build(np.repeat(self.key, lengths), token, token + 1)

    def keys(self) -> np.ndarray:
        return distinct(self.key)


def common_keys(a: SpanTable, b: SpanTable) -> np.ndarray:
    """Keys of the rows present in both (de-duplicated) tables."""
    key = np.concatenate([a.key, b.key])
    start = np.concatenate([a.start, b.start])
    end = np.concatenate([a.end, b.end])
    order = np.lexsort((end, start, key))
    key, start, end = key[order], start[order], end[order]
    same = (key[1:] == key[:-1]) & (start[1:] == start[:-1]) & (end[1:] == end[:-1])
    return key[1:][same]


def _f1(p, r):
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    total = p + r
    return np.where(total > 0, 2 * p * r / np.where(total > 0, total, 1), 0.0)


def _ratio(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.where(b > 0, a / np.where(b > 0, b, 1), 0.0)


def instance_prf(gold: SpanTable, predicted: SpanTable, universe: np.ndarray, n_keys: int) -> dict:
    """Exact-match P/R/F1: micro over all rows; macro over the keys in `universe`."""
    common = common_keys(gold, predicted)
    hits = len(common)
    micro_p, micro_r = float(_ratio(hits, len(predicted))), float(_ratio(hits, len(gold)))
    g = np.bincount(gold.key, minlength=n_keys)[universe]
    p = np.bincount(predicted.key, minlength=n_keys)[universe]
    c = np.bincount(common, minlength=n_keys)[universe]
    precision, recall = _ratio(c, p), _ratio(c, g)
    return {
        "instance_micro": {"p": micro_p, "r": micro_r, "f1": float(_f1(micro_p, micro_r))},
        "instance_macro": {
            "p": float(precision.mean()) if len(universe) else 0.0,
            "r": float(recall.mean()) if len(universe) else 0.0,
            "f1": float(_f1(precision, recall).mean()) if len(universe) else 0.0,
        },
    }


def _pairs(gold: SpanTable, predicted: SpanTable):
    """Every (predicted row, gold row) pair of the same key, with its IoU."""
    lo = np.searchsorted(gold.key, predicted.key, side="left")
    hi = np.searchsorted(gold.key, predicted.key, side="right")
    counts = hi - lo
    pred_index = np.repeat(np.arange(len(predicted)), counts)
    gold_index = np.repeat(lo, counts) + (
        np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    s1, e1 = predicted.start[pred_index], predicted.end[pred_index]
    s2, e2 = gold.start[gold_index], gold.end[gold_index]
    overlap = np.minimum(e1, e2) - np.maximum(s1, s2)
    union = np.maximum(e1, e2) - np.minimum(s1, s2)
    iou = np.where(overlap > 0, overlap / np.where(union > 0, union, 1), 0.0)
    return pred_index, gold_index, iou


def iou_f1(
    gold: SpanTable,
    predicted: SpanTable,
    threshold: float,
    n_keys: int,
    *,
    one_to_one: bool = False,
) -> dict:
    """IOU F1: a predicted span matches when its best IoU with a gold span of its key reaches
    the threshold (not one-to-one, so recall can exceed 1, as in the reference). With
    `one_to_one`, each gold span matches at most one prediction, greedily by descending IoU
    (ties: earlier predicted span, then earlier gold span)."""
    pred_index, gold_index, iou = _pairs(gold, predicted)
    if one_to_one:
        hit = iou >= threshold
        order = np.lexsort((gold_index[hit], pred_index[hit], -iou[hit]))
        used_pred, used_gold, matched = set(), set(), np.zeros(len(predicted), dtype=bool)
        for i, j in zip(
            pred_index[hit][order].tolist(), gold_index[hit][order].tolist(), strict=True
        ):
            if i not in used_pred and j not in used_gold:
                used_pred.add(i)
                used_gold.add(j)
                matched[i] = True
    else:
        best = np.zeros(len(predicted))
        np.maximum.at(best, pred_index, iou)
        matched = best >= threshold
    tp = np.bincount(predicted.key, weights=matched.astype(np.float64), minlength=n_keys)
    gold_count = np.bincount(gold.key, minlength=n_keys)
    pred_count = np.bincount(predicted.key, minlength=n_keys)
    total_tp = float(matched.sum())
    micro_p, micro_r = float(_ratio(total_tp, len(predicted))), float(_ratio(total_tp, len(gold)))
    gold_keys, pred_keys = gold_count > 0, pred_count > 0
    mean_r = float((tp[gold_keys] / gold_count[gold_keys]).mean()) if gold_keys.any() else 0.0
    mean_p = float((tp[pred_keys] / pred_count[pred_keys]).mean()) if pred_keys.any() else 0.0
    return {
        "threshold": threshold,
        "micro": {"p": micro_p, "r": micro_r, "f1": float(_f1(micro_p, micro_r))},
        "macro": {"p": mean_p, "r": mean_r, "f1": float(_f1(mean_p, mean_r))},
    }


def top_k_tables(
    segment_lengths: np.ndarray, scores: np.ndarray, keys: np.ndarray, k: int
) -> SpanTable:
    """The k highest-scoring tokens of each segment (ties: earlier token first), as runs."""
    ends = np.cumsum(segment_lengths)
    starts = ends - segment_lengths
    chosen = top_k_within_segments(scores, segment_lengths, k)
    seg = np.searchsorted(ends, chosen, side="right")
    local = chosen - starts[seg]
    new_run = np.ones(len(chosen), dtype=bool)
    new_run[1:] = (seg[1:] != seg[:-1]) | (local[1:] != local[:-1] + 1)
    run_id = np.cumsum(new_run) - 1
    run_start = local[new_run]
    run_end = np.zeros(new_run.sum(), dtype=np.int64)
    np.maximum.at(run_end, run_id, local + 1)
    return SpanTable.build(keys[seg[new_run]], run_start, run_end)
