"""Every number the ERASER reference scorer wrote for the shared slices, reproduced to 1e-9."""

import json
import math

import pytest

from rationale_metrics.predictions import read_predictions
from rationale_metrics.scoring import ScoreOptions, score_predictions
from tests.conftest import SHARED_REFERENCE

SCORE_FILES = sorted(SHARED_REFERENCE.glob("*/scores/*.json")) if SHARED_REFERENCE.is_dir() else []


def leaves(value, path=""):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from leaves(inner, f"{path}[{i}]")
    else:
        yield path, value


def lookup(scores, path):
    node = scores
    for part in path.replace("[", ".[").split(".")[1:]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


@pytest.mark.skipif(
    not SCORE_FILES, reason=f"shared reference data not found at {SHARED_REFERENCE}"
)
@pytest.mark.parametrize("score_file", SCORE_FILES, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
def test_every_reference_number_is_reproduced(score_file, load_dataset):
    slice_dir = score_file.parents[1]
    dataset = load_dataset(slice_dir / "data")
    predictions = read_predictions(
        slice_dir / "preds" / f"{score_file.stem}.jsonl", dataset=dataset, split="val"
    )

    ours = score_predictions(dataset, "val", predictions, ScoreOptions())
    reference = json.loads(score_file.read_text())

    assert set(reference) <= set(ours)
    compared = 0
    for path, expected in leaves(reference):
        actual = lookup(ours, path)
        if isinstance(expected, int | float) and not isinstance(expected, bool):
            assert math.isclose(actual, expected, rel_tol=0, abs_tol=1e-9), path
            compared += 1
        else:
            assert actual == expected, path
    assert compared > 0


@pytest.mark.skipif(
    not SCORE_FILES, reason=f"shared reference data not found at {SHARED_REFERENCE}"
)
def test_without_extensions_only_the_reference_keys_are_written(load_dataset):
    dataset = load_dataset(SHARED_REFERENCE / "movies" / "data")
    predictions = read_predictions(
        SHARED_REFERENCE / "movies" / "preds" / "random.jsonl", dataset=dataset, split="val"
    )
    reference = json.loads((SHARED_REFERENCE / "movies" / "scores" / "random.json").read_text())

    ours = score_predictions(dataset, "val", predictions, ScoreOptions(extensions=False))

    assert set(ours) == set(reference)
