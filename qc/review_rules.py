"""The score-and-revise rules as plain functions (no ORM).

Scales: per rationale set, sufficiency 1 cannot support / 2 not sure / 3 can support and
compactness 1 redundant tokens / 2 disturbing tokens / 3 not sure / 4 concise; per
annotation, comprehensiveness 1 not / 2 not sure / 3 comprehensive. A property passes
when its mean over the reviewers reaches the threshold; with several sets, every set must
pass. The default thresholds 8/3, 11/3 and 8/3 mean at least two thirds of the reviewers
gave the top score and under one third said "not sure".
"""

from __future__ import annotations

from dataclasses import dataclass

SUFFICIENCY = "sufficiency"
COMPACTNESS = "compactness"
COMPREHENSIVENESS = "comprehensiveness"
PROPERTIES = (SUFFICIENCY, COMPACTNESS, COMPREHENSIVENESS)
SCALES = {SUFFICIENCY: (1, 3), COMPACTNESS: (1, 4), COMPREHENSIVENESS: (1, 3)}

ACCEPTED = "accepted"
REVISE = "revise"
DISCARDED = "discarded"

# Means of small integers compared with thirds: tolerate float rounding.
_EPSILON = 1e-9


@dataclass(frozen=True)
class ReviewScores:
    comprehensiveness: int
    sets: tuple[tuple[int, int], ...]  # (sufficiency, compactness) per set, in set order


@dataclass(frozen=True)
class Thresholds:
    sufficiency: float = 8 / 3
    compactness: float = 11 / 3
    comprehensiveness: float = 8 / 3


@dataclass(frozen=True)
class Verdict:
    outcome: str
    means: dict
    failed: list[str]


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def property_means(reviews: list[ReviewScores]) -> dict:
    """Per property, the mean over reviewers; for the set properties, the lowest set's
    mean (every set must pass) and each set's mean under `sets`. With no sets,
    sufficiency and compactness are None: an empty rationale cannot pass."""
    if not reviews:
        raise ValueError("a verdict needs at least one review")
    n_sets = len(reviews[0].sets)
    if any(len(r.sets) != n_sets for r in reviews):
        raise ValueError("every review must score the same rationale sets")
    per_set = [
        {
            SUFFICIENCY: _mean(r.sets[s][0] for r in reviews),
            COMPACTNESS: _mean(r.sets[s][1] for r in reviews),
        }
        for s in range(n_sets)
    ]
    return {
        SUFFICIENCY: min((s[SUFFICIENCY] for s in per_set), default=None),
        COMPACTNESS: min((s[COMPACTNESS] for s in per_set), default=None),
        COMPREHENSIVENESS: _mean(r.comprehensiveness for r in reviews),
        "sets": per_set,
    }


def verdict(
    reviews: list[ReviewScores], thresholds: Thresholds, *, round_number: int, max_rounds: int
) -> Verdict:
    means = property_means(reviews)
    failed = [
        name
        for name in PROPERTIES
        if means[name] is None or means[name] + _EPSILON < getattr(thresholds, name)
    ]
    if not failed:
        outcome = ACCEPTED
    elif round_number >= max_rounds:
        outcome = DISCARDED
    else:
        outcome = REVISE
    return Verdict(outcome=outcome, means=means, failed=failed)


def highlight_diff(previous: dict[str, set[int]], current: dict[str, set[int]]) -> dict:
    """Tokens added and removed between two rounds, per document (union over sets)."""
    diff = {}
    for docid in sorted(set(previous) | set(current)):
        before, after = previous.get(docid, set()), current.get(docid, set())
        added, removed = sorted(after - before), sorted(before - after)
        if added or removed:
            diff[docid] = {"added": added, "removed": removed}
    return diff
