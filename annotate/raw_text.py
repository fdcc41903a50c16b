"""Read JSONL or CSV files of raw texts with labels, validating every row. No ORM here.

Fields: `text` and `label` (required), `id`, `query`, `query_type`, `split` (optional).
The first pass keeps only a small record per row, so the file is streamed, not loaded.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rationale_metrics.problems import ProblemList
from rationale_metrics.sources import iter_lines

KNOWN_FIELDS = ("id", "text", "label", "query", "query_type", "split")
SPLIT_NAMES = ("train", "val", "test", "")


@dataclass
class RawTextRow:
    line: int
    item_id: str | int
    label: str
    split: str
    query: str | None
    query_type: str | None
    text_sha256: str
    text: str = ""  # filled only while streaming the second pass


def _kind(value) -> str:
    return "null" if value is None else type(value).__name__


def _generated_id(text: str, query: str | None) -> str:
    digest = hashlib.sha1((query or "").encode() + b"\x00" + text.encode()).hexdigest()  # noqa: S324
    return f"doc-{digest[:16]}"


def _iter_jsonl(path: Path, label: str, problems: ProblemList, max_line_bytes: int):
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
                record = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                problems.add(label, number, None, f"malformed JSON: {exc}")
                continue
            if not isinstance(record, dict):
                problems.add(label, number, None, f"expected a JSON object, got {_kind(record)}")
                continue
            yield number, record


def _iter_csv(path: Path, label: str, problems: ProblemList, max_line_bytes: int):
    csv.field_size_limit(max_line_bytes)
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return
        missing = [f for f in ("text", "label") if f not in reader.fieldnames]
        if missing:
            problems.add(label, 1, ",".join(missing), "missing column(s) in the header")
            return
        try:
            for record in reader:
                number = reader.line_num
                if None in record:
                    problems.add(label, number, None, "row has more cells than the header")
                    continue
                yield number, {k: (v if v != "" else None) for k, v in record.items() if k}
        except csv.Error as exc:
            problems.add(label, reader.line_num, None, f"malformed CSV: {exc}")
        except UnicodeDecodeError as exc:
            problems.add(label, None, None, f"not valid UTF-8: {exc.reason}")


def iter_raw_records(
    path: Path, *, source_format: str, label: str, problems: ProblemList, max_line_bytes: int
) -> Iterator[tuple[int, dict]]:
    reader = _iter_jsonl if source_format == "jsonl" else _iter_csv
    yield from reader(path, label, problems, max_line_bytes)


def check_raw_record(
    record: dict, *, number: int, label: str, problems: ProblemList, from_csv: bool
) -> RawTextRow | None:
    before = len(problems)
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        problems.add(label, number, "text", f"must be a non-empty string, got {_kind(text)}")
    lab = record.get("label")
    if not isinstance(lab, str) or not lab:
        problems.add(label, number, "label", f"must be a non-empty string, got {_kind(lab)}")
    split = record.get("split") or ""
    if not isinstance(split, str) or split not in SPLIT_NAMES:
        problems.add(label, number, "split", f"must be one of train, val, test; got {split!r}")
    for key in ("query", "query_type"):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            problems.add(label, number, key, f"must be a string, got {_kind(value)}")
    item_id = record.get("id")
    if item_id is not None:
        valid_int = isinstance(item_id, int) and not isinstance(item_id, bool) and not from_csv
        if not (isinstance(item_id, str) and item_id) and not valid_int:
            problems.add(
                label, number, "id", f"must be a non-empty string or integer, got {_kind(item_id)}"
            )
    unknown = sorted(set(record) - set(KNOWN_FIELDS))
    if unknown:
        problems.add(label, number, unknown[0], f"unknown field(s): {', '.join(unknown)}")
    if len(problems) > before:
        return None
    return RawTextRow(
        line=number,
        item_id=item_id if item_id is not None else _generated_id(text, record.get("query")),
        label=lab,
        split=split,
        query=record.get("query"),
        query_type=record.get("query_type"),
        text_sha256=hashlib.sha256(text.encode()).hexdigest(),
    )


def read_raw_rows(
    path: Path,
    *,
    source_format: str,
    label: str,
    problems: ProblemList,
    max_line_bytes: int,
    keep_text: bool = False,
) -> Iterator[RawTextRow]:
    for number, record in iter_raw_records(
        path,
        source_format=source_format,
        label=label,
        problems=problems,
        max_line_bytes=max_line_bytes,
    ):
        row = check_raw_record(
            record, number=number, label=label, problems=problems, from_csv=source_format == "csv"
        )
        if row is not None:
            if keep_text:
                row.text = record["text"]
            yield row
