"""The fine-grained interpretability benchmark's files
(docs/reference/metrics.md#fine-grained-benchmark-files): gold and predictions.

Gold: one JSON object per line. Every task has `sent_id`, `sample_type` (`ori` or
`disturb`) and, on originals, `rel_ids` (the ids of their perturbed copies); `sent_label`
(the class; for reading comprehension the answer text, "" for none) is optional, as no
metric reads it (the benchmark's released reading-comprehension files may not carry it;
the baseline `explain` trains on it and the platform's import needs it, each saying so).
Per task:

| task                    | tokens                       | gold rationales                                  | texts                                             |
|-------------------------|------------------------------|--------------------------------------------------|---------------------------------------------------|
| `sentiment`             | `sent_token`                 | `rationales`: alternative sets (a list of lists) | `context`                                         |
| `similarity`            | `text_q_seg`, `text_t_seg`   | `rationale_q_idx`, `rationale_t_idx`: one set each | en `sentence1`, `sentence2`; zh `query`, `title` |
| `reading_comprehension` | `sent_token` (passage, title) | `rationales`: one set                           | `title`, `context`, `question`                    |

Every field a metric does not read is optional: tokens, gold rationales, `sample_type`
and `rel_ids` are what the metrics read; texts and labels are kept when given.

Chinese files tokenize per character (digit runs such as "1992" stay one token); token
indexes are 0-based positions in their own sentence. Gold token indexes may be written as
digit strings, as some published files do; they are read as integers.

Predictions: one JSON object per line with `id` (a gold `sent_id`, same JSON type),
`rationale` (per sentence, token indexes, most important first), and optionally
`rationale_token` (the tokens of `rationale`), `pred_label`, `rationale_pred` (the label
on the rationale alone) and `no_rationale_pred` (the label on the rest).

Readers return plain dataclasses and validate a whole file before returning: every problem
is collected with file, line and field, then raised at once as `DataValidationError`.
Keys a reader does not know are kept in `extra` and written back, so a file written by
`write_benchmark_gold` or `write_benchmark_predictions` reads back identically.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from rationale_metrics.choices import LANGUAGES, TASKS
from rationale_metrics.jsonl import collector_paused, iter_json_objects, json_kind
from rationale_metrics.problems import ProblemList

ORIGINAL, PERTURBED = "ori", "disturb"
MAX_LINE_BYTES = 16 * 1024 * 1024

SentId = int | str
Label = int | str
PathOrFile = str | os.PathLike | IO


@dataclass(frozen=True)
class TaskLayout:
    """Where a task keeps its parts in a gold line."""

    token_fields: tuple[str, ...]  # one per sentence
    rationale_fields: tuple[str, ...]  # one field for all sentences, or one per sentence
    alternative_sets: bool  # the rationale field lists alternative sets, not one set
    text_fields: tuple[str, ...]

    @property
    def n_sentences(self) -> int:
        return len(self.token_fields)


def task_layout(task: str, language: str) -> TaskLayout:
    """The gold field names of `task` in `language` (ValueError for an unknown task or language)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose from {', '.join(TASKS)}")
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; choose from {', '.join(LANGUAGES)}")
    if task == "sentiment":
        return TaskLayout(("sent_token",), ("rationales",), True, ("context",))
    if task == "similarity":
        texts = ("sentence1", "sentence2") if language == "en" else ("query", "title")
        return TaskLayout(
            ("text_q_seg", "text_t_seg"), ("rationale_q_idx", "rationale_t_idx"), False, texts
        )
    return TaskLayout(("sent_token",), ("rationales",), False, ("title", "context", "question"))


@dataclass
class BenchmarkInstance:
    """One gold line. Per-sentence fields hold one entry for single texts and reading
    comprehension, two (first and second sentence) for similarity."""

    sent_id: SentId
    sample_type: str  # ORIGINAL ("ori") or PERTURBED ("disturb")
    label: Label | None  # `sent_label`: the class, or the answer text; None when not given
    tokens: list[list[str]]  # per sentence
    rationale_sets: list[list[list[int]]]  # per sentence, the alternative gold token sets
    rel_ids: list[SentId] = field(default_factory=list)  # originals: their perturbed copies
    texts: dict[str, str] = field(default_factory=dict)  # raw texts by field name
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, written back as read
    line: int | None = None  # line in the file read (None when built in code)

    @property
    def is_original(self) -> bool:
        return self.sample_type == ORIGINAL


@dataclass
class BenchmarkPrediction:
    """One prediction line; `rationale` and `rationale_tokens` hold one list per sentence."""

    id: SentId
    rationale: list[list[int]]  # token indexes, most important first
    rationale_tokens: list[list[str]] | None = None  # `rationale_token`; None when absent
    pred_label: Label | None = None  # the model's label on the whole input
    rationale_pred: Label | None = None  # its label on the rationale alone
    no_rationale_pred: Label | None = None  # its label on the input without the rationale
    extra: dict[str, Any] = field(default_factory=dict)
    line: int | None = None


PREDICTION_LABEL_FIELDS = ("pred_label", "rationale_pred", "no_rationale_pred")


# ---------------------------------------------------------------- value checks


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_sent_id(value: Any) -> bool:
    return _is_int(value) or (isinstance(value, str) and value != "")


def _label_problem(value: Any, task: str) -> str | None:
    if task == "reading_comprehension":
        return (
            None if isinstance(value, str) else f"must be the answer text, got {json_kind(value)}"
        )
    if _is_int(value) or isinstance(value, str):
        return None
    return f"must be an integer or a string label, got {json_kind(value)}"


_INT, _STR = {int}, {str}


class _Line:
    """Problems of one line, with the line's file and number filled in."""

    def __init__(self, label: str, number: int, problems: ProblemList):
        self.label, self.number, self.problems = label, number, problems
        self.ok = True

    def fail(self, field_name: str | None, message: str) -> None:
        self.ok = False
        self.problems.add(self.label, self.number, field_name, message)

    def indexes(
        self, value: Any, where: str, n_tokens: int | None, *, digit_strings: bool
    ) -> list[int] | None:
        if not isinstance(value, list):
            self.fail(where, f"must be a list of token indexes, got {json_kind(value)}")
            return None
        # The usual line, checked in C: plain ints inside the sentence.
        if not value or (
            set(map(type, value)) == _INT
            and min(value) >= 0
            and (n_tokens is None or max(value) < n_tokens)
        ):
            return value
        out = []
        for i, raw in enumerate(value):
            index = raw
            if digit_strings and isinstance(raw, str) and raw.isascii() and raw.isdigit():
                index = int(raw)
            if not _is_int(index) or index < 0:
                self.fail(f"{where}[{i}]", f"must be a token index (an integer >= 0), got {raw!r}")
                return None
            if n_tokens is not None and index >= n_tokens:
                self.fail(
                    f"{where}[{i}]",
                    f"token index {index} is past the end of its sentence ({n_tokens} tokens)",
                )
                return None
            out.append(index)
        return out

    def tokens(self, value: Any, where: str) -> list[str] | None:
        if not isinstance(value, list):
            self.fail(where, f"must be a list of token strings, got {json_kind(value)}")
            return None
        if not value or set(map(type, value)) == _STR:
            return value
        bad = next((i for i, t in enumerate(value) if not isinstance(t, str)), None)
        if bad is not None:
            self.fail(f"{where}[{bad}]", f"must be a string, got {json_kind(value[bad])}")
            return None
        return value


def _id_hint(value: SentId, known: dict) -> str:
    """' ("9180" is)' when the id is known with the other JSON type, else ''."""
    other = str(value) if _is_int(value) else (int(value) if value.isdigit() else None)
    if other is not None and other in known and type(other) is not type(value):
        return f" ({json_kind(other)} {other!r} is: the JSON types differ)"
    return ""


# ---------------------------------------------------------------- reading


@contextmanager
def _binary_stream(source: PathOrFile, label: str, problems: ProblemList) -> Iterator:
    if isinstance(source, str | os.PathLike):
        try:
            stream = open(source, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            problems.add(label, None, None, f"cannot read: {exc.strerror or exc}")
            yield None
            return
        with stream:
            yield stream
    elif isinstance(source, io.TextIOBase):
        yield io.BytesIO(source.read().encode("utf-8"))
    else:
        yield source


def _label_of(source: PathOrFile, label: str | None) -> str:
    if label is not None:
        return label
    if isinstance(source, str | os.PathLike):
        return str(source)
    return str(getattr(source, "name", None) or "<stream>")


def _records(source: PathOrFile, label: str, problems: ProblemList) -> Iterator[tuple[int, dict]]:
    with _binary_stream(source, label, problems) as stream:
        if stream is not None:
            yield from iter_json_objects(
                stream, label=label, problems=problems, max_line_bytes=MAX_LINE_BYTES
            )


def parse_gold_line(
    record: dict, number: int, label: str, problems: ProblemList, task: str, layout: TaskLayout
) -> BenchmarkInstance | None:
    """One gold line, or None when it has problems (each added to `problems`)."""
    line = _Line(label, number, problems)
    for key in ("sent_id", "sample_type", *layout.token_fields, *layout.rationale_fields):
        if key not in record:
            line.fail(key, "missing")
    sent_id = record.get("sent_id")
    if "sent_id" in record and not _is_sent_id(sent_id):
        line.fail("sent_id", f"must be an integer or a non-empty string, got {json_kind(sent_id)}")
    sample_type = record.get("sample_type")
    if "sample_type" in record and sample_type not in (ORIGINAL, PERTURBED):
        line.fail("sample_type", f"must be {ORIGINAL!r} or {PERTURBED!r}, got {sample_type!r}")
    if "sent_label" in record:
        problem = _label_problem(record["sent_label"], task)
        if problem:
            line.fail("sent_label", problem)
    texts = {}
    for key in layout.text_fields:
        if key in record:
            if isinstance(record[key], str):
                texts[key] = record[key]
            else:
                line.fail(key, f"must be a string, got {json_kind(record[key])}")
    tokens = [
        line.tokens(record[key], key) if key in record else None for key in layout.token_fields
    ]
    rationale_sets = _gold_rationales(record, line, layout, tokens)
    rel_ids: list[SentId] = []
    if sample_type == ORIGINAL:
        if "rel_ids" not in record:
            line.fail("rel_ids", "missing: an original lists its perturbed copies ([] for none)")
        elif not isinstance(record["rel_ids"], list):
            line.fail("rel_ids", f"must be a list of sent_ids, got {json_kind(record['rel_ids'])}")
        else:
            rel_ids = record["rel_ids"]
            for i, value in enumerate(rel_ids):
                if not _is_sent_id(value):
                    line.fail(f"rel_ids[{i}]", f"must be a sent_id, got {json_kind(value)}")
    elif sample_type == PERTURBED and record.get("rel_ids"):
        line.fail("rel_ids", "only originals link to perturbed copies; this line is 'disturb'")
    if not line.ok:
        return None
    known = {"sent_id", "sample_type", "sent_label", "rel_ids"}
    known.update(layout.token_fields, layout.rationale_fields, layout.text_fields)
    return BenchmarkInstance(
        sent_id=sent_id,
        sample_type=sample_type,
        label=record.get("sent_label"),
        tokens=tokens,
        rationale_sets=rationale_sets,
        rel_ids=list(rel_ids),
        texts=texts,
        extra={k: v for k, v in record.items() if k not in known},
        line=number,
    )


def _gold_rationales(record, line: _Line, layout: TaskLayout, tokens) -> list:
    def sentence_length(s: int) -> int | None:
        return len(tokens[s]) if tokens[s] is not None else None

    if layout.alternative_sets:
        key = layout.rationale_fields[0]
        value = record.get(key)
        if key not in record:
            return []
        if not isinstance(value, list):
            line.fail(key, f"must be a list of token-index sets, got {json_kind(value)}")
            return []
        return [
            [
                line.indexes(s, f"{key}[{i}]", sentence_length(0), digit_strings=True)
                for i, s in enumerate(value)
            ]
        ]
    if len(layout.rationale_fields) == 1:  # one set shared by the one sentence
        key = layout.rationale_fields[0]
        if key not in record:
            return []
        return [[line.indexes(record[key], key, sentence_length(0), digit_strings=True)]]
    return [
        [line.indexes(record[key], key, sentence_length(s), digit_strings=True)]
        for s, key in enumerate(layout.rationale_fields)
        if key in record
    ]


def _check_links(
    instances: list[BenchmarkInstance], label: str, problems: ProblemList, complete: bool
) -> None:
    """rel_ids point at perturbed lines of the same file; sent_ids are unique."""
    by_id: dict[SentId, BenchmarkInstance] = {}
    for inst in instances:
        first = by_id.get(inst.sent_id)
        if first is not None:
            problems.add(
                label,
                inst.line,
                "sent_id",
                f"duplicate sent_id {inst.sent_id!r} (first on line {first.line})",
            )
        else:
            by_id[inst.sent_id] = inst
    if not complete:  # lines with problems are missing: links to them would be false alarms
        return
    for inst in instances:
        for i, target_id in enumerate(inst.rel_ids):
            target = by_id.get(target_id)
            if target is None:
                problems.add(
                    label,
                    inst.line,
                    f"rel_ids[{i}]",
                    f"{target_id!r} is not a sent_id in this file{_id_hint(target_id, by_id)}",
                )
            elif target.is_original:
                problems.add(
                    label,
                    inst.line,
                    f"rel_ids[{i}]",
                    f"{target_id!r} (line {target.line}) is an original; rel_ids name perturbed lines",
                )


def read_benchmark_gold(
    path_or_file: PathOrFile,
    task: str,
    language: str = "en",
    *,
    label: str | None = None,
    problems: ProblemList | None = None,
) -> list[BenchmarkInstance]:
    """Read and validate a gold file of `task` ("sentiment", "similarity" or
    "reading_comprehension") in `language` ("en" or "zh").

    `path_or_file` is a path or an open file (binary or text). Problems name `label`
    (default: the path or the file's name). Without `problems`, every problem found is
    raised at the end as one `DataValidationError`; with it, they are added there and the
    valid lines returned.
    """
    layout = task_layout(task, language)
    raise_at_end = problems is None
    problems = ProblemList() if problems is None else problems
    label = _label_of(path_or_file, label)
    before = len(problems)
    instances = []
    with collector_paused():
        for number, record in _records(path_or_file, label, problems):
            inst = parse_gold_line(record, number, label, problems, task, layout)
            if inst is not None:
                instances.append(inst)
    if not instances and len(problems) == before:
        problems.add(label, None, None, "file is empty: it has no gold instances")
    _check_links(instances, label, problems, complete=len(problems) == before)
    if raise_at_end:
        problems.raise_if_any()
    return instances


def parse_prediction_line(
    record: dict,
    number: int,
    label: str,
    problems: ProblemList,
    task: str,
    gold: dict[SentId, BenchmarkInstance] | None,
) -> BenchmarkPrediction | None:
    """One prediction line, checked against `gold` (by sent_id) when given."""
    line = _Line(label, number, problems)
    n_sentences = task_layout(task, "en").n_sentences
    pred_id = record.get("id")
    instance = None
    if "id" not in record:
        line.fail("id", "missing")
    elif not _is_sent_id(pred_id):
        line.fail("id", f"must be an integer or a non-empty string, got {json_kind(pred_id)}")
    elif gold is not None:
        instance = gold.get(pred_id)
        if instance is None:
            line.fail(
                "id", f"{pred_id!r} is not a sent_id of the gold file{_id_hint(pred_id, gold)}"
            )
    rationale = _per_sentence(record, "rationale", n_sentences, line)
    if rationale is not None:
        rationale = [
            line.indexes(
                r,
                f"rationale[{s}]",
                len(instance.tokens[s]) if instance else None,
                digit_strings=False,
            )
            for s, r in enumerate(rationale)
        ]
    tokens = None
    if "rationale_token" in record:
        tokens = _per_sentence(record, "rationale_token", n_sentences, line)
        if tokens is not None:
            tokens = [line.tokens(t, f"rationale_token[{s}]") for s, t in enumerate(tokens)]
            for s, (r, t) in enumerate(zip(rationale or [], tokens, strict=False)):
                if r is not None and t is not None and len(r) != len(t):
                    line.fail(
                        f"rationale_token[{s}]",
                        f"has {len(t)} tokens, but rationale[{s}] has {len(r)} indexes",
                    )
    labels = {}
    for key in PREDICTION_LABEL_FIELDS:
        if key in record:
            problem = _label_problem(record[key], task)
            if problem:
                line.fail(key, problem)
            labels[key] = record[key]
    if not line.ok:
        return None
    known = {"id", "rationale", "rationale_token", *PREDICTION_LABEL_FIELDS}
    return BenchmarkPrediction(
        id=pred_id,
        rationale=rationale,
        rationale_tokens=tokens,
        extra={k: v for k, v in record.items() if k not in known},
        line=number,
        **labels,
    )


def _per_sentence(record: dict, key: str, n_sentences: int, line: _Line) -> list | None:
    value = record.get(key)
    if key not in record:
        line.fail(key, "missing")
        return None
    if not isinstance(value, list) or len(value) != n_sentences:
        got = f"{len(value)} entries" if isinstance(value, list) else json_kind(value)
        line.fail(key, f"must be a list with one list per sentence ({n_sentences}), got {got}")
        return None
    return value


def read_benchmark_predictions(
    path_or_file: PathOrFile,
    task: str,
    gold: Sequence[BenchmarkInstance] | None = None,
    *,
    label: str | None = None,
    problems: ProblemList | None = None,
) -> list[BenchmarkPrediction]:
    """Read and validate a predictions file of `task`, in file order.

    With `gold`, every id must be a gold sent_id of the same JSON type and every token index
    must fall inside its sentence. `pred_label`, `rationale_pred` and `no_rationale_pred` are
    each on every line or on none. Problems are handled as in `read_benchmark_gold`.
    """
    task_layout(task, "en")
    raise_at_end = problems is None
    problems = ProblemList() if problems is None else problems
    label = _label_of(path_or_file, label)
    by_id = {inst.sent_id: inst for inst in gold} if gold is not None else None
    predictions: list[BenchmarkPrediction] = []
    first_line: dict[SentId, int] = {}
    lacking: dict[str, list[int]] = {key: [] for key in PREDICTION_LABEL_FIELDS}
    having: set[str] = set()
    before = len(problems)
    with collector_paused():
        for number, record in _records(path_or_file, label, problems):
            for key in PREDICTION_LABEL_FIELDS:
                if key in record:
                    having.add(key)
                else:
                    lacking[key].append(number)
            prediction = parse_prediction_line(record, number, label, problems, task, by_id)
            if prediction is None:
                continue
            if prediction.id in first_line:
                problems.add(
                    label,
                    number,
                    "id",
                    f"duplicate id {prediction.id!r} (first on line {first_line[prediction.id]})",
                )
                continue
            first_line[prediction.id] = number
            predictions.append(prediction)
    if not predictions and len(problems) == before:
        # Scored, it would be a token F1 of 0 (every gold instance unpredicted).
        problems.add(label, None, None, "file is empty: it has no predictions")
    for key in sorted(having):
        for number in lacking[key]:
            problems.add(label, number, key, "missing, but other lines have it: all or none")
    if raise_at_end:
        problems.raise_if_any()
    return predictions


def read_benchmark(
    gold_path: PathOrFile, pred_path: PathOrFile, task: str, language: str
) -> tuple[list[BenchmarkInstance], list[BenchmarkPrediction]]:
    """Both files of a scoring run, with the problems of both raised together."""
    problems = ProblemList()
    gold = read_benchmark_gold(gold_path, task, language, problems=problems)
    gold_ok = not problems
    # Ids of gold lines with problems (or of an empty gold file) are unknown; checking
    # against a partial gold would report their predictions as strangers.
    predictions = read_benchmark_predictions(
        pred_path, task, gold if gold_ok else None, problems=problems
    )
    problems.raise_if_any()
    return gold, predictions


# ---------------------------------------------------------------- language

_CHINESE_CHARACTER = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_LETTER = re.compile(r"[A-Za-z]")
# Chinese files hold Latin letters too (names, units) and English ones the odd Chinese
# name: only a clear majority either way decides.
CHINESE_SHARE_ABOVE = 0.6
CHINESE_SHARE_BELOW = 0.05


def language_of_tokens(instances: Sequence[BenchmarkInstance]) -> tuple[str | None, str]:
    """The language the gold tokens are written in ("zh", "en", or None when mixed or
    without letters), and the count that says so."""
    text = "".join(t for inst in instances for sentence in inst.tokens for t in sentence)
    chinese = len(_CHINESE_CHARACTER.findall(text))
    letters = chinese + len(_LATIN_LETTER.findall(text))
    if not letters:
        return None, "no letters"
    evidence = f"{chinese} of {letters} letters are Chinese characters"
    share = chinese / letters
    if share > CHINESE_SHARE_ABOVE:
        return "zh", evidence
    if share < CHINESE_SHARE_BELOW:
        return "en", evidence
    return None, evidence


# ---------------------------------------------------------------- writing


def gold_record(instance: BenchmarkInstance, task: str, language: str = "en") -> dict:
    """The JSON object of one gold line (ValueError when the instance does not fit `task`)."""
    layout = task_layout(task, language)
    if len(instance.tokens) != layout.n_sentences or (
        len(instance.rationale_sets) != layout.n_sentences
    ):
        raise ValueError(
            f"sent_id {instance.sent_id!r}: {task} needs {layout.n_sentences} sentence(s) of "
            f"tokens and of rationale sets"
        )
    if not layout.alternative_sets and any(len(sets) != 1 for sets in instance.rationale_sets):
        raise ValueError(f"sent_id {instance.sent_id!r}: {task} has one rationale set per sentence")
    record: dict[str, Any] = {"sent_id": instance.sent_id}
    record.update((k, instance.texts[k]) for k in layout.text_fields if k in instance.texts)
    record.update(zip(layout.token_fields, instance.tokens, strict=True))
    if instance.label is not None:
        record["sent_label"] = instance.label
    if layout.alternative_sets:
        record[layout.rationale_fields[0]] = instance.rationale_sets[0]
    else:
        record.update(
            (key, sets[0])
            for key, sets in zip(layout.rationale_fields, instance.rationale_sets, strict=True)
        )
    record["sample_type"] = instance.sample_type
    if instance.is_original:
        record["rel_ids"] = instance.rel_ids
    record.update(instance.extra)
    return record


def prediction_record(prediction: BenchmarkPrediction) -> dict:
    """The JSON object of one prediction line (absent labels and tokens are left out)."""
    record: dict[str, Any] = {"id": prediction.id}
    if prediction.pred_label is not None:
        record["pred_label"] = prediction.pred_label
    record["rationale"] = prediction.rationale
    if prediction.rationale_tokens is not None:
        record["rationale_token"] = prediction.rationale_tokens
    for key in ("rationale_pred", "no_rationale_pred"):
        if getattr(prediction, key) is not None:
            record[key] = getattr(prediction, key)
    record.update(prediction.extra)
    return record


def _write_lines(records: Iterable[dict], path_or_file: PathOrFile) -> int:
    """Write one JSON object per line, UTF-8 (Chinese stays readable); to a path atomically."""
    if isinstance(path_or_file, str | os.PathLike):
        path = Path(path_or_file)
        partial = path.with_name(path.name + ".partial")
        try:
            with open(partial, "wb") as handle:
                count = _write_lines(records, handle)
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
        return count
    text = isinstance(path_or_file, io.TextIOBase)
    count = 0
    for record in records:
        line = orjson.dumps(record) + b"\n"
        path_or_file.write(line.decode("utf-8") if text else line)
        count += 1
    return count


def write_benchmark_gold(
    instances: Iterable[BenchmarkInstance],
    path_or_file: PathOrFile,
    task: str,
    language: str = "en",
) -> int:
    """Write gold lines to a path (atomically) or an open file; returns the line count."""
    return _write_lines((gold_record(i, task, language) for i in instances), path_or_file)


def write_benchmark_predictions(
    predictions: Iterable[BenchmarkPrediction], path_or_file: PathOrFile
) -> int:
    """Write prediction lines to a path (atomically) or an open file; returns the line count."""
    return _write_lines((prediction_record(p) for p in predictions), path_or_file)


__all__ = [
    "LANGUAGES",
    "ORIGINAL",
    "PERTURBED",
    "TASKS",
    "BenchmarkInstance",
    "BenchmarkPrediction",
    "TaskLayout",
    "gold_record",
    "language_of_tokens",
    "prediction_record",
    "read_benchmark",
    "read_benchmark_gold",
    "read_benchmark_predictions",
    "task_layout",
    "write_benchmark_gold",
    "write_benchmark_predictions",
]
