"""Predictions and dataset readers: every problem in one pass, with line and field; fuzzed."""

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rationale_metrics import predictions as predictions_module
from rationale_metrics.eraser import read_eraser_dataset
from rationale_metrics.predictions import read_predictions
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.sources import DirectorySource
from tests.annotate.test_import_bad_input import instance, write_dataset
from tests.hypothesis_budget import examples


@pytest.fixture
def dataset(tmp_path):
    root = write_dataset(
        tmp_path / "ds",
        {
            "train": [
                json.dumps(instance("a1")),
                json.dumps(instance(7, "d2", classification="NEG")),
            ],
            "val": [],
            "test": [],
        },
    )
    return read_eraser_dataset(DirectorySource(root))


def prediction(aid, docid="d1", **overrides):
    line = {
        "annotation_id": aid,
        "rationales": [
            {"docid": docid, "hard_rationale_predictions": [{"start_token": 0, "end_token": 2}]}
        ],
    }
    line.update(overrides)
    return line


def problems(tmp_path, dataset, lines, **kwargs):
    path = tmp_path / "preds.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    with pytest.raises(DataValidationError) as caught:
        read_predictions(path, dataset=dataset, split="train", **kwargs)
    return [(p.line, p.field, p.message) for p in caught.value.problems]


def test_a_valid_file_reads(tmp_path, dataset):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(prediction("a1")) + "\n" + json.dumps(prediction(7, "d2")) + "\n")

    assert len(read_predictions(path, dataset=dataset, split="train")) == 2


def test_every_listed_problem_is_reported_in_one_pass(tmp_path, dataset):
    soft = {"docid": "d1", "soft_rationale_predictions": [0.5] * 3}
    found = problems(
        tmp_path,
        dataset,
        [
            prediction("a1"),
            prediction("a1"),  # duplicate
            prediction(7, "zz"),  # unknown docid
            prediction("7"),  # id type mismatch
            {
                "annotation_id": "a1x",
                "rationales": [
                    {
                        "docid": "d1",
                        "hard_rationale_predictions": [{"start_token": 5, "end_token": 99}],
                    }
                ],
            },
            {
                "annotation_id": "a1y",
                "rationales": [
                    {
                        "docid": "d1",
                        "hard_rationale_predictions": [
                            {"start_token": 0, "end_token": 3},
                            {"start_token": 2, "end_token": 4},
                        ],
                    }
                ],
            },
            {"annotation_id": "a1z", "rationales": [soft]},
            "{broken",
        ],
    )

    lines = {line: (field, message) for line, field, message in found}
    assert "duplicate annotation_id" in lines[2][1]
    assert lines[3] == ("rationales[0].docid", "unknown docid 'zz'")
    assert "type mismatch" in lines[4][1]
    assert lines[5][0] == "rationales[0].hard_rationale_predictions[0]"
    assert "overlap" in lines[6][1]
    assert lines[7][0] == "rationales[0].soft_rationale_predictions"
    assert "has 3 scores, but the document has 9" in lines[7][1]
    assert "malformed JSON" in lines[8][1]


def test_labels_not_in_the_dataset_and_missing_thresholds(tmp_path, dataset):
    scores = {"POS": 0.6, "NEG": 0.4}
    line = prediction(
        "a1",
        classification="MAYBE",
        classification_scores=scores,
        comprehensiveness_classification_scores=scores,
        sufficiency_classification_scores=scores,
        thresholded_scores=[
            {
                "threshold": 0.01,
                "comprehensiveness_classification_scores": scores,
                "sufficiency_classification_scores": scores,
            }
        ],
    )

    found = problems(tmp_path, dataset, [line], aopc_thresholds=[0.01, 0.05])

    assert [f for _, f, _ in found] == ["classification", "thresholded_scores"]
    assert "missing threshold(s) [0.05]" in found[1][2]


def test_optional_fields_are_on_every_line_or_none(tmp_path, dataset):
    found = problems(
        tmp_path, dataset, [prediction("a1", classification="POS"), prediction(7, "d2")]
    )

    assert found == [
        (2, "classification", "present on 1 of 2 lines: give it on every line or none")
    ]


def test_nan_is_refused_naming_its_field(tmp_path, dataset):
    found = problems(
        tmp_path,
        dataset,
        ['{"annotation_id": "a1", "rationales": [], "classification_scores": {"POS": NaN}}'],
    )

    assert found == [
        (
            1,
            "classification_scores.POS",
            "must be a finite number, got NaN, which JSON does not have (strict parsers refuse it)",
        )
    ]


def test_cli_exits_non_zero_with_a_readable_message(tmp_path, dataset):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[1]\n")
    root = tmp_path / "ds"

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rationale_metrics",
            "validate",
            "--data_dir",
            str(root),
            "--split",
            "train",
            "--results",
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 2
    assert "bad.jsonl:1: expected a JSON object, got list" in result.stderr
    assert "Traceback" not in result.stderr


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
keys = st.sampled_from(
    [
        "annotation_id",
        "rationales",
        "classification",
        "classification_scores",
        "thresholded_scores",
        "docid",
        "hard_rationale_predictions",
        "soft_rationale_predictions",
        "start_token",
        "end_token",
        "evidences",
        "extra",
    ]
)
records = st.dictionaries(keys, json_values, max_size=6)


def raw_line(record, cut):
    text = json.dumps(record, allow_nan=True)
    return text[: cut % (len(text) + 1)] if cut else text


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(st.tuples(records, st.integers(min_value=0, max_value=200)), max_size=6),
    st.integers(0, 60),
)
def test_fuzzed_prediction_files_never_crash(tmp_path, dataset, lines, depth):
    path = tmp_path / "fuzz.jsonl"
    nested = "[" * depth + "]" * depth
    path.write_text("\n".join([raw_line(r, cut) for r, cut in lines] + [nested]) + "\n")

    try:
        read_predictions(path, dataset=dataset, split="train")
    except DataValidationError as exc:
        assert all(p.line is None or p.line >= 1 for p in exc.problems)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(st.tuples(records, st.integers(min_value=0, max_value=200)), min_size=1, max_size=5)
)
def test_fuzzed_split_files_never_crash(tmp_path_factory, lines):
    root = write_dataset(
        tmp_path_factory.mktemp("fz") / "ds", {"train": [raw_line(r, cut) for r, cut in lines]}
    )

    try:
        read_eraser_dataset(DirectorySource(root))
    except DataValidationError as exc:
        assert exc.problems


def test_deeply_nested_line_is_a_named_problem(tmp_path, dataset):
    found = problems(tmp_path, dataset, ["[" * 100_000 + "]" * 100_000])

    assert found[0][0] == 1


def test_the_package_never_imports_django():
    modules = "rationale_metrics.cli, rationale_metrics.scoring, rationale_metrics.explain, rationale_metrics.agreement"
    code = f"import sys, {modules}; print('django' in sys.modules)"

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )

    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize("enabled", [True, False])
def test_reading_leaves_the_garbage_collector_as_it_found_it(tmp_path, dataset, enabled):
    import gc

    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text(json.dumps(prediction("a1")) + "\n")
    bad.write_text("{broken\n")
    (gc.enable if enabled else gc.disable)()
    try:
        read_predictions(good, dataset=dataset, split="train")
        with pytest.raises(DataValidationError):
            read_predictions(bad, dataset=dataset, split="train")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


@pytest.mark.parametrize("with_a_bad_line", [False, True], ids=["column-wise", "line-by-line"])
@pytest.mark.parametrize(
    "given",
    [
        {"classification": "POS"},
        {"classification": "POS", "comprehensiveness_classification_scores": {"POS": 0.5}},
    ],
    ids=["classification", "with-comprehensiveness"],
)
def test_classification_without_classification_scores_is_refused(
    tmp_path, dataset, given, with_a_bad_line
):
    lines = [prediction("a1", **given), prediction(7, "d2", **given)]
    if with_a_bad_line:
        lines.append("[1]")

    found = problems(tmp_path, dataset, lines)

    [(line, message)] = [(p[0], p[2]) for p in found if p[1] == "classification_scores"]
    assert line == 1
    assert "missing on every line" in message
    assert "the reference scorer refuses" in message
    assert "--plausibility_only" in message
    others = [p for p in found if p[1] != "classification_scores"]
    assert others == ([(3, None, "expected a JSON object, got list")] if with_a_bad_line else [])


def test_classification_scores_without_classification_is_refused(tmp_path, dataset):
    scores = {"POS": 0.6, "NEG": 0.4}
    lines = [
        prediction("a1", classification_scores=scores),
        prediction(7, "d2", classification_scores=scores),
    ]

    [(line, field, message)] = problems(tmp_path, dataset, lines)

    assert (line, field) == (1, "classification")
    assert "missing on every line" in message


def test_plausibility_only_reads_the_rationales_and_leaves_classification_out(tmp_path, dataset):
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps(prediction("a1", classification="POS"))
        + "\n"
        + json.dumps(prediction(7, "d2", classification="NEG"))
        + "\n"
    )

    table = read_predictions(path, dataset=dataset, split="train", plausibility_only=True)

    assert len(table) == 2
    assert table.hard is not None
    assert table.classification is None
    assert table.classification_scores is None


def _scored(aid, docid, scores, comprehensiveness, thresholds=()):
    return prediction(
        aid,
        docid,
        classification="POS",
        classification_scores=scores,
        comprehensiveness_classification_scores=comprehensiveness,
        thresholded_scores=[
            {
                "threshold": t,
                "comprehensiveness_classification_scores": comp,
                "sufficiency_classification_scores": {"POS": 0.5, "NEG": 0.5},
            }
            for t, comp in thresholds
        ],
    )


PROBABILITY_LINES = [
    _scored("a1", "d1", {"POS": 0.7, "NEG": 0.3}, {"POS": 0.4, "NEG": 0.6}, [(0.5, {"POS": 0.5})]),
    _scored(7, "d2", {"POS": 1.2, "NEG": -0.2}, {"POS": 0.4, "NEG": 0.5}, [(0.5, {"POS": 2})]),
]
PROBABILITY_PROBLEMS = [
    (1, "thresholded_scores[threshold=0.5].comprehensiveness_classification_scores", "0.5,"),
    (2, "classification_scores.NEG", "is -0.2, outside [0, 1]: not a class probability"),
    (2, "comprehensiveness_classification_scores", "sum to 0.9, not 1 (within 0.01)"),
    (2, "thresholded_scores[threshold=0.5].comprehensiveness_classification_scores.POS", "is 2"),
]


@pytest.mark.parametrize("reader", ["column-wise", "line by line"])
def test_scores_that_are_not_probabilities_are_warnings_or_with_strict_errors(
    tmp_path, dataset, monkeypatch, reader
):
    """Both readers find the same problems, with file, line and field."""
    if reader == "line by line":
        monkeypatch.setattr(predictions_module, "_read_columns", lambda *args: None)
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in PROBABILITY_LINES))
    warnings = ProblemList()

    table = read_predictions(
        path, dataset=dataset, split="train", aopc_thresholds=[0.5], warnings=warnings
    )
    with pytest.raises(DataValidationError) as caught:
        read_predictions(path, dataset=dataset, split="train", aopc_thresholds=[0.5], strict=True)

    assert table.classification_scores[1].tolist() == [-0.2, 1.2]  # scored as given
    for found in (warnings, caught.value.problems):
        assert [(p.file, p.line, p.field) for p in found] == [
            ("preds.jsonl", line, field) for line, field, _ in PROBABILITY_PROBLEMS
        ]
        for problem, (_, _, words) in zip(found, PROBABILITY_PROBLEMS, strict=True):
            assert words in problem.message
    assert all(p.message.endswith("(scored as given; an error with --strict)") for p in warnings)


def test_a_float32_rounding_past_1_is_no_problem(tmp_path, dataset):
    path = tmp_path / "preds.jsonl"
    line = _scored("a1", "d1", {"POS": 1.0000001, "NEG": 0.0}, {"POS": 0.5, "NEG": 0.5})
    path.write_text(json.dumps(line) + "\n")
    warnings = ProblemList()

    read_predictions(path, dataset=dataset, split="train", strict=False, warnings=warnings)

    assert warnings == []


def test_plausibility_only_leaves_the_probabilities_unchecked(tmp_path, dataset):
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in PROBABILITY_LINES))

    table = read_predictions(
        path, dataset=dataset, split="train", strict=True, plausibility_only=True
    )

    assert len(table) == 2


GOOD_LINE = json.dumps(prediction(7, "d2"))
BROKEN_LINES = {
    "truncated": (
        json.dumps(prediction("a1"))[:-5].encode(),
        "malformed JSON: unexpected end of data: line 2 column 1 (char 120)",
    ),
    "NaN": (
        b'{"annotation_id": "a1", "rationales": [{"docid": "d1", '
        b'"soft_rationale_predictions": [0.5, NaN]}]}',
        "rationales[0].soft_rationale_predictions[1]",
        "must be a finite number, got NaN, which JSON does not have (strict parsers refuse it)",
    ),
    "Infinity": (
        b'{"annotation_id": "a1", "rationales": [], "classification_scores": {"POS": Infinity}}',
        "classification_scores.POS",
        "must be a finite number, got Infinity, which JSON does not have (strict parsers "
        "refuse it)",
    ),
    "out of range": (
        b'{"annotation_id": "a1", "rationales": [], "classification_scores": {"POS": 1e400}}',
        "classification_scores.POS",
        "must be a finite number, got 1e400, which is out of the range of a double",
    ),
    "not UTF-8": (
        json.dumps(prediction("a1")).replace('"a1"', '"a\xe91"').encode("latin-1"),
        "not valid UTF-8: byte 21 of the line is 0xE9 (invalid continuation byte); "
        "save the file as UTF-8",
    ),
    "content after the object": (
        json.dumps(prediction("a1")).encode() + b" x",
        "malformed JSON: unexpected content after document: line 1 column 126 (char 125)",
    ),
}


@pytest.mark.parametrize("case", BROKEN_LINES)
def test_a_broken_line_among_good_ones_is_named_with_its_line_and_what_is_wrong(
    tmp_path, dataset, case
):
    # The good lines alone would be read column-wise by msgspec; the broken one sends the
    # file to the line-by-line reader, whose words these are. Bytes that are not UTF-8
    # made msgspec raise UnicodeDecodeError, which ended the reading without a line.
    broken, *where, message = BROKEN_LINES[case]
    path = tmp_path / "preds.jsonl"
    path.write_bytes(GOOD_LINE.encode() + b"\n" + broken + b"\n")

    with pytest.raises(DataValidationError) as caught:
        read_predictions(path, dataset=dataset, split="train")

    assert [(p.file, p.line, p.field, p.message) for p in caught.value.problems] == [
        ("preds.jsonl", 2, where[0] if where else None, message)
    ]


@pytest.mark.parametrize(
    "first_line",
    [
        b"\xef\xbb\xbf" + json.dumps(prediction("a1")).encode(),  # a UTF-8 byte-order mark
        json.dumps(prediction("a1"))[:-1].encode() + b', "annotation_id": "a1"}',  # twice
    ],
    ids=["byte-order mark", "duplicate key"],
)
def test_the_column_reader_and_the_line_reader_read_a_file_alike(
    tmp_path, dataset, monkeypatch, first_line
):
    path = tmp_path / "preds.jsonl"
    path.write_bytes(first_line + b"\n" + GOOD_LINE.encode() + b"\n")

    either = read_predictions(path, dataset=dataset, split="train")
    monkeypatch.setattr(predictions_module, "_read_columns", lambda *args: None)
    line_by_line = read_predictions(path, dataset=dataset, split="train")

    for table in (either, line_by_line):
        assert table.annotation_ids == ["a1", 7]
        assert table.hard.start.tolist() == [0, 0] and table.hard.end.tolist() == [2, 2]
