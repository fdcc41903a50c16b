"""Read JSONL or CSV files of raw texts with labels, validating every row. No ORM here.

Which fields a row has depends on the project's task type (`FIELDS`):

- classification: `text` and `label`;
- sentence_pair: `text_a`, `text_b` and `label`;
- reading_comprehension: `question`, `passage`, and the answer as text (`answer`, found
  in the passage) or character offsets (`answer_start`, `answer_end`), or an empty or
  null `answer` for "no answer"; `label` optional;
- multiple_choice: `question`, `options` and `label` naming the right option; in a CSV
  file the options are the columns `option_1`, `option_2`, ... (empty cells at the end
  of a row are fewer options).

All take `id`, `query_type` and `split`; classification and text pairs also `query`.
The first pass keeps only a small record per row, so the file is streamed, not loaded.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from annotate.task_types import OPTION_SEPARATOR, answer_char_span
from rationale_metrics.file_names import (
    MAX_QUERY_TYPE_CHARACTERS,
    file_name_problem,
    text_length_problem,
)
from rationale_metrics.jsonl import unstorable_character
from rationale_metrics.problems import ProblemList
from rationale_metrics.sources import decoded_lines, iter_lines, utf8_error

COMMON_FIELDS = ("id", "query_type", "split")
# Per task type: the fields a row must have, and those it may have besides the common ones.
FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "classification": (("text", "label"), ("query",)),
    "sentence_pair": (("text_a", "text_b", "label"), ("query",)),
    "reading_comprehension": (
        ("question", "passage"),
        ("answer", "answer_start", "answer_end", "label"),
    ),
    "multiple_choice": (("question", "options", "label"), ()),
}
# The documents a row makes: (field, docid suffix, role). The first text of a single-text
# or multiple-choice row is named by the item id alone, as raw imports always did.
DOCUMENT_FIELDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "classification": (("text", "", "text"),),
    "sentence_pair": (("text_a", ":a", "text"), ("text_b", ":b", "text")),
    "reading_comprehension": (
        ("question", ":question", "question"),
        ("passage", ":passage", "text"),
    ),
    "multiple_choice": (("question", "", "text"),),
}
SPLIT_NAMES = ("train", "val", "test", "")
CSV_OPTION = re.compile(r"option_([1-9][0-9]*)")
MIN_OPTIONS = 2


@dataclass
class RawDocument:
    docid: str
    role: str
    source_field: str
    text_sha256: str
    text: str = ""  # filled only while streaming the second pass


@dataclass
class RawTextRow:
    line: int
    item_id: str | int
    label: str | None
    split: str
    query: str | None
    query_type: str | None
    documents: list[RawDocument]
    task_type: str = "classification"
    # {"docid", "start_char", "end_char", "text"} or {"none": True}; reading comprehension.
    answer: dict | None = None
    options: list[str] = field(default_factory=list)


def _given(value) -> str:
    """What a field holds, in words an admin reading the import report knows: not Python's
    type names ("got str" said nothing about an empty cell)."""
    if value is None:
        return "it is missing (or null)"
    if isinstance(value, str):
        return "it is empty" if not value.strip() else f"it is {value[:40]!r}"
    if isinstance(value, bool):
        return f"it is {str(value).lower()}"
    if isinstance(value, int | float):
        return f"it is the number {value}"
    if isinstance(value, list):
        return "it is a list"
    if isinstance(value, dict):
        return "it is an object"
    return f"it is a {type(value).__name__}"


def _generated_id(text: str, query: str | None) -> str:
    digest = hashlib.sha1((query or "").encode() + b"\x00" + text.encode()).hexdigest()  # noqa: S324
    return f"doc-{digest[:16]}"


def required_csv_columns(task_type: str) -> list[str]:
    required, _ = FIELDS[task_type]
    if task_type == "multiple_choice":
        return [f for f in required if f != "options"] + ["option_1", "option_2"]
    return list(required)


def _iter_jsonl(path: Path, label: str, problems: ProblemList, max_line_bytes: int, task_type):
    with open(path, "rb") as stream:
        for number, raw, length in iter_lines(stream, max_line_bytes=max_line_bytes):
            if raw is None:
                problems.add(
                    label,
                    number,
                    None,
                    f"line is {length} bytes, over the limit of {max_line_bytes}",
                )
                continue
            if not raw.strip():
                continue
            try:
                # Decoded first: json.loads(bytes) lets UTF-16 surrogates written as bytes
                # through, and words other bad bytes by their offset in a buffer.
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems.add(label, number, None, utf8_error(raw)[1])
                continue
            try:
                record = json.loads(text)
            except (ValueError, RecursionError) as exc:
                problems.add(label, number, None, f"malformed JSON: {exc}")
                continue
            if not isinstance(record, dict):
                problems.add(
                    label,
                    number,
                    None,
                    f"each line must be a JSON object ({{...}}), but {_given(record)}",
                )
                continue
            yield number, record


def _iter_csv(path: Path, label: str, problems: ProblemList, max_line_bytes: int, task_type):
    csv.field_size_limit(max_line_bytes)
    with open(path, "rb") as stream:
        lines = decoded_lines(stream, label=label, problems=problems, max_line_bytes=max_line_bytes)
        before = len(problems)
        rows = csv_records(_csv_lines(lines), label, problems)
        header = next(rows, None)
        if header is None or len(problems) > before:
            return  # no header, or none that can be trusted to name the columns
        _, fieldnames = header
        missing = [f for f in required_csv_columns(task_type) if f not in fieldnames]
        if task_type == "reading_comprehension" and "answer" not in fieldnames:
            missing += [f for f in ("answer_start", "answer_end") if f not in fieldnames]
        if missing:
            problems.add(label, 1, ",".join(missing), "missing column(s) in the header")
            return
        for number, row in rows:
            if len(row) != len(fieldnames):
                problems.add(
                    label,
                    number,
                    None,
                    f"row has {len(row)} fields, but the header has {len(fieldnames)}: a "
                    "field is missing or extra, or a comma or quote is out of place",
                )
                continue
            cells = zip(fieldnames, row, strict=True)
            yield number, {k: (v if v != "" else None) for k, v in cells if k}


# A carriage return not followed by a line feed: the line end of old Mac files.
_LONE_CR = re.compile(r"(?<=\r)(?!\n)")


def _csv_lines(lines: Iterator[str]) -> Iterator[str]:
    """`lines` (split at line feeds) split at lone carriage returns too, as a file opened
    with newline="" would be, for the csv module takes a string as one line."""
    for line in lines:
        yield from (part for part in _LONE_CR.split(line) if part)


def csv_records(lines, label: str, problems: ProblemList) -> Iterator[tuple[int, list[str]]]:
    """(first line, fields) of each non-blank CSV record read from `lines`.

    Strict parsing: a quote must end its field. Without it a quote left open swallows the
    lines after it, up to the next quote, into one field, and rows vanish without a word.
    A record the csv module refuses is named by the line it starts on, and reading goes on
    from the line after it.
    """
    reader = csv.reader(lines, strict=True)
    end = 0
    while True:
        start = end + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            end = reader.line_num
            problems.add(label, start, None, _csv_error(str(exc), start, end))
            continue
        end = reader.line_num
        if row:
            yield start, row


def _csv_error(reason: str, start: int, end: int) -> str:
    if reason == "unexpected end of data":
        return (
            "malformed CSV: a quote opened in the row starting on this line is never closed "
            f"(the file ends on line {end})"
        )
    if start < end:
        return (
            f"malformed CSV: the row starting on this line runs to line {end}, where the "
            f"csv reader stopped ({reason}): a quote opened in it may be closed too late"
        )
    return f"malformed CSV: {reason}"


def iter_raw_records(
    path: Path,
    *,
    source_format: str,
    label: str,
    problems: ProblemList,
    max_line_bytes: int,
    task_type: str = "classification",
) -> Iterator[tuple[int, dict]]:
    reader = _iter_jsonl if source_format == "jsonl" else _iter_csv
    yield from reader(path, label, problems, max_line_bytes, task_type)


def _csv_options(record: dict, add) -> list[str] | None:
    """The option_N cells of a CSV row in order; trailing empty cells are absent options."""
    numbered = sorted(
        (int(match.group(1)), key)
        for key in record
        if (match := CSV_OPTION.fullmatch(key)) is not None
    )
    cells = [record[key] for _, key in numbered]
    while cells and cells[-1] is None:
        cells.pop()
    for (_, key), cell in zip(numbered, cells, strict=False):
        if cell is None:
            add(key, "is empty while a later option is given")
            return None
    return cells


def _options(record: dict, add, from_csv: bool) -> list[str] | None:
    options = _csv_options(record, add) if from_csv else record.get("options")
    if options is None:
        if not from_csv:
            add("options", "must be a list of option texts, but it is missing (or null)")
        return None
    if not isinstance(options, list):
        add("options", f"must be a list of option texts, but {_given(options)}")
        return None
    bad = [i for i, o in enumerate(options) if not isinstance(o, str) or not o.strip()]
    if bad:
        add("options", f"option {bad[0] + 1} needs some text, but {_given(options[bad[0]])}")
        return None
    if len(options) < MIN_OPTIONS:
        add("options", f"needs at least {MIN_OPTIONS} options, but it has {len(options)}")
        return None
    if len(set(options)) != len(options):
        add("options", "the same option is given twice, so a label could not name one")
        return None
    joined = [o for o in options if OPTION_SEPARATOR.strip() in o]
    if joined:
        add("options", f"option {joined[0]!r} contains {OPTION_SEPARATOR.strip()!r}")
        return None
    return options


def _offset(record: dict, key: str, from_csv: bool) -> tuple[int | None, str | None]:
    """A character offset of the answer, or why the value is not one."""
    value = record.get(key)
    if value is None:
        return None, None
    if from_csv and isinstance(value, str) and re.fullmatch(r"\s*-?[0-9]+\s*", value):
        return int(value), None
    if isinstance(value, int) and not isinstance(value, bool):
        return value, None
    return None, f"must be a character offset (a whole number), but {_given(value)}"


def _answer(record: dict, passage: str, passage_docid: str, add, from_csv: bool) -> dict | None:
    given = [k for k in ("answer", "answer_start", "answer_end") if k in record]
    if not given:
        add(
            "answer",
            "is required: the answer text, or answer_start and answer_end, or null "
            "(an empty cell in CSV) for no answer",
        )
        return None
    text = record.get("answer")
    if text is not None and not isinstance(text, str):
        add("answer", f"must be the answer's text, or empty for no answer, but {_given(text)}")
        return None
    if text is not None and not text.strip():
        text = None
    start, start_problem = _offset(record, "answer_start", from_csv)
    end, end_problem = _offset(record, "answer_end", from_csv)
    if start_problem or end_problem:
        for key, problem in (("answer_start", start_problem), ("answer_end", end_problem)):
            if problem:
                add(key, problem)
        return None
    if text is None and start is None and end is None:
        return {"none": True}
    span, problem = answer_char_span(passage, text, start, end)
    if problem is not None:
        add(*problem)
        return None
    assert span is not None
    return {
        "docid": passage_docid,
        "start_char": span[0],
        "end_char": span[1],
        "text": passage[span[0] : span[1]],
    }


def check_raw_record(
    record: dict,
    *,
    number: int,
    label: str,
    problems: ProblemList,
    from_csv: bool,
    task_type: str = "classification",
) -> RawTextRow | None:
    before = len(problems)

    def add(field_name: str | None, message: str) -> None:
        problems.add(label, number, field_name, message)

    required, optional = FIELDS[task_type]
    for key, value in record.items():
        if found := unstorable_character(value, key):
            add(*found)
    texts: dict[str, str] = {}
    for source_field, _, _ in DOCUMENT_FIELDS[task_type]:
        value = record.get(source_field)
        if not isinstance(value, str) or not value.strip():
            add(source_field, f"needs some text, but {_given(value)}")
        else:
            texts[source_field] = value
    lab = record.get("label")
    label_wanted = "label" in required or lab is not None
    if label_wanted and (not isinstance(lab, str) or not lab):
        add("label", f"needs a label, but {_given(lab)}")
    split = record.get("split") or ""
    if not isinstance(split, str) or split not in SPLIT_NAMES:
        add("split", f"must be one of train, val, test; got {split!r}")
    for key in ("query", "query_type"):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            add(key, f"must be text, but {_given(value)}")
    query_type = record.get("query_type")
    if isinstance(query_type, str) and (
        problem := text_length_problem(query_type, MAX_QUERY_TYPE_CHARACTERS)
    ):
        add("query_type", problem)
    item_id = record.get("id")
    if item_id is not None:
        valid_int = isinstance(item_id, int) and not isinstance(item_id, bool) and not from_csv
        if not (isinstance(item_id, str) and item_id) and not valid_int:
            add("id", f"must be text or a whole number, but {_given(item_id)}")
    known = set(required) | set(optional) | set(COMMON_FIELDS)
    unknown = sorted(
        key
        for key in set(record) - known
        if not (from_csv and task_type == "multiple_choice" and CSV_OPTION.fullmatch(key))
    )
    if unknown:
        add(unknown[0], f"unknown field(s): {', '.join(unknown)}")

    options: list[str] = []
    if task_type == "multiple_choice":
        options = _options(record, add, from_csv) or []
        if options and isinstance(lab, str) and lab and lab not in options:
            add("label", f"{lab!r} is not one of the options {options}")
    if len(problems) > before:
        return None

    query = record.get("query")
    if task_type == "reading_comprehension":
        query = texts["question"]
    elif task_type == "multiple_choice":
        # As ERASER's CoS-E writes it, so that an export reads like CoS-E.
        query = OPTION_SEPARATOR.join(options)
    if item_id is None:
        parts = [texts[f] for f, _, _ in DOCUMENT_FIELDS[task_type]]
        if task_type == "classification":
            item_id = _generated_id(parts[0], query)
        else:
            item_id = _generated_id("\x00".join([*parts[1:], *options]), parts[0])
    documents = [
        RawDocument(
            docid=f"{item_id}{suffix}",
            role=role,
            source_field=source_field,
            text_sha256=hashlib.sha256(texts[source_field].encode()).hexdigest(),
        )
        for source_field, suffix, role in DOCUMENT_FIELDS[task_type]
    ]
    for document in documents:
        if problem := file_name_problem(document.docid):
            add("id", f"cannot name its document {document.docid[:80]!r}: it {problem}")
            return None
    answer = None
    if task_type == "reading_comprehension":
        answer = _answer(record, texts["passage"], documents[1].docid, add, from_csv)
        if answer is None:
            return None
    return RawTextRow(
        line=number,
        item_id=item_id,
        label=lab,
        split=split,
        query=query,
        query_type=record.get("query_type"),
        documents=documents,
        task_type=task_type,
        answer=answer,
        options=options,
    )


def read_raw_rows(
    path: Path,
    *,
    source_format: str,
    label: str,
    problems: ProblemList,
    max_line_bytes: int,
    keep_text: bool = False,
    task_type: str = "classification",
) -> Iterator[RawTextRow]:
    for number, record in iter_raw_records(
        path,
        source_format=source_format,
        label=label,
        problems=problems,
        max_line_bytes=max_line_bytes,
        task_type=task_type,
    ):
        row = check_raw_record(
            record,
            number=number,
            label=label,
            problems=problems,
            from_csv=source_format == "csv",
            task_type=task_type,
        )
        if row is not None:
            if keep_text:
                for document in row.documents:
                    document.text = record[document.source_field]
            yield row
