"""Scoring in chunks of lines gives the one-process scorer's numbers, bit for bit, for any
cut into chunks: each chunk computes its keys' soft figures, the assembly takes the means."""

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rationale_metrics.predictions import read_predictions
from rationale_metrics.scoring import (
    ScoreOptions,
    score_predictions,
    soft_per_key_joined,
    soft_per_key_of_lines,
)
from tests.conftest import SHARED_REFERENCE
from tests.hypothesis_budget import examples

PREDICTION_FILES = sorted(SHARED_REFERENCE.glob("*/preds/*.jsonl"))


def as_json(scores: dict) -> str:
    return json.dumps(scores, sort_keys=True)


def scored_in_chunks(dataset, predictions, cuts, options=None) -> dict:
    lines = len(predictions)
    bounds = sorted({0, lines, *(c for c in cuts if 0 < c < lines)})
    parts = [
        soft_per_key_of_lines(dataset, "val", predictions, start, stop)
        for start, stop in itertools.pairwise(bounds)
    ]
    return score_predictions(
        dataset, "val", predictions, options, soft_per_key=soft_per_key_joined(parts)
    )


@pytest.fixture
def reference_cases(eraser_reference, load_dataset):
    cases = []
    for path in PREDICTION_FILES:
        dataset = load_dataset(path.parents[1] / "data")
        predictions = read_predictions(path, dataset=dataset, split="val")
        whole = as_json(score_predictions(dataset, "val", predictions))
        cases.append((path, dataset, predictions, whole))
    return cases


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(cuts=st.lists(st.integers(min_value=0, max_value=210), max_size=8))
def test_any_chunking_of_the_reference_predictions_gives_the_one_process_scores(
    reference_cases, cuts
):
    for path, dataset, predictions, whole in reference_cases:
        assert as_json(scored_in_chunks(dataset, predictions, cuts)) == whole, path.name


def test_one_line_per_chunk_gives_the_one_process_scores_without_extensions(reference_cases):
    options = ScoreOptions(extensions=False)
    for path, dataset, predictions, _ in reference_cases:
        lines = len(predictions)
        whole = as_json(score_predictions(dataset, "val", predictions, options))
        chunked = scored_in_chunks(dataset, predictions, range(lines), options)
        assert as_json(chunked) == whole, path.name


def test_soft_figures_are_a_chunk_part_only_for_files_that_give_soft_scores(reference_cases):
    kinds = {
        path.name: set(soft_per_key_of_lines(dataset, "val", predictions, 0, 10**6))
        for path, dataset, predictions, _ in reference_cases
    }
    assert kinds["random.jsonl"] == {"token", "sentence"}
    assert kinds["oracle_hard_only.jsonl"] == set()


def test_parts_that_miss_keys_are_refused_by_name(reference_cases):
    _, dataset, predictions, _ = next(c for c in reference_cases if c[0].name == "random.jsonl")
    lines = len(predictions)
    first_half = soft_per_key_of_lines(dataset, "val", predictions, 0, lines // 2)

    with pytest.raises(ValueError, match="the chunks give token figures for"):
        score_predictions(dataset, "val", predictions, soft_per_key=first_half)


def test_joining_no_parts_gives_no_figures():
    assert soft_per_key_joined([]) == {}
    one = {"token": (np.array([0.5]), np.array([np.nan]), np.array([np.nan]))}
    joined = soft_per_key_joined([one, one])
    assert [len(a) for a in joined["token"]] == [2, 2, 2]
