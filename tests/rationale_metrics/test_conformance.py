"""Every number the ERASER reference scorer wrote for the shared slices, reproduced to 1e-9."""

import json
import math

import pytest

from rationale_metrics.predictions import read_predictions
from rationale_metrics.scoring import ScoreOptions, score_predictions
from tests.conftest import SHARED_REFERENCE, skip_or_fail

# With no reference scores found, one case stands in: it skips, or fails in CI.
SCORE_FILES = sorted(SHARED_REFERENCE.glob("*/scores/*.json")) or [None]


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


@pytest.mark.parametrize(
    "score_file", SCORE_FILES, ids=lambda p: f"{p.parts[-3]}/{p.stem}" if p else "no-scores"
)
def test_every_reference_number_is_reproduced(score_file, eraser_reference, load_dataset):
    if score_file is None:
        skip_or_fail(f"no reference scores (*/scores/*.json) under {eraser_reference}")
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


def test_without_extensions_only_the_reference_keys_are_written(eraser_reference, load_dataset):
    movies = eraser_reference / "movies"
    dataset = load_dataset(movies / "data")
    predictions = read_predictions(movies / "preds" / "random.jsonl", dataset=dataset, split="val")
    reference = json.loads((movies / "scores" / "random.json").read_text())

    ours = score_predictions(dataset, "val", predictions, ScoreOptions(extensions=False))

    assert set(ours) == set(reference)
