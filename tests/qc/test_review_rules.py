"""The verdict: mean over reviewers per property, against 8/3, 11/3 and 8/3."""

import pytest

from qc.review_rules import (
    ACCEPTED,
    DISCARDED,
    REVISE,
    ReviewScores,
    Thresholds,
    highlight_diff,
    property_means,
    verdict,
)


def scores(*reviews):
    return [ReviewScores(comprehensiveness=c, sets=tuple(sets)) for c, sets in reviews]


def test_two_of_three_top_scores_pass_the_default_thresholds_exactly():
    # Sufficiency 3, 3, 2 has mean 8/3; compactness 4, 4, 3 has mean 11/3.
    reviews = scores((3, [(3, 4)]), (3, [(3, 4)]), (2, [(2, 3)]))
    result = verdict(reviews, Thresholds(), round_number=1, max_rounds=3)
    assert result.outcome == ACCEPTED and result.failed == []


def test_one_not_sure_in_three_fails_compactness():
    reviews = scores((3, [(3, 4)]), (3, [(3, 3)]), (3, [(3, 3)]))  # compactness mean 10/3
    result = verdict(reviews, Thresholds(), round_number=1, max_rounds=3)
    assert result.outcome == REVISE and result.failed == ["compactness"]


def test_every_set_must_pass():
    reviews = scores((3, [(3, 4), (1, 4)]), (3, [(3, 4), (3, 4)]))
    means = property_means(reviews)
    assert means["sufficiency"] == 2.0 and means["sets"][0]["sufficiency"] == 3.0
    assert verdict(reviews, Thresholds(), round_number=1, max_rounds=3).failed == ["sufficiency"]


def test_an_empty_rationale_cannot_pass():
    result = verdict(scores((3, []), (3, [])), Thresholds(), round_number=1, max_rounds=3)
    assert result.failed == ["sufficiency", "compactness"]


def test_the_last_round_discards_instead_of_revising():
    failing = scores((1, [(1, 1)]), (1, [(1, 1)]))
    assert verdict(failing, Thresholds(), round_number=2, max_rounds=3).outcome == REVISE
    assert verdict(failing, Thresholds(), round_number=3, max_rounds=3).outcome == DISCARDED


def test_reviews_must_score_the_same_sets():
    with pytest.raises(ValueError, match="same rationale sets"):
        property_means(scores((3, [(3, 4)]), (3, [])))


def test_highlight_diff_between_rounds():
    assert highlight_diff({"d": {1, 2, 3}}, {"d": {2, 3, 4}, "e": {0}}) == {
        "d": {"added": [4], "removed": [1]},
        "e": {"added": [0], "removed": []},
    }
