"""Each automatic flag, and the per-worker limits, on plain data."""

import pytest

from qc.flag_rules import (
    EMPTY,
    FIRST_TOKENS,
    STOPWORDS,
    TOO_FAST,
    FlagThresholds,
    WorkerFigures,
    WorkerLimits,
    low_agreement_flag,
    stopword_share,
    submission_flags,
    worker_aggregates,
    worker_assessment,
)
from rationale_metrics.stop_words import StopWordRule

TEXT = [
    "the",
    "film",
    "is",
    "a",
    "quiet",
    ",",
    "moving",
    "and",
    "wonderful",
    "portrait",
    "of",
    "grief",
    ".",
]
STOP = StopWordRule(frozenset({"the", "is", "a", "and", "of"}))
LIMITS = FlagThresholds(min_seconds=10, max_stopword_share=0.6, first_k_tokens=3)


def kinds(chosen, seconds=30.0, text=TEXT):
    flags = submission_flags(
        token_texts=text, chosen=chosen, seconds=seconds, stop_words=STOP, thresholds=LIMITS
    )
    return {f.kind for f in flags}


def test_a_good_submission_raises_no_flag():
    assert kinds({6, 8}) == set()  # "moving", "wonderful"


def test_empty():
    assert kinds(set()) == {EMPTY}


def test_faster_than_the_project_minimum():
    assert kinds({6, 8}, seconds=9.9) == {TOO_FAST}
    assert kinds({6, 8}, seconds=10) == set()


def test_stop_words_and_punctuation_share_above_the_threshold():
    # "the", "is", ",", "wonderful": three of four are stop words or punctuation.
    assert stopword_share(TEXT, {0, 2, 5, 8}, STOP) == 0.75
    assert STOPWORDS in kinds({0, 2, 5, 8})
    assert STOPWORDS not in kinds({2, 8})  # one of two: 50 % is under 60 %


def test_only_the_first_k_tokens():
    assert kinds({0, 1}) == {FIRST_TOKENS}
    assert FIRST_TOKENS in kinds({1})
    assert FIRST_TOKENS not in kinds({1, 3})
    # A text of at most 2k tokens makes the first tokens a plausible answer.
    assert FIRST_TOKENS not in kinds({1}, text=TEXT[:6])


def test_low_agreement_only_when_defined_and_under_the_threshold():
    assert low_agreement_flag(None, LIMITS) is None
    assert low_agreement_flag(0.5, LIMITS) is None
    flag = low_agreement_flag(-0.2, LIMITS)
    assert flag.kind == "low_agreement" and flag.value == -0.2


def test_worker_aggregates_by_hand():
    figures = WorkerFigures(
        highlighted=[3, 0, 5, 2],
        seconds=[20, 4, 30, 10],
        stopword_share=[0.0, None, 0.4, 0.2],
        majority_kappa=[0.8, None, 0.4, None],
    )
    aggregates = worker_aggregates(figures)

    assert aggregates["annotations"] == 4
    assert aggregates["median_seconds"] == 15
    assert aggregates["empty_rate"] == 0.25
    assert aggregates["stopword_share"] == pytest.approx(0.2)
    assert aggregates["majority_kappa"] == pytest.approx(0.6)


def test_worker_limits_warn_then_block_and_wait_for_enough_work():
    limits = WorkerLimits(min_annotations=5)
    careless = {
        "annotations": 6,
        "median_seconds": 3.0,
        "empty_rate": 0.2,
        "stopword_share": 0.1,
        "majority_kappa": 0.5,
    }
    warnings, blocks = worker_assessment(careless, limits)
    assert blocks == ["median time 3.0 s is under 5 s"]
    assert warnings == ["empty rate 20% is over 10%"]
    assert worker_assessment({**careless, "annotations": 4}, limits) == ([], [])
    careful = {**careless, "median_seconds": 40.0, "empty_rate": 0.0}
    assert worker_assessment(careful, limits) == ([], [])
