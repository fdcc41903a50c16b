"""The automatic quality checks as plain functions over plain data (no ORM).

A submission is described by the item's token texts (documents concatenated in order),
the highlighted token positions in that sequence and the seconds spent. The checks follow
the junk shapes crowd studies report: nothing highlighted, implausibly fast work, mostly
stop words or punctuation, only the first few tokens, and disagreement with the others
who annotated the same item.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from rationale_metrics.stop_words import StopWordRule, is_punctuation

EMPTY = "empty"
TOO_FAST = "too_fast"
STOPWORDS = "stopwords"
FIRST_TOKENS = "first_tokens"
LOW_AGREEMENT = "low_agreement"


@dataclass(frozen=True)
class FlagThresholds:
    min_seconds: float = 10
    max_stopword_share: float = 0.6
    first_k_tokens: int = 3
    min_coannotator_kappa: float = 0.1


@dataclass(frozen=True)
class Flag:
    kind: str
    value: float | None
    detail: str


def stopword_share(
    token_texts: list[str], chosen: set[int], stop_words: StopWordRule
) -> float | None:
    """Share of the highlighted tokens that are stop words or punctuation; None if empty."""
    if not chosen:
        return None
    stop = stop_words.mask(token_texts)
    junk = sum(1 for i in chosen if stop[i] or is_punctuation(token_texts[i]))
    return junk / len(chosen)


def submission_flags(
    *,
    token_texts: list[str],
    chosen: set[int],
    seconds: float,
    stop_words: StopWordRule,
    thresholds: FlagThresholds,
) -> list[Flag]:
    flags = []
    if not chosen:
        flags.append(Flag(EMPTY, 0, "nothing highlighted"))
    if seconds < thresholds.min_seconds:
        flags.append(
            Flag(
                TOO_FAST,
                seconds,
                f"{seconds:.1f} s, under the {thresholds.min_seconds:g} s minimum",
            )
        )
    share = stopword_share(token_texts, chosen, stop_words)
    if share is not None and share > thresholds.max_stopword_share:
        flags.append(
            Flag(
                STOPWORDS,
                share,
                f"{share:.0%} of the highlighted tokens are stop words or punctuation "
                f"(limit {thresholds.max_stopword_share:.0%})",
            )
        )
    k = thresholds.first_k_tokens
    # Only meaningful when the text is clearly longer than the k tokens.
    if k and chosen and max(chosen) < k and len(token_texts) > 2 * k:
        flags.append(
            Flag(
                FIRST_TOKENS, float(max(chosen) + 1), f"only tokens among the first {k} highlighted"
            )
        )
    return flags


def low_agreement_flag(kappa: float | None, thresholds: FlagThresholds) -> Flag | None:
    """Raised once there are co-annotators and the mean kappa with them is defined."""
    if kappa is None or kappa >= thresholds.min_coannotator_kappa:
        return None
    return Flag(
        LOW_AGREEMENT,
        kappa,
        f"mean kappa {kappa:.2f} with co-annotators, under {thresholds.min_coannotator_kappa:g}",
    )


# ---------------------------------------------------------------- per-worker aggregates


@dataclass(frozen=True)
class WorkerLimits:
    """Warn and block thresholds on a worker's aggregates; None disables one."""

    min_annotations: int = 5
    warn_median_seconds: float | None = 15
    block_median_seconds: float | None = 5
    warn_empty_rate: float | None = 0.1
    block_empty_rate: float | None = 0.3
    warn_stopword_share: float | None = 0.4
    block_stopword_share: float | None = 0.7
    warn_majority_kappa: float | None = 0.3
    block_majority_kappa: float | None = 0.0


@dataclass(frozen=True)
class WorkerFigures:
    """A worker's recent submissions, a column per figure (one entry per submission):
    columns, because a worker's standing reads up to a few hundred submissions, and a
    column comes from the database as one array."""

    highlighted: Sequence[int]
    seconds: Sequence[float]
    stopword_share: Sequence[float | None]
    majority_kappa: Sequence[float | None]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def worker_aggregates(figures: WorkerFigures) -> dict:
    """Median seconds, empty rate, mean stop-word share (non-empty submissions) and mean
    kappa against the majority (where defined)."""
    count = len(figures.seconds)
    if not count:
        return {"annotations": 0}
    return {
        "annotations": count,
        "median_seconds": median(figures.seconds),
        "empty_rate": sum(1 for highlighted in figures.highlighted if highlighted == 0) / count,
        "stopword_share": _mean([v for v in figures.stopword_share if v is not None]),
        "majority_kappa": _mean([v for v in figures.majority_kappa if v is not None]),
    }


def _crossed(value, limit, *, below: bool) -> bool:
    if value is None or limit is None:
        return False
    return value < limit if below else value > limit


def worker_assessment(aggregates: dict, limits: WorkerLimits) -> tuple[list[str], list[str]]:
    """(warnings, reasons to block) for a worker's aggregates; nothing before
    `min_annotations` submissions, so one bad item does not condemn anyone."""
    if aggregates.get("annotations", 0) < limits.min_annotations:
        return [], []
    checks = [
        (
            "median_seconds",
            "median time {v:.1f} s is under {t:g} s",
            True,
            limits.warn_median_seconds,
            limits.block_median_seconds,
        ),
        (
            "empty_rate",
            "empty rate {v:.0%} is over {t:.0%}",
            False,
            limits.warn_empty_rate,
            limits.block_empty_rate,
        ),
        (
            "stopword_share",
            "stop-word share {v:.0%} is over {t:.0%}",
            False,
            limits.warn_stopword_share,
            limits.block_stopword_share,
        ),
        (
            "majority_kappa",
            "kappa with the majority {v:.2f} is under {t:g}",
            True,
            limits.warn_majority_kappa,
            limits.block_majority_kappa,
        ),
    ]
    warnings, blocks = [], []
    for key, message, below, warn, block in checks:
        value = aggregates.get(key)
        if _crossed(value, block, below=below):
            blocks.append(message.format(v=value, t=block))
        elif _crossed(value, warn, below=below):
            warnings.append(message.format(v=value, t=warn))
    return warnings, blocks
