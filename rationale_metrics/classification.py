"""Accuracy, scikit-learn's `classification_report(output_dict=True)`, entropy and KL, in numpy.

Importing scikit-learn and scipy costs about a second, more than scoring a large file;
these are their definitions over label arrays, and tests/rationale_metrics/
test_classification.py checks them against scikit-learn and scipy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b > 0, a / np.where(b > 0, b, 1), 0.0)


def classification_report(
    truth: Sequence[str], guessed: Sequence[str], labels: Sequence[str]
) -> dict:
    """Per-label precision, recall, F1 and support, accuracy, macro and weighted averages
    (zero_division=0), keyed by label as scikit-learn's output_dict report."""
    index = {label: i for i, label in enumerate(labels)}
    t = np.array([index[x] for x in truth], dtype=np.int64)
    g = np.array([index[x] for x in guessed], dtype=np.int64)
    n = len(labels)
    tp = np.bincount(t[t == g], minlength=n).astype(np.float64)
    predicted = np.bincount(g, minlength=n).astype(np.float64)
    support = np.bincount(t, minlength=n).astype(np.float64)
    precision = _divide(tp, predicted)
    recall = _divide(tp, support)
    f1 = _divide(2 * precision * recall, precision + recall)
    report: dict = {
        label: {
            "precision": float(precision[i]),
            "recall": float(recall[i]),
            "f1-score": float(f1[i]),
            "support": float(support[i]),
        }
        for i, label in enumerate(labels)
    }
    total = float(support.sum())
    report["accuracy"] = float((t == g).mean()) if len(t) else 0.0
    report["macro avg"] = {
        "precision": float(precision.mean()),
        "recall": float(recall.mean()),
        "f1-score": float(f1.mean()),
        "support": total,
    }
    weights = support / total if total else np.zeros(n)
    report["weighted avg"] = {
        "precision": float((precision * weights).sum()),
        "recall": float((recall * weights).sum()),
        "f1-score": float((f1 * weights).sum()),
        "support": total,
    }
    return report


def entropy_rows(p: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of each row, after normalising it to sum to 1."""
    p = p / p.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1)), 0.0)
    return terms.sum(axis=1)


def kl_rows(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """KL(p || q) of each row pair after normalising both (scipy.stats.entropy(p, q))."""
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        # log p - log q, not log(p / q): the quotient overflows for subnormal q.
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - np.log(q)), 0.0)
    return terms.sum(axis=1)
