"""Suggestions from a predictions file, and their pull on annotators, against figures
worked out by hand."""

import json

import pytest

from rationale_metrics.suggestions import (
    InstanceScores,
    SuggestionAnnotation,
    default_k,
    instance_scores_read,
    suggestion_pull,
    top_k_tokens,
)


def test_top_k_takes_the_best_scores_across_documents_ties_by_position():
    instance = InstanceScores(
        soft={"a": [0.1, 0.5, 0.5, 0.0], "b": [0.5, 0.9]}, hard={"a": [1], "b": [1]}
    )

    # 0.9 (b1), then the three 0.5s by document then position: a1, a2, b0.
    assert top_k_tokens(instance, 3) == [("a", 1), ("a", 2), ("b", 1)]
    assert top_k_tokens(instance, 4) == [("a", 1), ("a", 2), ("b", 0), ("b", 1)]


def test_a_document_without_soft_scores_offers_its_hard_rationale_after_scored_tokens():
    instance = InstanceScores(soft={"a": [0.2, 0.1]}, hard={"a": [], "b": [3, 4]})

    assert top_k_tokens(instance, 3) == [("a", 0), ("a", 1), ("b", 3)]


def test_instances_are_read_by_their_json_typed_id_and_k_defaults_to_the_hard_size():
    lines = [
        json.dumps(
            {
                "annotation_id": 7,
                "rationales": [
                    {
                        "docid": "d",
                        "hard_rationale_predictions": [{"start_token": 0, "end_token": 3}],
                        "soft_rationale_predictions": [0.3, 0.2, 0.1, 0.0],
                    }
                ],
            }
        ),
        "",
        json.dumps(
            {
                "annotation_id": "7",
                "rationales": [
                    {
                        "docid": "d",
                        "hard_rationale_predictions": [{"start_token": 1, "end_token": 2}],
                    }
                ],
            }
        ),
    ]

    instances = instance_scores_read(lines)

    assert set(instances) == {"7", '"7"'}
    assert instances['"7"'].hard == {"d": [1]}
    assert default_k(instances) == 2  # (3 + 1) / 2


def _a(item, variant, *tokens):
    return SuggestionAnnotation(item=item, variant=variant, tokens=frozenset(tokens))


# Two items; "shown" saw the suggestions, "plain" did not.
SUGGESTED = {1: frozenset({("a", 5), ("a", 6)}), 2: frozenset({("b", 5), ("b", 6)})}
ANNOTATIONS = [
    _a(1, "shown", ("a", 5), ("a", 6)),  # F1 vs suggestions 1
    _a(2, "shown", ("b", 5)),  # 2*1/(1+2) = 2/3
    _a(1, "plain", ("a", 0), ("a", 1)),  # 0
    _a(2, "plain", ("b", 5), ("b", 6), ("b", 7)),  # 2*2/(3+2) = 0.8
]


def test_pull_against_a_hand_computation():
    figures = suggestion_pull(ANNOTATIONS, SUGGESTED, with_suggestions="shown", permutations=20000)

    rows = {row["variant"]: row for row in figures["variants"]}
    assert rows["shown"]["f1_suggestions"] == pytest.approx((1 + 2 / 3) / 2)
    assert rows["plain"]["f1_suggestions"] == pytest.approx(0.4)
    # Against the other variant, item by item: 0 (item 1) and 2*1/(1+3) = 0.5 (item 2).
    assert rows["shown"]["f1_other_variants"] == pytest.approx(0.25)
    assert rows["plain"]["f1_other_variants"] == pytest.approx(0.25)
    # Resampling two values: the means are 2/3, 5/6 or 1; the 95 % interval spans them.
    assert rows["shown"]["f1_suggestions_ci"] == pytest.approx([2 / 3, 1])
    assert rows["shown"]["shows_suggestions"] and not rows["plain"]["shows_suggestions"]
    (test,) = figures["permutation_tests"]
    assert (test["a"], test["b"]) == ("shown", "plain")
    assert test["difference"] == pytest.approx(5 / 6 - 0.4)
    # Of the six ways to split {1, 2/3, 0, 0.8} in two pairs, four differ by at least
    # |5/6 - 0.4| in absolute value.
    assert test["p_value"] == pytest.approx(4 / 6, abs=0.02)


def test_items_without_suggestions_and_lone_variants_are_left_out():
    figures = suggestion_pull(
        [*ANNOTATIONS, _a(3, "plain", ("c", 1))],
        SUGGESTED,
        with_suggestions="shown",
        permutations=100,
    )

    plain = next(row for row in figures["variants"] if row["variant"] == "plain")
    assert plain["annotations"] == 2  # item 3 has no suggestions
    assert plain["other_variant_annotations"] == 2  # nobody else annotated item 3


def test_a_variant_with_no_annotations_has_no_figures():
    figures = suggestion_pull([], SUGGESTED, with_suggestions="shown", permutations=10)

    (row,) = figures["variants"]
    assert row["f1_suggestions"] is None and row["f1_suggestions_ci"] is None
    assert figures["permutation_tests"] == []
