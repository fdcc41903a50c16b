"""Read and validate an ERASER predictions file (docs/reference/metrics.md#predictions-file).

Every problem is collected with its line number and field; nothing ends in a traceback.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from rationale_metrics.eraser import EraserDataset
from rationale_metrics.jsonl import collector_paused, iter_json_objects, json_kind
from rationale_metrics.prediction_table import (
    PredictionTable,
    decode_line,
    table_from_lines,
    table_from_rows,
)
from rationale_metrics.problems import ProblemList

OPTIONAL_TOP = (
    "classification",
    "classification_scores",
    "comprehensiveness_classification_scores",
    "sufficiency_classification_scores",
    "thresholded_scores",
    "tokens_to_flip",
)
OPTIONAL_RATIONALE = (
    "hard_rationale_predictions",
    "soft_rationale_predictions",
    "soft_sentence_predictions",
)
KNOWN_TOP = ("annotation_id", "rationales", *OPTIONAL_TOP)
MAX_LINE_BYTES = 512 * 1024 * 1024
# Bounds the decoded lines held at once by the column-wise path. Their Python floats are
# what the reader's memory is made of: at 16 MB a block held 2 million of them, whose
# freshly mapped pages cost 50,000 page faults at Evidence Inference size (a tenth of the
# whole run's CPU) and 60 MB more peak memory than 2 MB blocks.
CHUNK_BYTES = 2 * 1024 * 1024
# A line may span this many blocks and still be read column-wise (16 MB at 2 MB blocks).
LONG_LINE_BLOCKS = 8


@dataclass
class RationalePrediction:
    docid: str
    hard: list[tuple[int, int]] | None = None
    soft_tokens: np.ndarray | None = None
    soft_sentences: np.ndarray | None = None


@dataclass
class Threshold:
    threshold: float
    comprehensiveness: dict[str, float] | None
    sufficiency: dict[str, float] | None


@dataclass
class Prediction:
    annotation_id: str | int
    line: int
    rationales: list[RationalePrediction] = field(default_factory=list)
    classification: str | None = None
    classification_scores: dict[str, float] | None = None
    comprehensiveness_scores: dict[str, float] | None = None
    sufficiency_scores: dict[str, float] | None = None
    thresholded: list[Threshold] | None = None
    present: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        return str(self.annotation_id)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class _LineChecker:
    def __init__(self, label: str, number: int, problems: ProblemList):
        self.label, self.number, self.problems = label, number, problems
        self.ok = True
        self.unknown_labels: dict[str, str] = {}  # label -> first field naming it

    def fail(self, field_name: str | None, message: str) -> None:
        self.ok = False
        self.problems.add(self.label, self.number, field_name, message)

    def score_dict(self, value: Any, field_name: str, labels: set[str] | None) -> dict | None:
        if not isinstance(value, dict) or not value:
            self.fail(
                field_name, f"must be an object of label -> probability, got {json_kind(value)}"
            )
            return None
        # Fast path for the common case: known labels, plain finite floats.
        if (labels is None or labels.issuperset(value)) and all(
            type(v) is float and v - v == 0 for v in value.values()
        ):
            return value
        scores = {}
        for label, prob in value.items():
            if not _is_number(prob):
                self.fail(
                    f"{field_name}.{label}", f"must be a finite number, got {json_kind(prob)}"
                )
                continue
            if labels is not None and label not in labels:
                self.ok = False
                self.unknown_labels.setdefault(label, f"{field_name}.{label}")
                continue
            scores[label] = float(prob)
        return scores if len(scores) == len(value) else None

    def vector(self, value: Any, field_name: str, length: int | None) -> np.ndarray | None:
        if not isinstance(value, list):
            self.fail(field_name, f"must be a list of numbers, got {json_kind(value)}")
            return None
        bad = next((i for i, v in enumerate(value) if not _is_number(v)), None)
        if bad is not None:
            self.fail(
                f"{field_name}[{bad}]", f"must be a finite number, got {json_kind(value[bad])}"
            )
            return None
        if length is not None and len(value) != length:
            self.fail(field_name, f"has {len(value)} scores, but the document has {length}")
            return None
        return np.array(value, dtype=np.float64).reshape(-1)


def _parse_rationale(
    raw: Any, where: str, check: _LineChecker, dataset: EraserDataset | None
) -> RationalePrediction | None:
    if not isinstance(raw, dict):
        check.fail(where, f"must be an object, got {json_kind(raw)}")
        return None
    docid = raw.get("docid")
    if not isinstance(docid, str) or not docid:
        check.fail(f"{where}.docid", f"must be a non-empty string, got {json_kind(docid)}")
        return None
    doc = dataset.documents.get(docid) if dataset else None
    if dataset is not None and doc is None:
        check.fail(f"{where}.docid", f"unknown docid {docid!r}")
        return None
    n_tokens = doc.n_tokens if doc else None
    n_sentences = doc.n_sentences if doc else None
    prediction = RationalePrediction(docid=docid)
    if "hard_rationale_predictions" in raw:
        spans = raw["hard_rationale_predictions"]
        if not isinstance(spans, list):
            check.fail(
                f"{where}.hard_rationale_predictions", f"must be a list, got {json_kind(spans)}"
            )
        else:
            parsed = []
            for i, span in enumerate(spans):
                at = f"{where}.hard_rationale_predictions[{i}]"
                if not isinstance(span, dict):
                    check.fail(at, f"must be an object, got {json_kind(span)}")
                    continue
                start, end = span.get("start_token"), span.get("end_token")
                if not _is_int(start) or not _is_int(end):
                    bad = "start_token" if not _is_int(start) else "end_token"
                    check.fail(f"{at}.{bad}", f"must be an integer, got {json_kind(span.get(bad))}")
                    continue
                if start < 0 or end <= start or (n_tokens is not None and end > n_tokens):
                    limit = f" of a document with {n_tokens} tokens" if n_tokens is not None else ""
                    check.fail(at, f"span [{start}, {end}) is outside{limit} or empty")
                    continue
                parsed.append((start, end))
            ordered = sorted(parsed)
            for (s1, e1), (s2, e2) in itertools.pairwise(ordered):
                if s2 < e1:
                    check.fail(
                        f"{where}.hard_rationale_predictions",
                        f"spans [{s1}, {e1}) and [{s2}, {e2}) overlap",
                    )
                    break
            prediction.hard = parsed
    if "soft_rationale_predictions" in raw:
        prediction.soft_tokens = check.vector(
            raw["soft_rationale_predictions"], f"{where}.soft_rationale_predictions", n_tokens
        )
    if "soft_sentence_predictions" in raw:
        prediction.soft_sentences = check.vector(
            raw["soft_sentence_predictions"], f"{where}.soft_sentence_predictions", n_sentences
        )
    return prediction


def parse_prediction(
    record: dict,
    number: int,
    label: str,
    problems: ProblemList,
    dataset: EraserDataset | None,
    labels: set[str] | None,
) -> tuple[Prediction, bool]:
    """The parsed line, and whether it had no problems (problems are added as found)."""
    check = _LineChecker(label, number, problems)
    aid = record.get("annotation_id")
    if not (isinstance(aid, str) and aid) and not _is_int(aid):
        check.fail(
            "annotation_id", f"must be a non-empty string or an integer, got {json_kind(aid)}"
        )
    unknown = sorted(set(record) - set(KNOWN_TOP))
    if unknown:
        check.fail(unknown[0], f"unknown field(s): {', '.join(unknown)}")
    prediction = Prediction(annotation_id=aid, line=number, present=frozenset(record))
    rationales = record.get("rationales")
    if not isinstance(rationales, list):
        check.fail("rationales", f"must be a list, got {json_kind(rationales)}")
    else:
        for i, raw in enumerate(rationales):
            parsed = _parse_rationale(raw, f"rationales[{i}]", check, dataset)
            if parsed is not None:
                prediction.rationales.append(parsed)
        docids = [r.docid for r in prediction.rationales]
        if len(set(docids)) != len(docids):
            check.fail("rationales", "names the same docid twice")
    if "classification" in record:
        value = record["classification"]
        if not isinstance(value, str):
            check.fail("classification", f"must be a string, got {json_kind(value)}")
        elif labels is not None and value not in labels:
            check.ok = False
            check.unknown_labels.setdefault(value, "classification")
        else:
            prediction.classification = value
    for key, attr in (
        ("classification_scores", "classification_scores"),
        ("comprehensiveness_classification_scores", "comprehensiveness_scores"),
        ("sufficiency_classification_scores", "sufficiency_scores"),
    ):
        if key in record:
            setattr(prediction, attr, check.score_dict(record[key], key, labels))
    if "thresholded_scores" in record:
        entries = record["thresholded_scores"]
        if not isinstance(entries, list):
            check.fail("thresholded_scores", f"must be a list, got {json_kind(entries)}")
        else:
            prediction.thresholded = []
            for i, entry in enumerate(entries):
                at = f"thresholded_scores[{i}]"
                if not isinstance(entry, dict) or not _is_number(entry.get("threshold")):
                    check.fail(f"{at}.threshold", "must be an object with a numeric threshold")
                    continue
                prediction.thresholded.append(
                    Threshold(
                        threshold=float(entry["threshold"]),
                        comprehensiveness=check.score_dict(
                            entry.get("comprehensiveness_classification_scores"),
                            f"{at}.comprehensiveness_classification_scores",
                            labels,
                        ),
                        sufficiency=check.score_dict(
                            entry.get("sufficiency_classification_scores"),
                            f"{at}.sufficiency_classification_scores",
                            labels,
                        ),
                    )
                )
    if check.unknown_labels:
        names = ", ".join(repr(label) for label in check.unknown_labels)
        problems.add(
            check.label,
            number,
            next(iter(check.unknown_labels.values())),
            f"label(s) {names} not in the dataset's labels {sorted(labels or ())}",
        )
    if "tokens_to_flip" in record and not _is_int(record["tokens_to_flip"]):
        check.fail(
            "tokens_to_flip", f"must be an integer, got {json_kind(record['tokens_to_flip'])}"
        )
    return prediction, check.ok


def read_predictions(
    path: str | Path,
    *,
    dataset: EraserDataset | None = None,
    split: str | None = None,
    aopc_thresholds: list[float] | None = None,
    strict: bool = False,
    plausibility_only: bool = False,
    problems: ProblemList | None = None,
    warnings: ProblemList | None = None,
) -> PredictionTable:
    """Parse and validate a predictions file. Problems go to `problems` (raised if not given).

    Class probabilities outside [0, 1], or not summing to 1 within
    PROBABILITY_SUM_TOLERANCE, are scored as given with a problem added to `warnings`;
    with `strict`, they are problems.

    A file whose lines all share one valid shape is checked column by column; any other
    file is checked line by line, which names every problem with its line and field.
    A classification without `classification_scores` (or the reverse) is refused, as the
    reference scorer refuses it; `plausibility_only` accepts it and leaves every
    classification field out of the table, so only the rationales are scored.
    """
    raise_at_end = problems is None
    problems = ProblemList() if problems is None else problems
    path = Path(path)
    gold, labels = _gold_and_labels(dataset, split)
    table = None
    with collector_paused():
        if dataset is not None:
            table = _read_columns(path, dataset, gold, labels, strict, aopc_thresholds)
        if table is not None and not plausibility_only and _unpaired(_fields_of_table(table)):
            table = None  # the line-by-line reader names the problem
        if table is None:
            rows = _read_rows(
                path, dataset, gold, labels, strict, aopc_thresholds, problems, plausibility_only
            )
            named = labels if labels is not None else _labels_named(rows)
            table = table_from_rows(rows, sorted(named))
    if plausibility_only:
        table = replace(
            table,
            classification=None,
            classification_scores=None,
            comprehensiveness_scores=None,
            sufficiency_scores=None,
            thresholded=None,
        )
    if strict:
        problems.extend(probability_problems(table, path.name))
    elif warnings is not None:
        warnings.extend(
            replace(p, message=f"{p.message} (scored as given; an error with --strict)")
            for p in probability_problems(table, path.name)
        )
    if raise_at_end:
        problems.raise_if_any()
    return table


# Two-decimal probabilities of a few classes miss 1 by up to about 0.01; logits, or a
# score outside [0, 1] such as 7.5, miss by far more.
PROBABILITY_SUM_TOLERANCE = 0.01
# A float32 softmax may write 1.0000001: a rounding, not a value outside [0, 1].
PROBABILITY_RANGE_SLACK = 1e-6


def probability_problems(table: PredictionTable, label: str) -> ProblemList:
    """One problem per score object of `table` that is not a probability distribution:
    a value outside [0, 1] (the first one named), or a sum more than
    PROBABILITY_SUM_TOLERANCE from 1. The reference scorer takes any numbers, and one
    such value moves comprehensiveness and sufficiency, which are differences of them.

    Checked on whole matrices: only lines with a problem are looked at one by one."""
    found = ProblemList()
    checked = [
        (name, getattr(table, attr))
        for name, attr in (
            ("classification_scores", "classification_scores"),
            ("comprehensiveness_classification_scores", "comprehensiveness_scores"),
            ("sufficiency_classification_scores", "sufficiency_scores"),
        )
    ]
    if table.thresholded is not None:
        for name in ("comprehensiveness", "sufficiency"):
            scores = getattr(table.thresholded, name)  # lines x thresholds x labels
            if scores.size and _all_distributions(scores.reshape(-1, scores.shape[-1])):
                continue
            for j, threshold in enumerate(table.thresholded.thresholds.tolist()):
                field_name = (
                    f"thresholded_scores[threshold={threshold:g}].{name}_classification_scores"
                )
                checked.append((field_name, scores[:, j, :]))
    for field_name, matrix in checked:
        if matrix is None or not matrix.size or _all_distributions(matrix):
            continue
        # NaN stands for a threshold a line did not give (a line-by-line table): unchecked.
        given = ~np.isnan(matrix).all(axis=1)
        outside = (matrix < -PROBABILITY_RANGE_SLACK) | (matrix > 1 + PROBABILITY_RANGE_SLACK)
        sums = np.nansum(matrix, axis=1)
        off = given & (outside.any(axis=1) | (np.abs(sums - 1) > PROBABILITY_SUM_TOLERANCE))
        for row in np.flatnonzero(off).tolist():
            line = int(table.lines[row])
            if outside[row].any():
                column = int(np.flatnonzero(outside[row])[0])
                value = float(matrix[row, column])
                found.add(
                    label,
                    line,
                    f"{field_name}.{table.labels[column]}",
                    f"is {value:g}, outside [0, 1]: not a class probability",
                )
            else:
                found.add(
                    label,
                    line,
                    field_name,
                    f"class probabilities sum to {sums[row]:.6g}, not 1 "
                    f"(within {PROBABILITY_SUM_TOLERANCE:g})",
                )
    found.sort(key=lambda p: p.line)
    return found


def _all_distributions(matrix: np.ndarray) -> bool:
    """Whether every row is a probability distribution, by reductions over the whole
    matrix: per-row reductions over a few labels cost 20 times as much, which only a
    matrix with a problem pays."""
    lowest, highest = matrix.min(), matrix.max()  # NaN when the matrix holds one
    if not (lowest >= -PROBABILITY_RANGE_SLACK and highest <= 1 + PROBABILITY_RANGE_SLACK):
        return False
    sums = matrix @ np.ones(matrix.shape[1])
    return bool(np.abs(sums - 1).max() <= PROBABILITY_SUM_TOLERANCE)


# A classification and the fields that come with it, each with its table column.
_CLASSIFICATION_FIELDS = {
    "classification": "classification",
    "classification_scores": "classification_scores",
    "comprehensiveness_classification_scores": "comprehensiveness_scores",
    "sufficiency_classification_scores": "sufficiency_scores",
    "thresholded_scores": "thresholded",
}


def _fields_of_table(table: PredictionTable) -> tuple[set[str], set[str]]:
    """(fields on every line, fields on none) of a column-wise table, whose lines all
    have the same fields."""
    given = {
        name for name, attr in _CLASSIFICATION_FIELDS.items() if getattr(table, attr) is not None
    }
    return given, set(_CLASSIFICATION_FIELDS) - given


def _unpaired(fields: tuple[set[str], set[str]]) -> tuple[str, list[str]] | None:
    """The field missing from every line while others that need it are on every line.

    `classification` and `classification_scores` come together, and the faithfulness
    fields need both (they are drops in the probability of the predicted label), as the
    reference scorer has it; a file without them scored every faithfulness figure null
    with no word why. A field on some lines only is a problem of its own, not this one.
    """
    on_every, on_none = fields
    for needed in ("classification_scores", "classification"):
        dependent = [name for name in _CLASSIFICATION_FIELDS if name in on_every and name != needed]
        if needed in on_none and dependent:
            return needed, dependent
    return None


def _check_classification_pairs(predictions: list[Prediction], label: str, problems) -> None:
    on_every = {k for k in _CLASSIFICATION_FIELDS if all(k in p.present for p in predictions)}
    on_none = {k for k in _CLASSIFICATION_FIELDS if not any(k in p.present for p in predictions)}
    unpaired = _unpaired((on_every, on_none))
    if unpaired is None:
        return
    needed, dependent = unpaired
    problems.add(
        label,
        predictions[0].line,
        needed,
        f"missing on every line, while {', '.join(dependent)} "
        f"{'is' if len(dependent) == 1 else 'are'} given: classification and "
        "classification_scores go together, and faithfulness is computed from both, so "
        "the reference scorer refuses such a file. Add it, or score the rationales alone "
        "(rationale-metrics score --plausibility_only)",
    )


def predictions_outside_split(
    table: PredictionTable, dataset: EraserDataset, split: str, label: str
) -> ProblemList:
    """One problem per prediction whose annotation_id is not in `split`: scoring leaves
    such a line out, an error only with `strict`, but a misspelt id is also why its
    instance has no prediction, so a report should name it."""
    in_split = {inst.key for inst in dataset.splits[split]}
    outside = ProblemList()
    for aid, key, line in zip(table.annotation_ids, table.keys, table.lines.tolist(), strict=True):
        if key not in in_split:
            outside.add(
                label,
                line,
                "annotation_id",
                f"{aid!r} is not in the split {split}, so this line is ignored "
                "(an error with --strict)",
            )
    return outside


def _gold_and_labels(dataset: EraserDataset | None, split: str | None) -> tuple[dict, set | None]:
    """The gold instances by key (of `split`, or all) and the dataset's labels; ({}, None)
    without a dataset."""
    if dataset is None:
        return {}, None
    instances = dataset.splits[split] if split else dataset.instances()
    labels = {i.classification for i in dataset.instances() if i.classification is not None}
    return {inst.key: inst for inst in instances}, labels


def _read_columns(path, dataset, gold, labels, strict, aopc_thresholds) -> PredictionTable | None:
    """`_read_uniform` with the checks that a dataset gives; arguments as `_read_rows`."""
    return _read_uniform(
        path,
        documents=dataset.documents,
        labels=frozenset(labels),
        gold_id_types={key: type(inst.annotation_id) for key, inst in gold.items()},
        strict=strict,
        aopc_thresholds=aopc_thresholds,
    )


def _labels_named(rows: list[Prediction]) -> set[str]:
    """Without a dataset, the labels are those the predictions name."""
    labels = {p.classification for p in rows if p.classification is not None}
    for p in rows:
        objects = [p.classification_scores, p.comprehensiveness_scores, p.sufficiency_scores]
        objects += [s for t in p.thresholded or () for s in (t.comprehensiveness, t.sufficiency)]
        for scores in objects:
            labels.update(scores or ())
    return labels


def _read_uniform(path: Path, **checks) -> PredictionTable | None:
    """The table of a file whose lines all decode as `PredictionLine` with the same fields
    and pass every check; None at the first sign of anything else."""
    parts: list[PredictionTable] = []
    try:
        with open(path, "rb") as stream:
            for first, block in _line_blocks(stream, CHUNK_BYTES):
                decoded, numbers = [], []
                for number, raw in enumerate(block, start=first):
                    if not _blank(raw):
                        decoded.append(decode_line(raw))
                        numbers.append(number)
                if decoded:
                    parts.append(table_from_lines(decoded, numbers, **checks))
                    if parts[-1] is None:
                        return None
    except (OSError, msgspec.DecodeError, UnicodeDecodeError, _LineTooLong):
        # msgspec raises UnicodeDecodeError, not DecodeError, for bytes that are not UTF-8
        # in a string; the line-by-line reader names their line and byte.
        return None
    if not parts or any(p.layout() != parts[0].layout() for p in parts):
        return None
    table = PredictionTable.concat(parts)
    keys = table.keys
    return table if len(set(keys)) == len(keys) else None


class _LineTooLong(Exception):
    pass


def _line_blocks(stream, block_bytes: int) -> Iterator[tuple[int, list[bytes | memoryview]]]:
    """(number of the first line, whole lines) per block of about `block_bytes` read.

    Lines are views into the block, not copies (splitting and joining blocks copied the
    file twice over); only a line begun in an earlier block is joined. A line longer than
    LONG_LINE_BLOCKS blocks raises _LineTooLong: the line-by-line reader, which measures
    over-long lines without holding them, takes such files.
    """
    number, carry = 1, b""
    while True:
        data = stream.read(block_bytes)
        if not data:
            if carry:
                yield number, [carry]
            return
        end = data.find(b"\n")
        if end < 0:
            carry += data
            if len(carry) > LONG_LINE_BLOCKS * block_bytes:
                raise _LineTooLong
            continue
        view = memoryview(data)
        lines: list[bytes | memoryview] = [carry + data[:end]]
        start = end + 1
        while (end := data.find(b"\n", start)) >= 0:
            lines.append(view[start:end])
            start = end + 1
        carry = data[start:]
        yield number, lines
        number += len(lines)


def _blank(line: bytes | memoryview) -> bool:
    """Whether a line holds nothing but whitespace. Only short lines are looked at: a long
    blank one fails to decode, which hands the file to the line-by-line reader."""
    return not line or (len(line) < 64 and bytes(line).isspace())


def _read_rows(
    path, dataset, gold, labels, strict, aopc_thresholds, problems, plausibility_only=False
) -> list[Prediction]:
    """Every line checked on its own; the valid predictions, with every problem recorded."""
    label = path.name
    predictions: list[Prediction] = []
    seen: dict[str, int] = {}
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        problems.add(label, None, None, f"cannot read: {exc.strerror}")
        return predictions
    with stream:
        for number, record in iter_json_objects(
            stream, label=label, problems=problems, max_line_bytes=MAX_LINE_BYTES
        ):
            prediction, ok = parse_prediction(record, number, label, problems, dataset, labels)
            valid_id = _is_int(prediction.annotation_id) or isinstance(
                prediction.annotation_id, str
            )
            if dataset is not None and valid_id:
                _check_against_gold(prediction, gold, label, problems, strict, aopc_thresholds)
            if not ok:
                continue
            if prediction.key in seen:
                problems.add(
                    label,
                    number,
                    "annotation_id",
                    f"duplicate annotation_id {prediction.annotation_id!r} "
                    f"(first on line {seen[prediction.key]})",
                )
                continue
            seen[prediction.key] = number
            predictions.append(prediction)
    if not predictions and not problems:
        problems.add(label, None, None, "file is empty: it has no predictions")
    _check_optional_fields_consistent(predictions, label, problems)
    if predictions and not plausibility_only:
        _check_classification_pairs(predictions, label, problems)
    return predictions


def _check_against_gold(prediction, gold, label, problems, strict, aopc_thresholds) -> None:
    instance = gold.get(prediction.key)
    if instance is None:
        if strict:
            problems.add(
                label,
                prediction.line,
                "annotation_id",
                f"annotation_id {prediction.annotation_id!r} is not in the split",
            )
        return
    if type(instance.annotation_id) is not type(prediction.annotation_id):
        problems.add(
            label,
            prediction.line,
            "annotation_id",
            f"type mismatch: the dataset has {instance.annotation_id!r} "
            f"({json_kind(instance.annotation_id)}), the prediction {prediction.annotation_id!r} "
            f"({json_kind(prediction.annotation_id)})",
        )
    if prediction.thresholded is not None and aopc_thresholds:
        have = {round(t.threshold, 9) for t in prediction.thresholded}
        missing = [t for t in aopc_thresholds if round(t, 9) not in have]
        if missing:
            problems.add(
                label,
                prediction.line,
                "thresholded_scores",
                f"missing threshold(s) {missing} (expected {list(aopc_thresholds)})",
            )


def _check_optional_fields_consistent(predictions, label, problems) -> None:
    """An optional field is present on every line or on none."""
    if not predictions:
        return
    for key in OPTIONAL_TOP:
        having = [p for p in predictions if key in p.present]
        if having and len(having) != len(predictions):
            first_without = next(p for p in predictions if key not in p.present)
            problems.add(
                label,
                first_without.line,
                key,
                f"present on {len(having)} of {len(predictions)} lines: give it on every line or none",
            )
    for attr, key in (
        ("hard", "hard_rationale_predictions"),
        ("soft_tokens", "soft_rationale_predictions"),
        ("soft_sentences", "soft_sentence_predictions"),
    ):
        flags = [getattr(r, attr) is not None for p in predictions for r in p.rationales]
        if any(flags) and not all(flags):
            line = next(
                p.line for p in predictions for r in p.rationales if getattr(r, attr) is None
            )
            problems.add(
                label,
                line,
                f"rationales[].{key}",
                f"present on {sum(flags)} of {len(flags)} rationales: give it on every one or none",
            )
