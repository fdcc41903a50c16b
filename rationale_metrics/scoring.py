"""ERASER metrics (docs/reference/metrics.md#plausibility, #faithfulness), reference-compatible
by default.

Input: a validated dataset split and predictions. Output: a dict with the reference
scorer's keys (`iou_scores`, `rationale_prf`, `token_prf`, `token_soft_metrics`,
`sentence_soft_metrics`, `classification_scores`) plus extensions under their own keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rationale_metrics import extensions
from rationale_metrics.choices import DEFAULT_AOPC_THRESHOLDS, DEFAULT_IOU_THRESHOLDS
from rationale_metrics.classification import classification_report, entropy_rows, kl_rows
from rationale_metrics.eraser import EraserDataset, Instance
from rationale_metrics.prediction_table import PredictionTable, ThresholdedScores
from rationale_metrics.segments import Segments, distinct, ranges
from rationale_metrics.soft import SoftPerKey, soft_metrics_of_positives
from rationale_metrics.spans import SpanTable, instance_prf, iou_f1, top_k_tables

Key = tuple[str, str]  # (annotation_id as str, docid)


@dataclass
class ScoreOptions:
    iou_thresholds: tuple[float, ...] = DEFAULT_IOU_THRESHOLDS
    aopc_thresholds: tuple[float, ...] = DEFAULT_AOPC_THRESHOLDS
    extensions: bool = True


@dataclass
class GoldRationales:
    """A split's instances and its evidence as span tables.

    `spans` and `sentence_spans` flatten every group per (annotation_id, docid) key, as the
    reference does. `set_spans` keeps the groups (rationale sets) apart: it is keyed by set,
    and `set_instance` gives the position in `instances` of each set's instance.
    `key_numbers` numbers the keys of the span tables; scoring adds predicted keys to it.
    """

    instances: dict[str, Instance]
    key_numbers: dict[Key, int]
    spans: SpanTable
    sentence_spans: SpanTable
    set_spans: SpanTable
    set_instance: np.ndarray

    @cached_property
    def tokens(self) -> SpanTable:
        """`spans` as one-token spans."""
        return self.spans.tokens()

    @staticmethod
    def of(dataset: EraserDataset, split: str) -> GoldRationales:
        numbers: dict[Key, int] = {}
        tokens: list[tuple[int, int, int, int]] = []  # key, set, start, end
        sentences: list[tuple[int, int, int]] = []
        set_instance: list[int] = []
        for position, inst in enumerate(dataset.splits[split]):
            aid = inst.key
            for group in inst.evidences:
                if not group:
                    continue
                number = len(set_instance)
                for ev in group:
                    key = numbers.setdefault((aid, ev.docid), len(numbers))
                    tokens.append((key, number, ev.start_token, ev.end_token))
                    if ev.start_sentence is not None and ev.end_sentence is not None:
                        sentences.append((key, ev.start_sentence, ev.end_sentence))
                set_instance.append(position)
        key, group, start, end = np.array(tokens, dtype=np.int64).reshape(-1, 4).T
        return GoldRationales(
            instances={inst.key: inst for inst in dataset.splits[split]},
            key_numbers=numbers,
            spans=SpanTable.build(key, start, end),
            sentence_spans=_span_table(sentences),
            set_spans=SpanTable.build(group, token_code(key, start), token_code(key, end)),
            set_instance=np.array(set_instance, dtype=np.int64),
        )


def token_code(key: np.ndarray, position: np.ndarray) -> np.ndarray:
    """One integer per (key, token position): keys tell an instance's documents apart."""
    return (key << 32) + position


def _span_table(rows: list[tuple[int, int, int]]) -> SpanTable:
    columns = np.array(rows, dtype=np.int64).reshape(-1, 3)
    return SpanTable.build(columns[:, 0], columns[:, 1], columns[:, 2])


def _universe(*tables: SpanTable) -> np.ndarray:
    return distinct(np.concatenate([t.key for t in tables]))


def _rationale_keys(table: PredictionTable, numbers: dict[Key, int]) -> np.ndarray:
    """The key number of every rationale row (numbering keys not seen before)."""
    owners = map(table.keys.__getitem__, table.rationale_line.tolist())
    return np.fromiter(
        (
            numbers.setdefault(key, len(numbers))
            for key in zip(owners, table.rationale_docids, strict=True)
        ),
        dtype=np.int64,
        count=len(table.rationale_docids),
    )


def _predicted_spans(table: PredictionTable, rationale_key: np.ndarray) -> SpanTable:
    if table.hard is None:
        return SpanTable.build([], [], [])
    return SpanTable.build(rationale_key[table.hard.rationale], table.hard.start, table.hard.end)


# ---------------------------------------------------------------- soft scores


def soft_means(per_key: SoftPerKey) -> dict:
    """The soft figures from each key's AUPRC, average precision and ROC AUC, in key order."""
    auprc, ap, roc = per_key
    if not len(auprc):
        return {"auprc": None, "average_precision": None, "roc_auc_score": None}
    two_class = ~np.isnan(ap)
    return {
        "auprc": float(np.mean(auprc)),
        "average_precision": float(np.mean(ap[two_class])) if two_class.any() else None,
        "roc_auc_score": float(np.mean(roc[two_class])) if two_class.any() else None,
    }


def _slice_bounds(start: np.ndarray, end: np.ndarray, length: np.ndarray):
    """What Python's slice [start:end] covers of a sequence of `length`, per row."""
    start = np.clip(np.where(start < 0, start + length, start), 0, length)
    end = np.clip(np.where(end < 0, end + length, end), 0, length)
    return start, end


def _positive_positions(
    predicted: Segments, rationale_key: np.ndarray, gold: SpanTable, n_keys: int
) -> np.ndarray:
    """The positions in `predicted.values` that lie in a gold span of their rationale's
    key, ascending, each once."""
    row_of_key = np.full(n_keys, -1, dtype=np.int64)
    row_of_key[rationale_key] = np.arange(len(rationale_key))
    rows = row_of_key[gold.key]
    has_row = rows >= 0
    rows = rows[has_row]
    start, end = _slice_bounds(gold.start[has_row], gold.end[has_row], predicted.lengths[rows])
    covers = start < end
    rows, start, end = rows[covers], start[covers], end[covers]
    return distinct(ranges(predicted.starts[rows] + start, end - start))


# ---------------------------------------------------------------- classification


def _faithfulness(full: np.ndarray, other: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Mean of p[y] - other[y], of H(p) - H(other), and of KL(other || p)."""
    rows = np.arange(len(y))
    drop = full[rows, y] - other[rows, y]
    entropy_change = entropy_rows(full) - entropy_rows(other)
    divergence = kl_rows(other, full)
    return float(np.mean(drop)), float(np.mean(entropy_change)), float(np.mean(divergence))


def _aopc_points(
    thresholded: ThresholdedScores, full_y: np.ndarray, rows: np.ndarray, y: np.ndarray, lines, bins
) -> dict[str, list[float]]:
    points: dict[str, list[float]] = {"comprehensiveness": [], "sufficiency": []}
    for threshold in bins:
        column = thresholded.column(threshold)
        for kind in points:
            if column is None:
                raise ValueError(f"thresholded_scores: no line gives threshold {threshold}")
            values = getattr(thresholded, kind)[rows, column]
            lacking = np.flatnonzero(np.isnan(values).any(axis=1))
            if len(lacking):
                raise ValueError(
                    f"line {lines[lacking[0]]}: thresholded_scores has no {kind} scores at "
                    f"threshold {threshold}"
                )
            points[kind].append(float(np.mean(full_y - values[np.arange(len(y)), y])))
    return points


def classification_scores(
    gold: GoldRationales, table: PredictionTable, labels: list[str], aopc_thresholds
) -> dict:
    row_of = {key: i for i, key in enumerate(table.keys)}
    keys = [k for k in gold.instances if k in row_of]
    rows = np.array([row_of[k] for k in keys], dtype=np.int64)
    truth = [gold.instances[k].classification for k in keys]
    guessed_all = table.classification_labels()
    guessed = [guessed_all[i] for i in rows.tolist()]
    prf = classification_report(truth, guessed, labels)
    result: dict = {"accuracy": prf["accuracy"], "prf": prf}
    nothing = (None, None, None)
    comp = suff = nothing
    points: dict[str, list[float]] | None = None
    full = table.scores_for("classification_scores", labels)
    if full is not None and len(rows):
        full = full[rows]
        index = {label: i for i, label in enumerate(labels)}
        y = np.array([index[label] for label in guessed], dtype=np.int64)
        other = table.scores_for("comprehensiveness_scores", labels)
        if other is not None:
            comp = _faithfulness(full, other[rows], y)
        other = table.scores_for("sufficiency_scores", labels)
        if other is not None:
            suff = _faithfulness(full, other[rows], y)
        thresholded = table.thresholded_for(labels)
        if thresholded is not None:
            full_y = full[np.arange(len(y)), y]
            lines = table.lines[rows]
            points = _aopc_points(thresholded, full_y, rows, y, lines, aopc_thresholds)
    result.update(
        comprehensiveness=comp[0],
        sufficiency=suff[0],
        comprehensiveness_entropy=comp[1],
        sufficiency_entropy=suff[1],
        comprehensiveness_kl=comp[2],
        sufficiency_kl=suff[2],
    )
    if points is not None:
        result.update(
            aopc_thresholds=list(aopc_thresholds),
            comprehensiveness_aopc=float(np.mean(points["comprehensiveness"])),
            sufficiency_aopc=float(np.mean(points["sufficiency"])),
            comprehensiveness_aopc_points=points["comprehensiveness"],
            sufficiency_aopc_points=points["sufficiency"],
        )
    else:
        result.update(
            aopc_thresholds=None,
            comprehensiveness_aopc=None,
            sufficiency_aopc=None,
            comprehensiveness_aopc_points=None,
            sufficiency_aopc_points=None,
        )
    return result


# ---------------------------------------------------------------- extensions


def mean_rationale_length(gold: GoldRationales) -> float:
    """Mean number of distinct gold tokens per instance (all documents, all groups)."""
    if not gold.instances:
        return 0.0
    return len(gold.tokens) / len(gold.instances)


def _rationale_set_token_f1(
    gold: GoldRationales, table: PredictionTable, rationale_key: np.ndarray
) -> dict:
    """Token F1 against rationale sets, both modes, for the instances with predictions."""
    position = {key: i for i, key in enumerate(gold.instances)}
    line_instance = np.array([position[key] for key in table.keys], dtype=np.int64)
    hard = table.hard
    key = rationale_key[hard.rationale]
    predicted = SpanTable.build(
        line_instance[table.rationale_line[hard.rationale]],
        token_code(key, hard.start),
        token_code(key, hard.end),
    )
    return extensions.rationale_set_scores_from_tokens(
        len(gold.instances),
        gold.set_instance,
        gold.set_spans.tokens(),
        line_instance[distinct(table.rationale_line)],
        predicted.tokens(),
    )


def _soft_top_k(
    gold: GoldRationales, table: PredictionTable, rationale_key: np.ndarray, options
) -> dict:
    k = max(1, round(mean_rationale_length(gold)))
    soft = table.soft_tokens
    predicted = top_k_tables(soft.lengths, soft.values, rationale_key, k)
    universe = _universe(gold.spans, predicted)
    n_keys = len(gold.key_numbers)
    return {
        "k": k,
        "k_rule": "mean human rationale length in tokens over the split",
        "iou_scores": [iou_f1(gold.spans, predicted, t, n_keys) for t in options.iou_thresholds],
        "token_prf": instance_prf(gold.tokens, predicted.tokens(), universe, n_keys),
    }


def _extension_scores(gold, table, rationale_key, predicted, scores, options) -> None:
    if len(predicted):
        scores["iou_scores_one_to_one"] = [
            iou_f1(gold.spans, predicted, t, len(gold.key_numbers), one_to_one=True)
            for t in options.iou_thresholds
        ]
        scores["rationale_set_token_f1"] = _rationale_set_token_f1(gold, table, rationale_key)
    if table.soft_tokens is not None and len(table.soft_tokens):
        scores["soft_top_k"] = _soft_top_k(gold, table, rationale_key, options)
    classification = scores.get("classification_scores")
    if classification and classification.get("comprehensiveness_aopc") is not None:
        n_bins = len(options.aopc_thresholds)
        scores["aopc_paper_formula"] = {
            "comprehensiveness_aopc": extensions.aopc_paper(
                classification["comprehensiveness_aopc"], n_bins
            ),
            "sufficiency_aopc": extensions.aopc_paper(classification["sufficiency_aopc"], n_bins),
            "note": "divides by |B| + 1 with a zero k = 0 term: reference x |B| / (|B| + 1)",
        }


# ---------------------------------------------------------------- everything


def _in_split(predictions: PredictionTable, gold: GoldRationales) -> PredictionTable:
    in_split = [i for i, key in enumerate(predictions.keys) if key in gold.instances]
    return predictions.take(np.array(in_split, dtype=np.int64))


def soft_per_key_of_lines(
    dataset: EraserDataset, split: str, predictions: PredictionTable, start: int, stop: int
) -> dict[str, SoftPerKey]:
    """A chunk's part of the soft figures: each (instance, document) key's AUPRC, average
    precision and ROC AUC, for the prediction lines start..stop-1 (positions in the table)
    that the split scores, by kind ("token", "sentence"). Sorting every key's scores is
    most of the scorer's work at long documents; what is left, the means, is
    `score_predictions` given the chunks' parts in order (`soft_per_key_joined`). A key's
    figures depend on its own scores and gold only, so any cut into chunks gives the same
    numbers, bit for bit, as one process."""
    gold = GoldRationales.of(dataset, split)
    lines = np.arange(max(0, start), min(stop, len(predictions)), dtype=np.int64)
    table = _in_split(predictions.take(lines), gold)
    rationale_key = _rationale_keys(table, gold.key_numbers)
    n_keys = len(gold.key_numbers)
    found: dict[str, SoftPerKey] = {}
    for kind, segments, spans in (
        ("token", table.soft_tokens, gold.spans),
        ("sentence", table.soft_sentences, gold.sentence_spans),
    ):
        if segments is not None:
            positives = _positive_positions(segments, rationale_key, spans, n_keys)
            found[kind] = soft_metrics_of_positives(segments.values, segments.lengths, positives)
    return found


def soft_per_key_joined(parts: list[dict[str, SoftPerKey]]) -> dict[str, SoftPerKey]:
    """The chunks' parts (`soft_per_key_of_lines`), in the order of their lines, as one."""
    kinds = {kind for part in parts for kind in part}
    return {
        kind: tuple(  # type: ignore[misc]
            np.concatenate([part[kind][i] for part in parts if kind in part]) for i in range(3)
        )
        for kind in sorted(kinds)
    }


def score_predictions(
    dataset: EraserDataset,
    split: str,
    predictions: PredictionTable,
    options: ScoreOptions | None = None,
    *,
    soft_per_key: dict[str, SoftPerKey] | None = None,
) -> dict:
    """Every figure of the predictions on the split. `soft_per_key`, the chunks' parts
    joined (`soft_per_key_joined`), spares computing each key's soft figures again."""
    options = options or ScoreOptions()
    gold = GoldRationales.of(dataset, split)
    table = _in_split(predictions, gold)
    rationale_key = _rationale_keys(table, gold.key_numbers)
    n_keys = len(gold.key_numbers)
    predicted = _predicted_spans(table, rationale_key)
    scores: dict = {}
    if len(predicted):
        universe = _universe(gold.spans, predicted)
        scores["iou_scores"] = [
            iou_f1(gold.spans, predicted, t, n_keys) for t in options.iou_thresholds
        ]
        scores["rationale_prf"] = instance_prf(gold.spans, predicted, universe, n_keys)
        scores["token_prf"] = instance_prf(gold.tokens, predicted.tokens(), universe, n_keys)
    for kind, segments, spans in (
        ("token", table.soft_tokens, gold.spans),
        ("sentence", table.soft_sentences, gold.sentence_spans),
    ):
        if segments is None or not len(segments):
            continue
        if soft_per_key is not None:
            per_key = soft_per_key.get(kind, (np.zeros(0),) * 3)
            if len(per_key[0]) != len(segments):
                raise ValueError(
                    f"the chunks give {kind} figures for {len(per_key[0])} keys, "
                    f"the predictions have {len(segments)}"
                )
        else:
            positives = _positive_positions(segments, rationale_key, spans, n_keys)
            per_key = soft_metrics_of_positives(segments.values, segments.lengths, positives)
        scores[f"{kind}_soft_metrics"] = soft_means(per_key)
    if len(table) and table.classification is not None:
        labels = sorted({i.classification for i in dataset.instances() if i.classification})
        scores["classification_scores"] = classification_scores(
            gold, table, labels, options.aopc_thresholds
        )
    if options.extensions:
        _extension_scores(gold, table, rationale_key, predicted, scores, options)
    return scores
