"""ERASER metrics (METRICS.md sections 3 and 4), reference-compatible by default.

Input: a validated dataset split and predictions. Output: a dict with the reference
scorer's keys (`iou_scores`, `rationale_prf`, `token_prf`, `token_soft_metrics`,
`sentence_soft_metrics`, `classification_scores`) plus extensions under their own keys.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from rationale_metrics import extensions
from rationale_metrics.classification import classification_report, entropy_rows, kl_rows
from rationale_metrics.eraser import EraserDataset, Instance
from rationale_metrics.predictions import Prediction
from rationale_metrics.soft import soft_metrics_per_key
from rationale_metrics.spans import SpanTable, instance_prf, iou_f1, top_k_tables

DEFAULT_IOU_THRESHOLDS = (0.5,)
DEFAULT_AOPC_THRESHOLDS = (0.01, 0.05, 0.1, 0.2, 0.5)

Key = tuple[str, str]  # (annotation_id as str, docid)
Span = tuple[int, int]


@dataclass
class ScoreOptions:
    iou_thresholds: tuple[float, ...] = DEFAULT_IOU_THRESHOLDS
    aopc_thresholds: tuple[float, ...] = DEFAULT_AOPC_THRESHOLDS
    extensions: bool = True


class KeyIndex:
    """Numbers (annotation_id, docid) pairs for the span tables."""

    def __init__(self):
        self.numbers: dict[Key, int] = {}

    def __call__(self, key: Key) -> int:
        number = self.numbers.get(key)
        if number is None:
            number = self.numbers[key] = len(self.numbers)
        return number

    def __len__(self) -> int:
        return len(self.numbers)


@dataclass
class _Gold:
    instances: dict[str, Instance]
    spans: dict[Key, list[Span]] = field(default_factory=lambda: defaultdict(list))
    sentence_spans: dict[Key, list[Span]] = field(default_factory=lambda: defaultdict(list))


def _gold_for(dataset: EraserDataset, split: str) -> _Gold:
    gold = _Gold(instances={inst.key: inst for inst in dataset.splits[split]})
    for inst in dataset.splits[split]:
        for group in inst.evidences:
            for ev in group:
                key = (inst.key, ev.docid)
                gold.spans[key].append((ev.start_token, ev.end_token))
                if ev.start_sentence is not None and ev.end_sentence is not None:
                    gold.sentence_spans[key].append((ev.start_sentence, ev.end_sentence))
    return gold


def _table(spans: dict[Key, list[Span]], index: KeyIndex) -> SpanTable:
    rows = [(index(key), s, e) for key, values in spans.items() for s, e in values]
    if not rows:
        return SpanTable.build([], [], [])
    key, start, end = zip(*rows, strict=True)
    return SpanTable.build(key, start, end)


def _predicted_spans(predictions: list[Prediction]) -> dict[Key, list[Span]]:
    spans: dict[Key, list[Span]] = {}
    for pred in predictions:
        for rationale in pred.rationales:
            if rationale.hard:
                spans[(pred.key, rationale.docid)] = rationale.hard
    return spans


def _universe(*tables: SpanTable) -> np.ndarray:
    return np.unique(np.concatenate([t.key for t in tables]))


# ---------------------------------------------------------------- soft scores


def soft_scores(pairs: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """Mean per key of AUPRC (all keys) and of average precision and ROC AUC (keys whose
    gold has both classes)."""
    if not pairs:
        return {"auprc": None, "average_precision": None, "roc_auc_score": None}
    auprc, ap, roc = soft_metrics_per_key([t for t, _ in pairs], [s for _, s in pairs])
    two_class = ~np.isnan(ap)
    return {
        "auprc": float(np.mean(auprc)),
        "average_precision": float(np.mean(ap[two_class])) if two_class.any() else None,
        "roc_auc_score": float(np.mean(roc[two_class])) if two_class.any() else None,
    }


def _token_pairs(dataset, gold: _Gold, predictions) -> list[tuple[np.ndarray, np.ndarray]]:
    pairs = []
    for pred in predictions:
        for rationale in pred.rationales:
            if rationale.soft_tokens is None:
                continue
            truth = np.zeros(dataset.documents[rationale.docid].n_tokens, dtype=np.int64)
            for start, end in gold.spans.get((pred.key, rationale.docid), ()):
                truth[start:end] = 1
            pairs.append((truth, rationale.soft_tokens))
    return pairs


def _sentence_pairs(dataset, gold: _Gold, predictions) -> list[tuple[np.ndarray, np.ndarray]]:
    pairs = []
    for pred in predictions:
        for rationale in pred.rationales:
            if rationale.soft_sentences is None:
                continue
            truth = np.zeros(dataset.documents[rationale.docid].n_sentences, dtype=np.int64)
            for start, end in gold.sentence_spans.get((pred.key, rationale.docid), ()):
                truth[start:end] = 1
            pairs.append((truth, rationale.soft_sentences))
    return pairs


# ---------------------------------------------------------------- classification


def _matrix(rows: list[dict[str, float]], labels: list[str]) -> np.ndarray:
    try:
        pick = operator.itemgetter(*labels)
        values = np.fromiter(
            chain.from_iterable(map(pick, rows)) if len(labels) > 1 else map(pick, rows),
            dtype=np.float64,
            count=len(rows) * len(labels),
        )
        return values.reshape(len(rows), len(labels))
    except KeyError:
        return np.array(
            [[row.get(label, 0.0) for label in labels] for row in rows], dtype=np.float64
        )


def _faithfulness(full: np.ndarray, other: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Mean of p[y] - other[y], of H(p) - H(other), and of KL(other || p)."""
    rows = np.arange(len(y))
    drop = full[rows, y] - other[rows, y]
    entropy_change = entropy_rows(full) - entropy_rows(other)
    divergence = kl_rows(other, full)
    return float(np.mean(drop)), float(np.mean(entropy_change)), float(np.mean(divergence))


def classification_scores(
    gold: _Gold, predictions: list[Prediction], labels: list[str], aopc_thresholds
) -> dict:
    by_key = {p.key: p for p in predictions}
    keys = [k for k in gold.instances if k in by_key]
    truth = [gold.instances[k].classification for k in keys]
    guessed = [by_key[k].classification for k in keys]
    prf = classification_report(truth, guessed, labels)
    result: dict = {"accuracy": prf["accuracy"], "prf": prf}
    scored = [by_key[k] for k in keys if by_key[k].classification_scores is not None]
    index = {label: i for i, label in enumerate(labels)}
    nothing = (None, None, None)
    comp = suff = nothing
    points: dict[str, list[float]] | None = None
    if scored:
        full = _matrix([p.classification_scores for p in scored], labels)
        y = np.array([index[p.classification] for p in scored])
        with_comp = [i for i, p in enumerate(scored) if p.comprehensiveness_scores is not None]
        with_suff = [i for i, p in enumerate(scored) if p.sufficiency_scores is not None]
        if with_comp:
            other = _matrix([scored[i].comprehensiveness_scores for i in with_comp], labels)
            comp = _faithfulness(full[with_comp], other, y[with_comp])
        if with_suff:
            other = _matrix([scored[i].sufficiency_scores for i in with_suff], labels)
            suff = _faithfulness(full[with_suff], other, y[with_suff])
        if all(p.thresholded is not None for p in scored):
            rows = np.arange(len(scored))
            points = {"comprehensiveness": [], "sufficiency": []}
            lookup = [{round(t.threshold, 9): t for t in p.thresholded} for p in scored]
            for threshold in aopc_thresholds:
                entries = [by_threshold[round(threshold, 9)] for by_threshold in lookup]
                for kind, attr in (
                    ("comprehensiveness", "comprehensiveness"),
                    ("sufficiency", "sufficiency"),
                ):
                    other = _matrix([getattr(e, attr) for e in entries], labels)
                    points[kind].append(float(np.mean(full[rows, y] - other[rows, y])))
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


def mean_rationale_length(gold: _Gold) -> float:
    """Mean number of distinct gold tokens per instance (all documents, all groups)."""
    counts = dict.fromkeys(gold.instances, 0)
    for (aid, _docid), spans in gold.spans.items():
        counts[aid] += len({t for start, end in spans for t in range(start, end)})
    return float(np.mean(list(counts.values()))) if counts else 0.0


def _rationale_set_inputs(gold: _Gold, predictions: list[Prediction]):
    gold_sets = {
        key: [
            [
                frozenset(
                    (ev.docid, t) for ev in group for t in range(ev.start_token, ev.end_token)
                )
                for group in inst.evidences
                if group
            ]
        ]
        for key, inst in gold.instances.items()
    }
    predicted = {
        pred.key: [
            frozenset(
                (r.docid, t)
                for r in pred.rationales
                for start, end in (r.hard or ())
                for t in range(start, end)
            )
        ]
        for pred in predictions
        if any(r.hard is not None for r in pred.rationales)
    }
    return gold_sets, predicted


def _soft_top_k(
    gold: _Gold, predictions: list[Prediction], options: ScoreOptions, index: KeyIndex
) -> dict:
    k = max(1, round(mean_rationale_length(gold)))
    rationales = [
        (pred.key, r) for pred in predictions for r in pred.rationales if r.soft_tokens is not None
    ]
    lengths = np.array([len(r.soft_tokens) for _, r in rationales], dtype=np.int64)
    keys = np.array([index((key, r.docid)) for key, r in rationales], dtype=np.int64)
    scores = np.concatenate([r.soft_tokens for _, r in rationales])
    predicted = top_k_tables(lengths, scores, keys, k)
    gold_table = _table(gold.spans, index)
    universe = _universe(gold_table, predicted)
    return {
        "k": k,
        "k_rule": "mean human rationale length in tokens over the split",
        "iou_scores": [
            iou_f1(gold_table, predicted, t, len(index)) for t in options.iou_thresholds
        ],
        "token_prf": instance_prf(gold_table.tokens(), predicted.tokens(), universe, len(index)),
    }


def _extension_scores(gold, in_split, scores, options, tables) -> None:
    index, gold_table, predicted = tables
    if len(predicted):
        scores["iou_scores_one_to_one"] = [
            iou_f1(gold_table, predicted, t, len(index), one_to_one=True)
            for t in options.iou_thresholds
        ]
        gold_sets, predicted = _rationale_set_inputs(gold, in_split)
        scores["rationale_set_token_f1"] = {
            "greedy_union": extensions.rationale_set_scores(gold_sets, predicted),
            "best_single_set": extensions.rationale_set_scores(
                gold_sets, predicted, best_single=True
            ),
        }
    if any(r.soft_tokens is not None for p in in_split for r in p.rationales):
        scores["soft_top_k"] = _soft_top_k(gold, in_split, options, index)
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


def score_predictions(
    dataset: EraserDataset,
    split: str,
    predictions: list[Prediction],
    options: ScoreOptions | None = None,
) -> dict:
    options = options or ScoreOptions()
    gold = _gold_for(dataset, split)
    in_split = [p for p in predictions if p.key in gold.instances]
    scores: dict = {}
    index = KeyIndex()
    gold_table = _table(gold.spans, index)
    predicted = _table(_predicted_spans(in_split), index)
    if len(predicted):
        n_keys = len(index)
        universe = _universe(gold_table, predicted)
        scores["iou_scores"] = [
            iou_f1(gold_table, predicted, t, n_keys) for t in options.iou_thresholds
        ]
        scores["rationale_prf"] = instance_prf(gold_table, predicted, universe, n_keys)
        scores["token_prf"] = instance_prf(
            gold_table.tokens(), predicted.tokens(), universe, n_keys
        )
    token_pairs = _token_pairs(dataset, gold, in_split)
    if token_pairs:
        scores["token_soft_metrics"] = soft_scores(token_pairs)
    sentence_pairs = _sentence_pairs(dataset, gold, in_split)
    if sentence_pairs:
        scores["sentence_soft_metrics"] = soft_scores(sentence_pairs)
    if in_split and all(p.classification is not None for p in in_split):
        labels = sorted({i.classification for i in dataset.instances() if i.classification})
        scores["classification_scores"] = classification_scores(
            gold, in_split, labels, options.aopc_thresholds
        )
    if options.extensions:
        _extension_scores(gold, in_split, scores, options, (index, gold_table, predicted))
    return scores
