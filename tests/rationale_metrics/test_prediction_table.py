"""The column-wise predictions reader agrees with the line-by-line validator.

`read_predictions` first tries `_read_uniform` (typed decoding, checks on whole columns)
and falls back to `_read_rows` (every line on its own, every problem named). These tests
hold the first to the second: on valid files both build the same table, and on files
with a defect the first never returns a table where the second finds a problem.
"""

import contextlib
import io
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rationale_metrics import predictions as reader
from rationale_metrics.eraser import EraserDataset, Evidence, Instance, document_from_jsonl_text
from rationale_metrics.prediction_table import PredictionTable, table_from_rows
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.scoring import score_predictions
from tests.hypothesis_budget import examples

_read_rows = reader._read_rows
LABELS = ["NEG", "NEU", "POS"]
THRESHOLDS = [0.01, 0.05, 0.1, 0.2, 0.5]
score_value = st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(-3, 3) | st.integers(-2, 2)
probability = st.floats(0.01, 1.0)


@st.composite
def datasets(draw) -> EraserDataset:
    documents = {}
    for d in range(draw(st.integers(1, 4))):
        sentence_lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
        text = "\n".join(
            " ".join(f"w{d}{s}{t}" for t in range(n)) for s, n in enumerate(sentence_lengths)
        )
        documents[f"d{d}"] = document_from_jsonl_text(f"d{d}", text)
    int_ids = draw(st.booleans())
    instances = []
    for i in range(draw(st.integers(1, 6))):
        docids = draw(
            st.lists(st.sampled_from(sorted(documents)), min_size=1, max_size=2, unique=True)
        )
        groups = []
        for _ in range(draw(st.integers(0, 3))):
            group = []
            for _ in range(draw(st.integers(1, 2))):
                docid = draw(st.sampled_from(docids))
                n = documents[docid].n_tokens
                start = draw(st.integers(0, n - 1))
                group.append(Evidence(docid, start, draw(st.integers(start, n)), 0, 1, "x"))
            groups.append(group)
        instances.append(
            Instance(
                annotation_id=i + 1 if int_ids else f"a{i}",
                classification=draw(st.sampled_from(LABELS)),
                docids=docids,
                evidences=groups,
                query=None,
                query_type=None,
                split="test",
                file="test.jsonl",
                line=i + 1,
            )
        )
    # One training instance per label, so that the dataset's labels are all of LABELS.
    train = [
        Instance(f"t{j}", label, ["d0"], [], None, None, "train", "train.jsonl", j + 1)
        for j, label in enumerate(LABELS)
    ]
    return EraserDataset(
        documents=documents,
        splits={"train": train, "val": [], "test": instances},
        docs_layout="docs.jsonl",
    )


def probabilities(draw, labels=LABELS) -> dict:
    return {label: draw(probability) for label in labels}


@st.composite
def valid_files(draw, *, unusual: bool = False):
    """A dataset and a valid predictions file for it, as a list of line objects.

    With `unusual`, lines may also differ in ways the line-by-line validator accepts but
    the column-wise reader does not take (score objects naming some labels only,
    thresholds in another order, extra keys on some rationales)."""
    dataset = draw(datasets())
    given_fields = draw(
        st.fixed_dictionaries(
            {
                name: st.booleans()
                for name in (
                    "hard",
                    "soft",
                    "sentences",
                    "classification",
                    "scores",
                    "aopc",
                    "flip",
                )
            }
        )
    )
    # A classification comes with its scores, and AOPC bins need both, as the reference has it.
    given_fields["scores"] = given_fields["classification"]
    given_fields["aopc"] = given_fields["aopc"] and given_fields["classification"]
    lines = []
    for inst in dataset.splits["test"]:
        if lines and not draw(st.booleans()):
            continue
        rationales = []
        for docid in draw(st.lists(st.sampled_from(inst.docids), max_size=2, unique=True)):
            doc = dataset.documents[docid]
            rationale = {"docid": docid}
            if given_fields["hard"]:
                cuts = sorted(draw(st.lists(st.integers(0, doc.n_tokens), max_size=4, unique=True)))
                rationale["hard_rationale_predictions"] = [
                    {"start_token": a, "end_token": b}
                    for a, b in zip(cuts[::2], cuts[1::2], strict=False)
                ]
            if given_fields["soft"]:
                rationale["soft_rationale_predictions"] = draw(
                    st.lists(score_value, min_size=doc.n_tokens, max_size=doc.n_tokens)
                )
            if given_fields["sentences"]:
                rationale["soft_sentence_predictions"] = draw(
                    st.lists(score_value, min_size=doc.n_sentences, max_size=doc.n_sentences)
                )
            if unusual and draw(st.booleans()):
                rationale["comment"] = "kept by neither reader"
            rationales.append(rationale)
        line = {"annotation_id": inst.annotation_id, "rationales": rationales}
        if given_fields["classification"]:
            line["classification"] = draw(st.sampled_from(LABELS))
        if given_fields["scores"]:
            labels = LABELS
            if unusual:
                labels = draw(st.lists(st.sampled_from(LABELS), min_size=1, unique=True))
            line["classification_scores"] = probabilities(draw, labels)
            line["comprehensiveness_classification_scores"] = probabilities(draw)
            line["sufficiency_classification_scores"] = probabilities(draw)
        if given_fields["aopc"]:
            thresholds = list(THRESHOLDS)
            if unusual:
                thresholds = draw(st.permutations(THRESHOLDS))
            line["thresholded_scores"] = [
                {
                    "threshold": t,
                    "comprehensiveness_classification_scores": probabilities(draw),
                    "sufficiency_classification_scores": probabilities(draw),
                }
                for t in thresholds
            ]
        if given_fields["flip"]:
            line["tokens_to_flip"] = draw(st.integers(0, 5))
        lines.append(line)
    return dataset, lines


def write(tmp_path, lines) -> str:
    path = tmp_path / "preds.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def both_readers(path, dataset, strict=False):
    gold, labels = reader._gold_and_labels(dataset, "test")
    columns = reader._read_columns(path, dataset, gold, labels, strict, THRESHOLDS)
    problems = ProblemList()
    rows = reader._read_rows(path, dataset, gold, labels, strict, THRESHOLDS, problems)
    return columns, table_from_rows(rows, sorted(labels)), problems


def assert_same(a, b, path="table"):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True), path
    elif hasattr(a, "__dataclass_fields__"):
        assert type(a) is type(b), path
        for name in a.__dataclass_fields__:
            assert_same(getattr(a, name), getattr(b, name), f"{path}.{name}")
    else:
        assert a == b, path


settings_for_files = settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@settings_for_files
@given(valid_files())
def test_on_valid_files_both_readers_build_the_same_table(tmp_path, case):
    dataset, lines = case

    columns, rows, problems = both_readers(write(tmp_path, lines), dataset)

    assert not problems
    assert columns is not None, "the column-wise reader declined a plain valid file"
    assert_same(columns, rows)


@settings_for_files
@given(valid_files(unusual=True))
def test_unusual_valid_files_are_read_line_by_line_and_scored(tmp_path, case):
    dataset, lines = case
    path = write(tmp_path, lines)

    columns, rows, problems = both_readers(path, dataset)
    table = reader.read_predictions(path, dataset=dataset, split="test")

    assert not problems
    if columns is not None:
        assert_same(columns, rows)
    assert_same(table, rows)
    score_predictions(dataset, "test", table)


def _set(path_in_line):
    def mutate(line, value):
        node = line
        for part in path_in_line[:-1]:
            node = node[part]
        node[path_in_line[-1]] = value

    return mutate


# Each defect puts one bad value somewhere a valid line has it.
DEFECTS = [
    ("soft score true", ("rationales", 0, "soft_rationale_predictions", 0), True),
    ("soft score string", ("rationales", 0, "soft_rationale_predictions", 0), "0.5"),
    ("soft score null", ("rationales", 0, "soft_rationale_predictions", 0), None),
    ("short soft vector", ("rationales", 0, "soft_rationale_predictions"), [0.5]),
    ("sentence score true", ("rationales", 0, "soft_sentence_predictions", 0), True),
    ("span past the end", ("rationales", 0, "hard_rationale_predictions", 0, "end_token"), 999),
    ("empty span", ("rationales", 0, "hard_rationale_predictions", 0, "end_token"), 0),
    ("span start float", ("rationales", 0, "hard_rationale_predictions", 0, "start_token"), 0.0),
    ("unknown docid", ("rationales", 0, "docid"), "zz"),
    ("empty docid", ("rationales", 0, "docid"), ""),
    ("rationales not a list", ("rationales",), {}),
    ("unknown label", ("classification",), "MAYBE"),
    ("classification null", ("classification",), None),
    ("empty score object", ("classification_scores",), {}),
    ("score of unknown label", ("classification_scores",), {"MAYBE": 0.5}),
    ("score true", ("comprehensiveness_classification_scores", "POS"), True),
    ("threshold string", ("thresholded_scores", 0, "threshold"), "0.01"),
    ("bin without sufficiency", ("thresholded_scores", 0), {"threshold": 0.01}),
    ("missing bin", ("thresholded_scores",), []),
    ("flip float", ("tokens_to_flip",), 1.5),
    ("flip beyond 64 bits", ("tokens_to_flip",), 2**64),
    ("empty id", ("annotation_id",), ""),
    ("boolean id", ("annotation_id",), True),
    ("id beyond 64 bits", ("annotation_id",), 2**64),
    ("unknown field", ("model",), "bert"),
]


@st.composite
def defective_files(draw):
    dataset, lines = draw(valid_files())
    name, where, value = draw(st.sampled_from(DEFECTS))
    target = draw(st.sampled_from(lines))
    # A line with no such place stays valid, which is fine too.
    with contextlib.suppress(KeyError, IndexError, TypeError):
        _set(where)(target, value)
    if draw(st.booleans()):
        lines.append(dict(lines[0]))  # a duplicate annotation_id
    if draw(st.booleans()) and len(lines) > 1:
        lines[-1].pop("classification", None)  # an optional field on some lines only
    if draw(st.booleans()):
        lines.insert(
            draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "{broken", "[1]"]))
        )
    return dataset, lines, name


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(defective_files(), st.booleans())
def test_the_column_reader_never_accepts_a_file_the_line_reader_refuses(tmp_path, case, strict):
    dataset, lines, _ = case
    path = write(tmp_path, lines)

    columns, rows, problems = both_readers(path, dataset, strict=strict)
    event(
        "refused"
        if problems
        else "valid, read column-wise"
        if columns
        else "valid, read line by line"
    )

    if problems:
        assert columns is None
        with pytest.raises(DataValidationError) as caught:
            reader.read_predictions(
                path, dataset=dataset, split="test", strict=strict, aopc_thresholds=THRESHOLDS
            )
        # With --strict, scores that are not probabilities are problems too, found on the
        # table of the valid lines.
        if strict:
            problems.extend(reader.probability_problems(rows, path.name))
        assert [str(p) for p in caught.value.problems] == [str(p) for p in problems]
    elif columns is not None:
        assert_same(columns, rows)


def test_soft_scores_that_are_not_numbers_are_named(tmp_path):
    doc = document_from_jsonl_text("d0", "a b c")
    inst = Instance("a0", "POS", ["d0"], [], None, None, "test", "test.jsonl", 1)
    dataset = EraserDataset({"d0": doc}, {"train": [], "val": [], "test": [inst]}, "docs.jsonl")
    line = {
        "annotation_id": "a0",
        "rationales": [{"docid": "d0", "soft_rationale_predictions": [0.5, True, 0.1]}],
    }

    with pytest.raises(DataValidationError) as caught:
        reader.read_predictions(write(tmp_path, [line]), dataset=dataset, split="test")

    problem = caught.value.problems[0]
    assert (problem.line, problem.field) == (1, "rationales[0].soft_rationale_predictions[1]")
    assert problem.message == "must be a finite number, got boolean"


@settings_for_files
@given(valid_files(), st.integers(40, 400))
def test_a_file_read_in_small_chunks_gives_the_same_table(tmp_path, monkeypatch, case, chunk):
    dataset, lines = case
    path = write(tmp_path, lines)
    whole = reader.read_predictions(path, dataset=dataset, split="test")

    monkeypatch.setattr(reader, "CHUNK_BYTES", chunk)
    chunked = reader.read_predictions(path, dataset=dataset, split="test")

    assert_same(chunked, whole)


def test_chunks_with_thresholds_in_another_order_are_not_joined(tmp_path, monkeypatch):
    doc = document_from_jsonl_text("d0", "a b")
    instances = [
        Instance(f"a{i}", "POS", ["d0"], [], None, None, "test", "test.jsonl", i + 1)
        for i in range(4)
    ]
    dataset = EraserDataset({"d0": doc}, {"train": [], "val": [], "test": instances}, "docs.jsonl")
    lines = []
    for i, inst in enumerate(instances):
        order = [0.1, 0.5] if i < 2 else [0.5, 0.1]
        lines.append(
            {
                "annotation_id": inst.annotation_id,
                "rationales": [],
                "classification": "POS",
                "classification_scores": {"POS": 1.0},
                "comprehensiveness_classification_scores": {"POS": 0.5},
                "sufficiency_classification_scores": {"POS": 0.5},
                "thresholded_scores": [
                    {
                        "threshold": t,
                        "comprehensiveness_classification_scores": {"POS": t},
                        "sufficiency_classification_scores": {"POS": 1 - t},
                    }
                    for t in order
                ],
            }
        )
    path = write(tmp_path, lines)
    monkeypatch.setattr(reader, "CHUNK_BYTES", len(path.read_bytes()) // 2)

    table = reader.read_predictions(path, dataset=dataset, split="test")

    assert table.thresholded.thresholds.tolist() == [0.1, 0.5]
    assert table.thresholded.comprehensiveness[:, :, 0].tolist() == [[0.1, 0.5]] * 4


def test_a_line_longer_than_a_chunk_is_read_line_by_line(tmp_path, monkeypatch):
    doc = document_from_jsonl_text("d0", " ".join(["w"] * 200))
    inst = Instance("a0", "POS", ["d0"], [], None, None, "test", "test.jsonl", 1)
    dataset = EraserDataset({"d0": doc}, {"train": [], "val": [], "test": [inst]}, "docs.jsonl")
    line = {
        "annotation_id": "a0",
        "rationales": [{"docid": "d0", "soft_rationale_predictions": [0.25] * 200}],
    }
    path = write(tmp_path, [line])
    monkeypatch.setattr(reader, "CHUNK_BYTES", 100)
    read_line_by_line = []
    monkeypatch.setattr(
        reader, "_read_rows", lambda *a: read_line_by_line.append(1) or _read_rows(*a)
    )

    table = reader.read_predictions(path, dataset=dataset, split="test")

    assert read_line_by_line
    assert isinstance(table, PredictionTable)
    assert table.soft_tokens.values.tolist() == [0.25] * 200


def test_a_line_spanning_a_few_chunks_is_still_read_column_wise(tmp_path, monkeypatch):
    doc = document_from_jsonl_text("d0", " ".join(["w"] * 200))
    instances = [
        Instance(f"a{i}", "POS", ["d0"], [], None, None, "test", "test.jsonl", i + 1)
        for i in range(3)
    ]
    dataset = EraserDataset({"d0": doc}, {"train": [], "val": [], "test": instances}, "docs.jsonl")
    lines = [
        {
            "annotation_id": inst.annotation_id,
            "rationales": [{"docid": "d0", "soft_rationale_predictions": [0.25 * i] * 200}],
        }
        for i, inst in enumerate(instances)
    ]
    path = write(tmp_path, lines)
    longest = max(len(line) for line in path.read_bytes().split(b"\n"))
    # Each line spans three chunks, within the LONG_LINE_BLOCKS bound
    monkeypatch.setattr(reader, "CHUNK_BYTES", longest // 3)
    read_line_by_line = []
    monkeypatch.setattr(
        reader, "_read_rows", lambda *a: read_line_by_line.append(1) or _read_rows(*a)
    )

    table = reader.read_predictions(path, dataset=dataset, split="test")

    assert not read_line_by_line
    assert table.keys == ["a0", "a1", "a2"]
    assert table.soft_tokens.values.tolist() == [0.0] * 200 + [0.25] * 200 + [0.5] * 200


@given(
    st.lists(st.sampled_from([b"", b"{}", b"x" * 7, b" \r", b"\xe9\x00"]), max_size=12),
    st.booleans(),
    st.integers(1, 16),
)
def test_line_blocks_give_every_line_once_numbered_in_order(pieces, final_newline, block):
    data = b"\n".join(pieces) + (b"\n" if final_newline and pieces else b"")
    expected = data.split(b"\n")
    if not expected[-1]:
        expected.pop()  # nothing after the last newline, or no data at all

    seen, numbers = [], []
    try:
        for first, lines in reader._line_blocks(io.BytesIO(data), block):
            numbers.append(first)
            seen.extend(bytes(line) for line in lines)
    except reader._LineTooLong:
        assert max(map(len, expected)) > reader.LONG_LINE_BLOCKS * block
        return

    assert seen == expected
    assert numbers == sorted(numbers) and (not numbers or numbers[0] == 1)


def test_blank_lines_and_windows_line_ends_are_read_column_wise(tmp_path, monkeypatch):
    doc = document_from_jsonl_text("d0", "a b")
    instances = [
        Instance(f"a{i}", "POS", ["d0"], [], None, None, "test", "test.jsonl", i + 1)
        for i in range(2)
    ]
    dataset = EraserDataset({"d0": doc}, {"train": [], "val": [], "test": instances}, "docs.jsonl")
    lines = [
        json.dumps({"annotation_id": inst.annotation_id, "rationales": []}).encode()
        for inst in instances
    ]
    path = tmp_path / "preds.jsonl"
    path.write_bytes(lines[0] + b"\r\n\r\n   \r\n" + lines[1] + b"\r\n\n")
    read_line_by_line = []
    monkeypatch.setattr(
        reader, "_read_rows", lambda *a: read_line_by_line.append(1) or _read_rows(*a)
    )

    table = reader.read_predictions(path, dataset=dataset, split="test")

    assert not read_line_by_line
    assert table.keys == ["a0", "a1"]
    assert table.lines.tolist() == [1, 4]
