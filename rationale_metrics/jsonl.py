"""Reading JSON-lines files line by line, reporting every bad line instead of stopping."""

from __future__ import annotations

import gc
import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import orjson

from rationale_metrics.problems import ProblemList
from rationale_metrics.sources import iter_lines, utf8_error


def json_kind(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def unstorable_character(value: Any, where: str) -> tuple[str, str] | None:
    """The first place in a JSON value holding a character no database text can hold, as
    (where, why), or None. `where` names the value; a place inside it extends it
    (`evidences[0][0].text`).

    NUL: PostgreSQL refuses it in text and JSON, and the whole import would fail on it
    mid-write. A lone UTF-16 surrogate (a JSON escape such as \\udc80 with no pair, which
    Python's json reader keeps) is no character at all and has no UTF-8 form."""
    if isinstance(value, str):
        if "\x00" in value:
            return where, "contains a NUL character (\\u0000)"
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                code = ord(value[exc.start])
                return where, f"contains a lone surrogate (\\u{code:04x}), which is no character"
        return None
    if isinstance(value, list):
        for i, inner in enumerate(value):
            if found := unstorable_character(inner, f"{where}[{i}]"):
                return found
    elif isinstance(value, dict):
        for key, inner in value.items():
            found = unstorable_character(key, where) or unstorable_character(
                inner, f"{where}.{key}" if where else key
            )
            if found:
                return found
    return None


_BIG_EXPONENT = re.compile(rb"\d[eE]\+?\d{3}")  # a double ends at 1.8e308


class _NotFinite(str):
    """A number as written that no double holds: NaN, Infinity, or out of range."""


def _not_finite_float(text: str) -> float | _NotFinite:
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


def non_finite_number(raw: bytes) -> tuple[str, str] | None:
    """(field, message) for the first NaN, Infinity or out-of-range number of a line
    that strict JSON refuses, or None when that is not why it fails.

    Only called on a line already refused, so a valid line is parsed once. Python's own
    reader accepts these numbers, which is how the field holding one is found."""
    if b"NaN" not in raw and b"Infinity" not in raw and not _BIG_EXPONENT.search(raw):
        return None  # nothing that could be one: spare a second parse of a broken line
    try:
        record = json.loads(raw, parse_constant=_NotFinite, parse_float=_not_finite_float)
        found = _first_not_finite(record, "")
    except (ValueError, RecursionError):
        return None
    if found is None:
        return None
    where, text = found
    if text in ("NaN", "Infinity", "-Infinity"):
        why = f"got {text}, which JSON does not have (strict parsers refuse it)"
    else:
        why = f"got {text}, which is out of the range of a double"
    return where or "(the line)", f"must be a finite number, {why}"


def _first_not_finite(value: Any, where: str) -> tuple[str, str] | None:
    if isinstance(value, _NotFinite):
        return where, str(value)
    if isinstance(value, dict):
        for key, inner in value.items():
            if found := _first_not_finite(inner, f"{where}.{key}" if where else key):
                return found
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            if found := _first_not_finite(inner, f"{where}[{i}]"):
                return found
    return None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while whole files are parsed and kept.

    Parsed JSON is trees, never cycles, so there is nothing for the collector to find; but
    each of its passes walks every container still alive, and keeping a file's hundreds of
    thousands of dicts and lists alive makes those passes as costly as the parsing itself.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def iter_json_objects(
    stream: BinaryIO, *, label: str, problems: ProblemList, max_line_bytes: int
) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line holding a JSON object.

    Over-long lines, bytes that are not UTF-8, malformed JSON (NaN, Infinity and
    out-of-range numbers included) and non-object lines are added to `problems` with their
    line number and skipped.
    """
    for number, raw, length in iter_lines(stream, max_line_bytes=max_line_bytes):
        if raw is None:
            problems.add(
                label,
                number,
                None,
                f"line is {length} bytes, over the limit of {max_line_bytes} bytes",
            )
            continue
        if not raw.strip():
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            # orjson words bytes that are not UTF-8 as "surrogates not allowed"; checked
            # only here, so a valid line is decoded once.
            undecodable = utf8_error(raw)
            if undecodable:
                problems.add(label, number, None, undecodable[1])
            elif found := non_finite_number(raw):
                problems.add(label, number, *found)
            else:
                problems.add(label, number, None, f"malformed JSON: {exc}")
            continue
        if not isinstance(record, dict):
            problems.add(label, number, None, f"expected a JSON object, got {json_kind(record)}")
            continue
        yield number, record
