"""Model suggestions: an explainer's top-k tokens per instance, shown to annotators, and
how much the annotations they made follow them.

A predictions file (docs/reference/metrics.md#predictions-file) gives each instance's
soft token scores and hard rationale per document. The suggestions of an instance are its
k best-scored tokens over all its documents (ties broken by document order, then token
position); a document without soft scores offers its hard rationale's tokens, in order,
after every scored token. The default k is the run's hard rationale size: the mean number
of hard rationale tokens per instance, rounded, at least 1.

The pull of suggestions is measured with plain token F1 (`extensions.set_f1`: 0 when either
side is empty) between an annotation's tokens (the union of its sets) and the suggestions
of its item, or the annotations of the same item under other variants; confidence
intervals and the permutation test are `agreement.bootstrap_ci` and
`agreement.permutation_test`, over annotations.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rationale_metrics.agreement import bootstrap_ci, permutation_test
from rationale_metrics.extensions import set_f1

Token = tuple[str, int]  # (docid, token index in the document)


@dataclass(frozen=True)
class InstanceScores:
    """One instance's scores, per document in the file's order."""

    soft: dict[str, list[float]]
    hard: dict[str, list[int]]


def annotation_key(annotation_id) -> str:
    """The key an instance is found by: its annotation_id as JSON text, so that "7" and 7
    stay apart as the predictions format keeps them."""
    return json.dumps(annotation_id)


def instance_scores_read(lines: Iterable[bytes | str]) -> dict[str, InstanceScores]:
    """Each instance's soft scores and hard rationale tokens, by `annotation_key`. The file
    is one a run already validated; lines without an annotation_id or rationales are
    passed over."""
    found: dict[str, InstanceScores] = {}
    for line in lines:
        if not line.strip():
            continue
        record = json.loads(line)
        if not isinstance(record, dict) or "annotation_id" not in record:
            continue
        soft: dict[str, list[float]] = {}
        hard: dict[str, list[int]] = {}
        for rationale in record.get("rationales") or []:
            docid = rationale.get("docid")
            if not isinstance(docid, str):
                continue
            scores = rationale.get("soft_rationale_predictions")
            if isinstance(scores, list):
                soft[docid] = [float(s) for s in scores]
            spans = rationale.get("hard_rationale_predictions") or []
            hard[docid] = sorted(
                {t for span in spans for t in range(span["start_token"], span["end_token"])}
            )
        found[annotation_key(record["annotation_id"])] = InstanceScores(soft=soft, hard=hard)
    return found


def default_k(instances: Mapping[str, InstanceScores]) -> int:
    """The run's hard rationale size: mean hard tokens per instance, rounded, at least 1."""
    if not instances:
        return 1
    sizes = [sum(len(tokens) for tokens in i.hard.values()) for i in instances.values()]
    return max(1, round(sum(sizes) / len(sizes)))


def top_k_tokens(instance: InstanceScores, k: int) -> list[Token]:
    """The instance's k suggested tokens, sorted by document order then position."""
    order = {docid: n for n, docid in enumerate([*instance.soft, *instance.hard])}
    ranked: list[tuple[int, float, int, int, str]] = []
    for docid, scores in instance.soft.items():
        ranked.extend((0, -score, order[docid], t, docid) for t, score in enumerate(scores))
    for docid, tokens in instance.hard.items():
        if docid not in instance.soft:
            ranked.extend((1, 0.0, order[docid], t, docid) for t in tokens)
    chosen = sorted(ranked)[: max(k, 0)]
    return sorted(((docid, t) for *_, t, docid in chosen), key=lambda x: (order[x[0]], x[1]))


def suggestions_by_instance(
    instances: Mapping[str, InstanceScores], k: int
) -> dict[str, list[Token]]:
    return {key: top_k_tokens(instance, k) for key, instance in instances.items()}


# ---------------------------------------------------------------- their pull on annotators


@dataclass(frozen=True)
class SuggestionAnnotation:
    item: int
    variant: str
    tokens: frozenset[Token]


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _interval(values: Sequence[float], seed: int) -> list[float] | None:
    ci = bootstrap_ci(np.array(values, dtype=np.float64), seed=seed) if values else None
    return list(ci) if ci is not None else None


def f1_against_suggestions(
    annotations: Sequence[SuggestionAnnotation], suggested: Mapping[int, frozenset[Token]]
) -> dict[str, list[float]]:
    """Per variant, each annotation's token F1 against its item's suggestions (items
    without suggestions left out)."""
    values: dict[str, list[float]] = {}
    for a in annotations:
        if a.item in suggested:
            values.setdefault(a.variant, []).append(set_f1(a.tokens, suggested[a.item]))
    return values


def f1_against_other_variants(
    annotations: Sequence[SuggestionAnnotation],
) -> dict[str, list[float]]:
    """Per variant, each annotation's mean token F1 against the annotations of the same
    item under the other variants (annotations with no such partner left out)."""
    by_item: dict[int, list[SuggestionAnnotation]] = {}
    for a in annotations:
        by_item.setdefault(a.item, []).append(a)
    values: dict[str, list[float]] = {}
    for a in annotations:
        others = [b for b in by_item[a.item] if b.variant != a.variant]
        if others:
            values.setdefault(a.variant, []).append(
                sum(set_f1(a.tokens, b.tokens) for b in others) / len(others)
            )
    return values


def suggestion_pull(
    annotations: Sequence[SuggestionAnnotation],
    suggested: Mapping[int, frozenset[Token]],
    *,
    with_suggestions: str,
    permutations: int = 5000,
    seed: int = 0,
) -> dict:
    """How much the suggestions of variant `with_suggestions` pull its annotators toward
    the model: per variant, mean F1 against those suggestions and against the other
    variants (with 95 % bootstrap intervals over annotations), and a permutation test of
    the difference in F1 against the suggestions between `with_suggestions` and each
    other variant."""
    against_model = f1_against_suggestions(annotations, suggested)
    against_others = f1_against_other_variants(annotations)
    variants = sorted({a.variant for a in annotations} | {with_suggestions})
    rows = []
    for variant in variants:
        model_values = against_model.get(variant, [])
        other_values = against_others.get(variant, [])
        rows.append(
            {
                "variant": variant,
                "shows_suggestions": variant == with_suggestions,
                "annotations": len(model_values),
                "f1_suggestions": _mean(model_values),
                "f1_suggestions_ci": _interval(model_values, seed),
                "f1_other_variants": _mean(other_values),
                "f1_other_variants_ci": _interval(other_values, seed),
                "other_variant_annotations": len(other_values),
            }
        )
    shown = against_model.get(with_suggestions, [])
    tests = []
    for variant in variants:
        if variant == with_suggestions:
            continue
        test = permutation_test(
            np.array(shown, dtype=np.float64),
            np.array(against_model.get(variant, []), dtype=np.float64),
            permutations=permutations,
            seed=seed,
        )
        tests.append({"a": with_suggestions, "b": variant, **test})
    return {"variants": rows, "permutation_tests": tests}
