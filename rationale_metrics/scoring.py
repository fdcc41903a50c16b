"""ERASER metrics (METRICS.md sections 3 and 4), reference-compatible by default.

Input: a validated dataset split and predictions. Output: a dict with the reference
scorer's keys (`iou_scores`, `rationale_prf`, `token_prf`, `token_soft_metrics`,
`sentence_soft_metrics`, `classification_scores`) plus extensions under their own keys.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import entropy
from sklearn.metrics import (
    accuracy_score,
    auc,
    average_precision_score,
    classification_report,
    precision_recall_curve,
    roc_auc_score,
)

from rationale_metrics import extensions
from rationale_metrics.eraser import EraserDataset, Instance
from rationale_metrics.predictions import Prediction

DEFAULT_IOU_THRESHOLDS = (0.5,)
DEFAULT_AOPC_THRESHOLDS = (0.01, 0.05, 0.1, 0.2, 0.5)

Key = tuple[str, str]  # (annotation_id as str, docid)
Span = tuple[int, int]


@dataclass
class ScoreOptions:
    iou_thresholds: tuple[float, ...] = DEFAULT_IOU_THRESHOLDS
    aopc_thresholds: tuple[float, ...] = DEFAULT_AOPC_THRESHOLDS
    extensions: bool = True


@dataclass
class _Gold:
    instances: dict[str, Instance]
    spans: dict[Key, set[Span]] = field(default_factory=lambda: defaultdict(set))
    sentence_spans: dict[Key, set[Span]] = field(default_factory=lambda: defaultdict(set))


def _gold_for(dataset: EraserDataset, split: str) -> _Gold:
    gold = _Gold(instances={inst.key: inst for inst in dataset.splits[split]})
    for inst in dataset.splits[split]:
        for group in inst.evidences:
            for ev in group:
                key = (inst.key, ev.docid)
                gold.spans[key].add((ev.start_token, ev.end_token))
                if ev.start_sentence is not None and ev.end_sentence is not None:
                    gold.sentence_spans[key].add((ev.start_sentence, ev.end_sentence))
    return gold


def _f1(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def _safe_div(a: float, b: float) -> float:
    return a / b if b else 0.0


# ---------------------------------------------------------------- hard rationales


def _predicted_spans(predictions: list[Prediction]) -> dict[Key, set[Span]]:
    spans: dict[Key, set[Span]] = defaultdict(set)
    for pred in predictions:
        for rationale in pred.rationales:
            for span in rationale.hard or ():
                spans[(pred.key, rationale.docid)].add(span)
    return spans


def _iou(a: Span, b: Span) -> float:
    overlap = min(a[1], b[1]) - max(a[0], b[0])
    if overlap <= 0:
        return 0.0
    return overlap / (max(a[1], b[1]) - min(a[0], b[0]))


def iou_f1(
    gold: dict[Key, set[Span]],
    predicted: dict[Key, set[Span]],
    threshold: float,
    *,
    one_to_one: bool = False,
) -> dict:
    """IOU F1 (ERASER): a predicted span matches when its best IoU with a gold span of the
    same key reaches `threshold`. By default matching is not one-to-one (recall can exceed
    1, as in the reference); `one_to_one` lets each gold span be matched once, greedily by
    decreasing IoU."""
    tp_total = 0
    n_pred = sum(len(v) for v in predicted.values())
    n_gold = sum(len(v) for v in gold.values())
    macro_p, macro_r = [], []
    for key in set(gold) | set(predicted):
        gold_spans, pred_spans = sorted(gold.get(key, ())), sorted(predicted.get(key, ()))
        if one_to_one:
            pairs = sorted(
                (
                    (_iou(p, g), i, j)
                    for i, p in enumerate(pred_spans)
                    for j, g in enumerate(gold_spans)
                ),
                reverse=True,
            )
            used_p, used_g, tp = set(), set(), 0
            for value, i, j in pairs:
                if value < threshold:
                    break
                if i not in used_p and j not in used_g:
                    used_p.add(i)
                    used_g.add(j)
                    tp += 1
        else:
            tp = sum(
                1
                for p in pred_spans
                if gold_spans and max(_iou(p, g) for g in gold_spans) >= threshold
            )
        tp_total += tp
        if gold_spans:
            macro_r.append(tp / len(gold_spans))
        if pred_spans:
            macro_p.append(tp / len(pred_spans))
    micro_p, micro_r = _safe_div(tp_total, n_pred), _safe_div(tp_total, n_gold)
    mean_p = float(np.mean(macro_p)) if macro_p else 0.0
    mean_r = float(np.mean(macro_r)) if macro_r else 0.0
    return {
        "threshold": threshold,
        "micro": {"p": micro_p, "r": micro_r, "f1": _f1(micro_p, micro_r)},
        "macro": {"p": mean_p, "r": mean_r, "f1": _f1(mean_p, mean_r)},
    }


def _to_tokens(spans: dict[Key, set[Span]]) -> dict[Key, set[Span]]:
    return {
        key: {(t, t + 1) for start, end in value for t in range(start, end)}
        for key, value in spans.items()
    }


def instance_prf(gold: dict[Key, set[Span]], predicted: dict[Key, set[Span]]) -> dict:
    """Exact-match P/R/F1, micro over all (key, span) pairs and macro over keys."""
    gold_all = {(k, s) for k, spans in gold.items() for s in spans}
    pred_all = {(k, s) for k, spans in predicted.items() for s in spans}
    hits = len(gold_all & pred_all)
    micro_p, micro_r = _safe_div(hits, len(pred_all)), _safe_div(hits, len(gold_all))
    ps, rs, f1s = [], [], []
    for key in set(gold) | set(predicted):
        g, p = gold.get(key, set()), predicted.get(key, set())
        common = len(g & p)
        precision, recall = _safe_div(common, len(p)), _safe_div(common, len(g))
        ps.append(precision)
        rs.append(recall)
        f1s.append(_f1(precision, recall))
    return {
        "instance_micro": {"p": micro_p, "r": micro_r, "f1": _f1(micro_p, micro_r)},
        "instance_macro": {
            "p": float(np.mean(ps)) if ps else 0.0,
            "r": float(np.mean(rs)) if rs else 0.0,
            "f1": float(np.mean(f1s)) if f1s else 0.0,
        },
    }


# ---------------------------------------------------------------- soft scores


def soft_scores(pairs: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """Mean per key of AUPRC (all keys) and of average precision and ROC AUC (keys whose
    gold has both classes)."""
    auprc, ap, roc = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for truth, scores in pairs:
            precision, recall, _ = precision_recall_curve(truth, scores)
            auprc.append(auc(recall, precision))
            if 0 < truth.sum() < len(truth):
                ap.append(average_precision_score(truth, scores))
                roc.append(roc_auc_score(truth, scores))
    return {
        "auprc": float(np.mean(auprc)) if auprc else None,
        "average_precision": float(np.mean(ap)) if ap else None,
        "roc_auc_score": float(np.mean(roc)) if roc else None,
    }


def _token_pairs(dataset, gold: _Gold, predictions) -> list[tuple[np.ndarray, np.ndarray]]:
    pairs = []
    for pred in predictions:
        for rationale in pred.rationales:
            if rationale.soft_tokens is None:
                continue
            truth = np.zeros(len(dataset.documents[rationale.docid].token_offsets), dtype=np.int64)
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
            truth = np.zeros(
                len(dataset.documents[rationale.docid].sentence_ranges), dtype=np.int64
            )
            for start, end in gold.sentence_spans.get((pred.key, rationale.docid), ()):
                truth[start:end] = 1
            pairs.append((truth, rationale.soft_sentences))
    return pairs


# ---------------------------------------------------------------- classification


def _vector(scores: dict[str, float], labels: list[str]) -> np.ndarray:
    return np.array([scores.get(label, 0.0) for label in labels], dtype=np.float64)


def classification_scores(
    gold: _Gold, predictions: list[Prediction], labels: list[str], aopc_thresholds
) -> dict:
    by_key = {p.key: p for p in predictions}
    keys = [k for k in gold.instances if k in by_key]
    truth = [gold.instances[k].classification for k in keys]
    guessed = [by_key[k].classification for k in keys]
    result: dict = {
        "accuracy": accuracy_score(truth, guessed),
        "prf": classification_report(
            truth, guessed, output_dict=True, labels=labels, target_names=labels, zero_division=0
        ),
    }
    comp, suff, comp_h, suff_h, comp_kl, suff_kl = [], [], [], [], [], []
    comp_points = [[] for _ in aopc_thresholds]
    suff_points = [[] for _ in aopc_thresholds]
    has_thresholds = all(by_key[k].thresholded is not None for k in keys) and keys
    for key in keys:
        pred = by_key[key]
        if pred.classification_scores is None:
            continue
        full = _vector(pred.classification_scores, labels)
        y = pred.classification
        p_y = pred.classification_scores[y]
        if pred.comprehensiveness_scores is not None:
            c = _vector(pred.comprehensiveness_scores, labels)
            comp.append(p_y - pred.comprehensiveness_scores[y])
            comp_h.append(entropy(full) - entropy(c))
            comp_kl.append(entropy(c, full))
        if pred.sufficiency_scores is not None:
            s = _vector(pred.sufficiency_scores, labels)
            suff.append(p_y - pred.sufficiency_scores[y])
            suff_h.append(entropy(full) - entropy(s))
            suff_kl.append(entropy(s, full))
        if has_thresholds:
            by_threshold = {round(t.threshold, 9): t for t in pred.thresholded}
            for i, threshold in enumerate(aopc_thresholds):
                entry = by_threshold[round(threshold, 9)]
                comp_points[i].append(p_y - entry.comprehensiveness[y])
                suff_points[i].append(p_y - entry.sufficiency[y])

    def mean(values):
        return float(np.mean(values)) if values else None

    result.update(
        comprehensiveness=mean(comp),
        sufficiency=mean(suff),
        comprehensiveness_entropy=mean(comp_h),
        sufficiency_entropy=mean(suff_h),
        comprehensiveness_kl=mean(comp_kl),
        sufficiency_kl=mean(suff_kl),
    )
    if has_thresholds:
        result.update(
            aopc_thresholds=list(aopc_thresholds),
            comprehensiveness_aopc=float(np.mean(comp_points)),
            sufficiency_aopc=float(np.mean(suff_points)),
            comprehensiveness_aopc_points=[float(np.mean(v)) for v in comp_points],
            sufficiency_aopc_points=[float(np.mean(v)) for v in suff_points],
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


def _soft_top_k(dataset, gold: _Gold, predictions: list[Prediction], options: ScoreOptions) -> dict:
    k = max(1, round(mean_rationale_length(gold)))
    predicted: dict[Key, set[Span]] = defaultdict(set)
    for pred in predictions:
        for r in pred.rationales:
            if r.soft_tokens is not None:
                top = extensions.top_k_indices(r.soft_tokens, k)
                predicted[(pred.key, r.docid)] = set(extensions.runs(top))
    return {
        "k": k,
        "k_rule": "mean human rationale length in tokens over the split",
        "iou_scores": [iou_f1(gold.spans, predicted, t) for t in options.iou_thresholds],
        "token_prf": instance_prf(_to_tokens(gold.spans), _to_tokens(predicted)),
    }


def _extension_scores(dataset, gold, in_split, scores, options) -> None:
    predicted_spans = _predicted_spans(in_split)
    if any(predicted_spans.values()):
        scores["iou_scores_one_to_one"] = [
            iou_f1(gold.spans, predicted_spans, t, one_to_one=True) for t in options.iou_thresholds
        ]
        gold_sets, predicted = _rationale_set_inputs(gold, in_split)
        scores["rationale_set_token_f1"] = {
            "greedy_union": extensions.rationale_set_scores(gold_sets, predicted),
            "best_single_set": extensions.rationale_set_scores(
                gold_sets, predicted, best_single=True
            ),
        }
    if any(r.soft_tokens is not None for p in in_split for r in p.rationales):
        scores["soft_top_k"] = _soft_top_k(dataset, gold, in_split, options)
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
    predicted = _predicted_spans(in_split)
    if any(predicted.values()):
        scores["iou_scores"] = [iou_f1(gold.spans, predicted, t) for t in options.iou_thresholds]
        scores["rationale_prf"] = instance_prf(gold.spans, predicted)
        scores["token_prf"] = instance_prf(_to_tokens(gold.spans), _to_tokens(predicted))
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
        _extension_scores(dataset, gold, in_split, scores, options)
    return scores
