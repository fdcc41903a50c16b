"""Reading a dataset's files: unsafe archive entries, byte-order marks, undecodable bytes."""

import io
import zipfile

import pytest

from rationale_metrics.jsonl import unstorable_character
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.sources import (
    UTF8_BOM,
    ZipSource,
    decoded_lines,
    iter_lines,
    utf8_error,
    zip_entry_problem,
)


@pytest.mark.parametrize(
    "name",
    [
        "../evil.txt",
        "ds/../../etc/cron.d/x",
        "ds/docs/..",
        "/etc/passwd",
        "C:/Windows/evil.dll",
        "c:evil",
        "ds\\..\\evil",
        "ds\\docs\\d1",
    ],
)
def test_unsafe_entry_names_are_named(name):
    assert zip_entry_problem(name) is not None


@pytest.mark.parametrize(
    "name", ["ds/docs/d1", "train.jsonl", "ds/docs/a..b", "ds/docs/...", "ds/docs/", "ds/C:x"]
)
def test_safe_entry_names_pass(name):
    assert zip_entry_problem(name) is None


def _archive(names) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name in names:
            zf.writestr(zipfile.ZipInfo(name), b"x")
    buffer.seek(0)
    return buffer


def test_an_archive_with_unsafe_entries_is_refused_whole_naming_each():
    archive = _archive(["ds/train.jsonl", "ds/../evil", "ds/docs/d1", "/abs"])

    with pytest.raises(DataValidationError) as caught:
        ZipSource(archive, label="ds.zip")

    assert [(p.file, p.line, p.field) for p in caught.value.problems] == [
        ("ds.zip", None, "ds/../evil"),
        ("ds.zip", None, "/abs"),
    ]
    assert "refused whole" in caught.value.problems[0].message


def test_a_byte_order_mark_is_left_out_of_the_first_line_only():
    stream = io.BytesIO(UTF8_BOM + b"a\n" + UTF8_BOM + b"b\n")

    lines = [raw for _, raw, _ in iter_lines(stream, max_line_bytes=100)]

    assert lines == [b"a\n", UTF8_BOM + b"b\n"]


def test_utf8_error_names_the_line_and_the_byte_in_it():
    assert utf8_error("é\nok\n".encode()) is None
    line, message = utf8_error(b"ok\ncaf\xe9\n")

    assert line == 2
    assert message.startswith("not valid UTF-8: byte 4 of the line is 0xE9 (")


def test_utf8_error_tells_utf16_apart():
    _, message = utf8_error("text".encode("utf-16"))

    assert "the file is UTF-16" in message


def test_decoded_lines_names_each_bad_line_and_goes_on():
    problems = ProblemList()
    stream = io.BytesIO(b"a\xff\nb\nc\xfe\n")

    lines = list(decoded_lines(stream, label="t.csv", problems=problems, max_line_bytes=100))

    assert lines == ["a\ufffd\n", "b\n", "c\ufffd\n"]
    assert [(p.file, p.line) for p in problems] == [("t.csv", 1), ("t.csv", 3)]


def test_unstorable_character_names_the_place_inside_a_value():
    assert unstorable_character({"a": ["ok", "é"]}, "x") is None
    assert unstorable_character(["ok", {"t": "a\x00"}], "ev") == (
        "ev[1].t",
        "contains a NUL character (\\u0000)",
    )
    where, why = unstorable_character("x\udc80", "text")
    assert (where, why) == ("text", "contains a lone surrogate (\\udc80), which is no character")
