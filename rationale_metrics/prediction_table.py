"""Validated predictions held column by column, as the scorer consumes them.

A predictions file of 10,000 lines holds 20,000 rationales and 130,000 score objects.
Walking them as Python objects costs more than parsing the file, so `PredictionTable`
keeps one numpy column per field: score objects become (lines x labels) matrices, soft
score vectors are stored end to end (`Segments`), hard spans as three integer columns.

Two builders fill it:
- `table_from_lines`: the common file, whose lines all have the same fields. msgspec
  decodes each line against `PredictionLine`, checking every type in C; the rest
  (lengths, spans, labels, ids) is checked on whole columns with numpy. It returns
  None as soon as anything is unusual, never a wrong table.
- `table_from_rows`: any file the line-by-line validator in `predictions` accepted.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import chain
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from rationale_metrics.segments import Segments, ranges

if TYPE_CHECKING:
    from rationale_metrics.eraser import EraserDocument
    from rationale_metrics.predictions import Prediction

SCORE_FIELDS = (
    "classification_scores",
    "comprehensiveness_classification_scores",
    "sufficiency_classification_scores",
)


def threshold_key(threshold: float) -> float:
    """Thresholds are matched after rounding to 9 decimals, as 0.1 may be written 0.10000000001."""
    return round(float(threshold), 9)


@dataclass(frozen=True)
class HardSpans:
    """Hard rationale spans: the rationale row each belongs to, start and end tokens."""

    rationale: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __len__(self) -> int:
        return len(self.rationale)


@dataclass(frozen=True)
class ThresholdedScores:
    """Scores at the AOPC bins: `thresholds` (rounded to 9 decimals, ascending) and
    (lines x thresholds x labels) matrices, NaN where a line did not give that bin."""

    thresholds: np.ndarray
    comprehensiveness: np.ndarray
    sufficiency: np.ndarray

    def column(self, threshold: float) -> int | None:
        found = np.flatnonzero(self.thresholds == threshold_key(threshold))
        return int(found[0]) if len(found) else None


@dataclass(frozen=True)
class PredictionTable:
    """Every validated prediction line, one entry per line in file order.

    Rationale columns have one row per (line, document); `rationale_line` says which line.
    Score matrices have a column per label of `labels`; a label a line left out scores 0.
    A column is None when the file does not give that field.
    """

    annotation_ids: list[str | int]
    lines: np.ndarray
    labels: tuple[str, ...]
    rationale_line: np.ndarray
    rationale_docids: list[str]
    hard: HardSpans | None
    soft_tokens: Segments | None
    soft_sentences: Segments | None
    classification: np.ndarray | None
    classification_scores: np.ndarray | None
    comprehensiveness_scores: np.ndarray | None
    sufficiency_scores: np.ndarray | None
    thresholded: ThresholdedScores | None

    def __len__(self) -> int:
        return len(self.annotation_ids)

    @cached_property
    def keys(self) -> list[str]:
        """Annotation ids as strings, the form gold instances are keyed by."""
        return [str(aid) for aid in self.annotation_ids]

    def layout(self) -> tuple:
        """What the table holds, beyond its rows: its labels, which columns it has, and
        its thresholds. Tables of one file's chunks must agree on it to be joined."""
        columns = tuple(
            getattr(self, name) is None
            for name in (
                "hard",
                "soft_tokens",
                "soft_sentences",
                "classification",
                "classification_scores",
                "comprehensiveness_scores",
                "sufficiency_scores",
                "thresholded",
            )
        )
        thresholds = None if self.thresholded is None else self.thresholded.thresholds.tolist()
        return self.labels, columns, thresholds

    def classification_labels(self) -> list[str]:
        return [self.labels[i] for i in self.classification.tolist()]

    def scores_for(self, name: str, labels: Sequence[str]) -> np.ndarray | None:
        """A score matrix (`classification_scores`, ...) with its columns in `labels` order."""
        matrix = getattr(self, name)
        if matrix is None:
            return None
        if tuple(labels) == self.labels:
            return matrix
        return _reindex_labels(matrix, self.labels, labels)

    def thresholded_for(self, labels: Sequence[str]) -> ThresholdedScores | None:
        if self.thresholded is None or tuple(labels) == self.labels:
            return self.thresholded
        return replace(
            self.thresholded,
            comprehensiveness=_reindex_labels(
                self.thresholded.comprehensiveness, self.labels, labels
            ),
            sufficiency=_reindex_labels(self.thresholded.sufficiency, self.labels, labels),
        )

    def take(self, rows: np.ndarray) -> PredictionTable:
        """The table restricted to the given lines (positions), in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == len(self) and np.array_equal(rows, np.arange(len(self))):
            return self
        per_line = np.bincount(self.rationale_line, minlength=len(self))
        first = np.cumsum(per_line) - per_line
        rationale_rows = ranges(first[rows], per_line[rows])
        new_number = np.full(len(self.rationale_line), -1, dtype=np.int64)
        new_number[rationale_rows] = np.arange(len(rationale_rows))
        hard = None
        if self.hard is not None:
            keep = new_number[self.hard.rationale] >= 0
            kept = np.flatnonzero(keep)
            order = np.argsort(new_number[self.hard.rationale[kept]], kind="stable")
            kept = kept[order]
            hard = HardSpans(
                new_number[self.hard.rationale[kept]], self.hard.start[kept], self.hard.end[kept]
            )

        def pick(matrix):
            return None if matrix is None else matrix[rows]

        return PredictionTable(
            annotation_ids=[self.annotation_ids[i] for i in rows.tolist()],
            lines=self.lines[rows],
            labels=self.labels,
            rationale_line=np.repeat(np.arange(len(rows)), per_line[rows]),
            rationale_docids=[self.rationale_docids[i] for i in rationale_rows.tolist()],
            hard=hard,
            soft_tokens=None if self.soft_tokens is None else self.soft_tokens.take(rationale_rows),
            soft_sentences=None
            if self.soft_sentences is None
            else self.soft_sentences.take(rationale_rows),
            classification=pick(self.classification),
            classification_scores=pick(self.classification_scores),
            comprehensiveness_scores=pick(self.comprehensiveness_scores),
            sufficiency_scores=pick(self.sufficiency_scores),
            thresholded=None
            if self.thresholded is None
            else replace(
                self.thresholded,
                comprehensiveness=self.thresholded.comprehensiveness[rows],
                sufficiency=self.thresholded.sufficiency[rows],
            ),
        )

    @staticmethod
    def concat(parts: Sequence[PredictionTable]) -> PredictionTable:
        """Tables of consecutive chunks of one file, all of the same `layout()`."""
        if len(parts) == 1:
            return parts[0]
        first = parts[0]
        line_offsets = np.cumsum([0, *(len(p) for p in parts[:-1])])
        rationale_offsets = np.cumsum([0, *(len(p.rationale_line) for p in parts[:-1])])

        def joined(name):
            values = [getattr(p, name) for p in parts]
            return None if values[0] is None else np.concatenate(values)

        hard = None
        if first.hard is not None:
            hard = HardSpans(
                np.concatenate(
                    [p.hard.rationale + o for p, o in zip(parts, rationale_offsets, strict=True)]
                ),
                np.concatenate([p.hard.start for p in parts]),
                np.concatenate([p.hard.end for p in parts]),
            )
        thresholded = None
        if first.thresholded is not None:
            thresholded = replace(
                first.thresholded,
                comprehensiveness=np.concatenate([p.thresholded.comprehensiveness for p in parts]),
                sufficiency=np.concatenate([p.thresholded.sufficiency for p in parts]),
            )
        return PredictionTable(
            annotation_ids=list(chain.from_iterable(p.annotation_ids for p in parts)),
            lines=joined("lines"),
            labels=first.labels,
            rationale_line=np.concatenate(
                [p.rationale_line + o for p, o in zip(parts, line_offsets, strict=True)]
            ),
            rationale_docids=list(chain.from_iterable(p.rationale_docids for p in parts)),
            hard=hard,
            soft_tokens=None
            if first.soft_tokens is None
            else Segments.concat([p.soft_tokens for p in parts]),
            soft_sentences=None
            if first.soft_sentences is None
            else Segments.concat([p.soft_sentences for p in parts]),
            classification=joined("classification"),
            classification_scores=joined("classification_scores"),
            comprehensiveness_scores=joined("comprehensiveness_scores"),
            sufficiency_scores=joined("sufficiency_scores"),
            thresholded=thresholded,
        )


def _reindex_labels(matrix: np.ndarray, have: Sequence[str], want: Sequence[str]) -> np.ndarray:
    """The last axis rearranged from `have` labels to `want` labels (absent ones score 0)."""
    position = {label: i for i, label in enumerate(have)}
    out = np.zeros((*matrix.shape[:-1], len(want)), dtype=np.float64)
    for j, label in enumerate(want):
        if label in position:
            out[..., j] = matrix[..., position[label]]
    return out


def score_matrix(rows: Sequence[dict[str, float]], labels: Sequence[str]) -> np.ndarray:
    """(rows x labels) from label -> score objects; a label a row leaves out scores 0."""
    if not labels:
        return np.zeros((len(rows), 0))
    pick = itemgetter(*labels)
    try:
        values = np.fromiter(
            chain.from_iterable(map(pick, rows)) if len(labels) > 1 else map(pick, rows),
            dtype=np.float64,
            count=len(rows) * len(labels),
        )
        return values.reshape(len(rows), len(labels))
    except KeyError:
        return np.array(
            [[row.get(label, 0.0) for label in labels] for row in rows], dtype=np.float64
        ).reshape(len(rows), len(labels))


# ---------------------------------------------------------------- from validated rows


def table_from_rows(rows: Sequence[Prediction], labels: Sequence[str]) -> PredictionTable:
    """The table of predictions the line-by-line validator accepted (any valid shape)."""
    labels = tuple(labels)
    rationales = [r for p in rows for r in p.rationales]
    rationale_line = np.repeat(
        np.arange(len(rows)),
        np.fromiter((len(p.rationales) for p in rows), dtype=np.int64, count=len(rows)),
    )
    hard = None
    if any(r.hard is not None for r in rationales):
        spans = np.array(
            [(i, s, e) for i, r in enumerate(rationales) for s, e in (r.hard or ())],
            dtype=np.int64,
        ).reshape(-1, 3)
        hard = HardSpans(spans[:, 0].copy(), spans[:, 1].copy(), spans[:, 2].copy())

    def segments(attr):
        vectors = [getattr(r, attr) for r in rationales]
        if not any(v is not None for v in vectors):
            return None
        return Segments.from_vectors([v for v in vectors if v is not None])

    def matrix(attr):
        values = [getattr(p, attr) for p in rows]
        if not rows or any(v is None for v in values):
            return None
        return score_matrix(values, labels)

    label_index = {label: i for i, label in enumerate(labels)}
    classification = None
    if rows and all(p.classification is not None for p in rows):
        classification = np.array(
            [label_index[p.classification] for p in rows], dtype=np.int64
        ).reshape(-1)
    thresholded = None
    if rows and all(p.thresholded is not None for p in rows):
        keys = sorted({threshold_key(t.threshold) for p in rows for t in p.thresholded})
        column = {key: j for j, key in enumerate(keys)}
        shape = (len(rows), len(keys), len(labels))
        comp, suff = np.full(shape, np.nan), np.full(shape, np.nan)
        for i, p in enumerate(rows):
            for t in p.thresholded:  # a repeated threshold: the last one given counts
                j = column[threshold_key(t.threshold)]
                comp[i, j] = score_matrix([t.comprehensiveness], labels)[0]
                suff[i, j] = score_matrix([t.sufficiency], labels)[0]
        thresholded = ThresholdedScores(np.array(keys, dtype=np.float64), comp, suff)
    return PredictionTable(
        annotation_ids=[p.annotation_id for p in rows],
        lines=np.array([p.line for p in rows], dtype=np.int64),
        labels=labels,
        rationale_line=rationale_line,
        rationale_docids=[r.docid for r in rationales],
        hard=hard,
        soft_tokens=segments("soft_tokens"),
        soft_sentences=segments("soft_sentences"),
        classification=classification,
        classification_scores=matrix("classification_scores"),
        comprehensiveness_scores=matrix("comprehensiveness_scores"),
        sufficiency_scores=matrix("sufficiency_scores"),
        thresholded=thresholded,
    )


# ---------------------------------------------------------------- from typed lines


class _Span(msgspec.Struct):
    start_token: int
    end_token: int


class _Rationale(msgspec.Struct):
    docid: str
    hard_rationale_predictions: list[_Span] | UnsetType = UNSET
    soft_rationale_predictions: list[float] | UnsetType = UNSET
    soft_sentence_predictions: list[float] | UnsetType = UNSET


class _Threshold(msgspec.Struct):
    threshold: float
    comprehensiveness_classification_scores: dict[str, float]
    sufficiency_classification_scores: dict[str, float]


class PredictionLine(msgspec.Struct, forbid_unknown_fields=True):
    """One predictions line as docs/reference/metrics.md#predictions-file types it. Decoding
    checks every type (a score is a number, never `true` or "0.5"); what types cannot say is
    checked on the whole file by `table_from_lines`."""

    annotation_id: str | int
    rationales: list[_Rationale]
    classification: str | UnsetType = UNSET
    classification_scores: dict[str, float] | UnsetType = UNSET
    comprehensiveness_classification_scores: dict[str, float] | UnsetType = UNSET
    sufficiency_classification_scores: dict[str, float] | UnsetType = UNSET
    thresholded_scores: list[_Threshold] | UnsetType = UNSET
    tokens_to_flip: int | UnsetType = UNSET


_decode = msgspec.json.Decoder(PredictionLine).decode


def decode_line(raw: bytes | memoryview) -> PredictionLine:
    """One line decoded (raises msgspec.DecodeError), its score vectors packed at once.

    Each soft score list becomes an `array("d")` as soon as it is decoded, while its Python
    floats are still in the processor's cache, and they are freed: packing a block's lists
    together later took a quarter more time at Evidence Inference size (4.5 million
    scores). The vectors' type is then `array`, not the `list[float]` they are decoded as.
    """
    line = _decode(raw)
    for rationale in line.rationales:
        if rationale.soft_rationale_predictions is not UNSET:
            rationale.soft_rationale_predictions = array("d", rationale.soft_rationale_predictions)
        if rationale.soft_sentence_predictions is not UNSET:
            rationale.soft_sentence_predictions = array("d", rationale.soft_sentence_predictions)
    return line


class NotUniform(Exception):
    """The lines are not all of one valid shape; validate them line by line."""


def _require(condition: Any) -> None:
    if not condition:
        raise NotUniform


def _values(objects: Sequence[Any], name: str) -> list:
    return list(map(attrgetter(name), objects))


def _json_ints(values: list[int]) -> None:
    """Integers the line-by-line reader sees as integers too: orjson, which it parses with,
    reads one outside [-2**63, 2**64) as a float, which that reader then refuses."""
    _require(not values or (min(values) >= -(2**63) and max(values) < 2**64))


def _given(values: list) -> bool:
    """Whether an optional field is given: on every object, or on none (else NotUniform)."""
    missing = values.count(UNSET)
    _require(missing in (0, len(values)))
    return bool(values) and not missing


def table_from_lines(
    lines: Sequence[PredictionLine],
    numbers: Sequence[int],
    *,
    documents: dict[str, EraserDocument],
    labels: frozenset[str],
    gold_id_types: dict[str, type] | None,
    strict: bool,
    aopc_thresholds: Sequence[float] | None,
) -> PredictionTable | None:
    """The table of decoded lines when all have the same fields and pass every check of
    the line-by-line validator, else None.

    None means only "not shown valid here": the caller then validates line by line, which
    reports each problem with its line and field, or accepts an unusual but valid file.
    """
    try:
        return _table_from_lines(
            lines, numbers, documents, labels, gold_id_types, strict, aopc_thresholds
        )
    except (NotUniform, KeyError, TypeError, ValueError, OverflowError):
        return None


def _table_from_lines(lines, numbers, documents, labels, gold_id_types, strict, aopc_thresholds):
    _require(lines)
    n = len(lines)
    ids = _values(lines, "annotation_id")
    id_types = set(map(type, ids))
    _require(id_types in ({str}, {int}))
    id_type = next(iter(id_types))
    if id_type is str:
        _require(all(ids))
    else:
        _json_ints(ids)
    keys = ids if id_type is str else list(map(str, ids))
    _require(len(set(keys)) == n)
    if gold_id_types is not None:
        _require(all(gold_id_types.get(k, id_type) is id_type for k in keys))
        if strict:
            _require(gold_id_types.keys() >= set(keys))

    per_line = _values(lines, "rationales")
    rationale_line = np.repeat(np.arange(n), np.fromiter(map(len, per_line), np.int64, n))
    rationales = list(chain.from_iterable(per_line))
    docids = _values(rationales, "docid")
    _require(all(docids))
    _require(len(set(zip(rationale_line.tolist(), docids, strict=True))) == len(docids))
    named = list(map(documents.__getitem__, docids))

    def per_rationale(size: str) -> np.ndarray:
        return np.fromiter(map(attrgetter(size), named), np.int64, len(named))

    hard = soft_tokens = soft_sentences = None
    spans = _values(rationales, "hard_rationale_predictions")
    soft = _values(rationales, "soft_rationale_predictions")
    if _given(spans) or _given(soft):
        n_tokens = per_rationale("n_tokens")
    if _given(spans):
        hard = _hard_spans(spans, n_tokens)
    if _given(soft):
        soft_tokens = _vectors(soft, n_tokens)
    sentences = _values(rationales, "soft_sentence_predictions")
    if _given(sentences):
        soft_sentences = _vectors(sentences, per_rationale("n_sentences"))

    ordered_labels = tuple(sorted(labels))
    classification = None
    guessed = _values(lines, "classification")
    if _given(guessed):
        _require(labels >= set(guessed))
        index = {label: i for i, label in enumerate(ordered_labels)}
        classification = np.fromiter(map(index.__getitem__, guessed), np.int64, n)
    matrices = {}
    for name in SCORE_FIELDS:
        objects = _values(lines, name)
        if _given(objects):
            matrices[name] = _checked_score_matrix(objects, labels, ordered_labels)
    thresholded = None
    entries = _values(lines, "thresholded_scores")
    if _given(entries):
        thresholded = _thresholded(entries, labels, ordered_labels, aopc_thresholds)
    flips = _values(lines, "tokens_to_flip")
    if _given(flips):
        _json_ints(flips)

    return PredictionTable(
        annotation_ids=ids,
        lines=np.asarray(numbers, dtype=np.int64),
        labels=ordered_labels,
        rationale_line=rationale_line,
        rationale_docids=docids,
        hard=hard,
        soft_tokens=soft_tokens,
        soft_sentences=soft_sentences,
        classification=classification,
        classification_scores=matrices.get("classification_scores"),
        comprehensiveness_scores=matrices.get("comprehensiveness_classification_scores"),
        sufficiency_scores=matrices.get("sufficiency_classification_scores"),
        thresholded=thresholded,
    )


def _vectors(packed: list[array], expected_lengths: np.ndarray) -> Segments:
    """Score vectors (packed by `decode_line`) of the documents' lengths, end to end."""
    lengths = np.fromiter(map(len, packed), dtype=np.int64, count=len(packed))
    _require(np.array_equal(lengths, expected_lengths))
    values = np.frombuffer(bytearray().join(packed), dtype=np.float64)
    _require(np.isfinite(values).all())
    return Segments(values, lengths)


def _checked_score_matrix(
    objects: list[dict[str, float]], labels: frozenset[str], ordered_labels: tuple[str, ...]
) -> np.ndarray:
    """The matrix of label -> score objects, none empty and none naming an unknown label."""
    if ordered_labels and set(map(len, objects)) == {len(ordered_labels)}:
        # As many keys as there are labels: all the labels, or picking them raises KeyError.
        pick = itemgetter(*ordered_labels)
        picked = map(pick, objects)
        values = chain.from_iterable(picked) if len(ordered_labels) > 1 else picked
        matrix = np.fromiter(values, np.float64, len(objects) * len(ordered_labels))
        matrix = matrix.reshape(len(objects), len(ordered_labels))
    else:
        _require(all(objects) and set(chain.from_iterable(objects)) <= labels)
        matrix = score_matrix(objects, ordered_labels)
    _require(np.isfinite(matrix).all())
    return matrix


def _hard_spans(span_lists: list[list[_Span]], n_tokens: np.ndarray) -> HardSpans:
    """In-document, non-empty, non-overlapping spans."""
    per_rationale = np.fromiter(map(len, span_lists), np.int64, len(span_lists))
    spans = list(chain.from_iterable(span_lists))
    owner = np.repeat(np.arange(len(span_lists)), per_rationale)
    start = np.fromiter(map(attrgetter("start_token"), spans), np.int64, len(spans))
    end = np.fromiter(map(attrgetter("end_token"), spans), np.int64, len(spans))
    _require((start >= 0).all() and (end > start).all() and (end <= n_tokens[owner]).all())
    order = np.lexsort((start, owner))
    o, s, e = owner[order], start[order], end[order]
    _require(not ((o[1:] == o[:-1]) & (s[1:] < e[:-1])).any())
    return HardSpans(owner, start, end)


def _thresholded(
    entry_lists: list[list[_Threshold]], labels, ordered_labels, aopc_thresholds
) -> ThresholdedScores:
    """Every line gives the same thresholds in the same order."""
    n = len(entry_lists)
    per_line = np.fromiter(map(len, entry_lists), np.int64, n)
    width = int(per_line[0])
    _require(width > 0 and (per_line == width).all())
    entries = list(chain.from_iterable(entry_lists))
    values = np.fromiter(map(attrgetter("threshold"), entries), np.float64, len(entries))
    values = values.reshape(n, width)
    _require(np.isfinite(values).all() and (values == values[0]).all())
    keys = [threshold_key(t) for t in values[0].tolist()]
    _require(len(set(keys)) == width)
    if aopc_thresholds:
        _require(set(keys) >= {threshold_key(t) for t in aopc_thresholds})
    order = np.argsort(keys)
    matrices = []
    for name in (
        "comprehensiveness_classification_scores",
        "sufficiency_classification_scores",
    ):
        matrix = _checked_score_matrix(_values(entries, name), labels, ordered_labels)
        matrices.append(matrix.reshape(n, width, len(ordered_labels))[:, order, :])
    return ThresholdedScores(np.array(keys, dtype=np.float64)[order], *matrices)
