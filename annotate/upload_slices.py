"""A chunk's share of an upload that was checked whole: the records numbered start..stop-1
of a JSON-lines file, or of an ERASER dataset's documents and instances. Plain functions
over files, no ORM: an import's chunk reads only its slice of the upload this way.

A checked file has one record per non-blank line (a line that was not a record failed the
check), so the k-th record is the k-th non-blank line; lines outside the slice are
counted, never parsed. An ERASER dataset's records are its documents, in the reader's
order (the `docs/` folder's sorted names, or the lines of `docs.jsonl`), then the
instances of train, val and test in that order: the order the one-step import writes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

import orjson

from rationale_metrics.eraser import (
    SPLITS,
    EraserDocument,
    Instance,
    document_from_jsonl_text,
    document_from_lines_file,
    parse_instance,
)
from rationale_metrics.problems import ProblemList
from rationale_metrics.sources import UTF8_BOM, DatasetSource, iter_lines


def numbered_records(
    stream: BinaryIO, start: int, stop: int, *, max_line_bytes: int, first: int = 0
) -> Iterator[tuple[int, int, dict | None]]:
    """(record index, line number, object) for every record of a checked JSON-lines stream
    whose first record is numbered `first`, up to `stop`: the object only for the records
    start..stop-1, None before them (counted, not parsed)."""
    index = first
    for number, raw, _ in iter_lines(stream, max_line_bytes=max_line_bytes):
        if index >= stop:
            return
        if raw is None or not raw.strip():
            continue
        yield index, number, (orjson.loads(raw) if index >= start else None)
        index += 1


def eraser_documents_slice(
    source: DatasetSource, start: int, stop: int, *, max_line_bytes: int
) -> Iterator[EraserDocument]:
    """The documents start..stop-1 of a checked ERASER dataset, read as its reader reads them."""
    if source.is_dir("docs"):
        for name in source.list_files("docs")[start:stop]:
            with source.open(f"docs/{name}") as stream:
                raw = stream.read().removeprefix(UTF8_BOM)
            yield document_from_lines_file(name, raw.decode("utf-8"))
        return
    with source.open("docs.jsonl") as stream:
        for _, _, record in numbered_records(stream, start, stop, max_line_bytes=max_line_bytes):
            if record is not None:
                yield document_from_jsonl_text(record["docid"], record["document"])


def eraser_instances_slice(
    source: DatasetSource, start: int, stop: int, *, max_line_bytes: int, problems: ProblemList
) -> Iterator[Instance]:
    """The instances start..stop-1 (over train, val and test in that order) of a checked
    ERASER dataset, each parsed as its reader parses it."""
    first = 0  # the index of the file's first record
    for split in SPLITS:
        name = f"{split}.jsonl"
        if first >= stop:
            return
        if not source.exists(name):
            continue
        with source.open(name) as stream:
            records = numbered_records(
                stream, start, stop, max_line_bytes=max_line_bytes, first=first
            )
            for index, number, record in records:
                first = index + 1
                if record is None:
                    continue
                instance = parse_instance(
                    record,
                    split=split,
                    label=source.display(name),
                    number=number,
                    problems=problems,
                )
                if instance is not None:
                    yield instance
