"""Write ERASER datasets that both ERASER readers load identically
(docs/reference/metrics.md#eraser-dataset-directory).

Documents are written as sentences of single-space-separated tokens joined by newlines:
no empty lines, no leading, trailing or double spaces, no token containing whitespace.
Instance lines have sorted keys; evidences carry token offsets, sentence indexes computed
from the document's sentences, and the covered tokens joined by one space.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO

import numpy as np

from rationale_metrics.file_names import file_name_problem
from rationale_metrics.zip_stream import StreamingZip

_WHITESPACE = re.compile(r"\s")


class DocumentNotExportable(ValueError):
    pass


@dataclass
class ExportDocument:
    docid: str
    tokens: Sequence[str]
    sentence_ranges: np.ndarray  # (s, 2) token ranges

    def check(self) -> None:
        if problem := file_name_problem(self.docid):
            raise DocumentNotExportable(
                f"docid {self.docid[:80]!r} cannot be a file name: {problem}"
            )
        # One regex pass over all tokens; only on a hit find which token it was.
        if _WHITESPACE.search("\x00".join(self.tokens)) or "" in self.tokens:
            for i, token in enumerate(self.tokens):
                if not token or _WHITESPACE.search(token):
                    raise DocumentNotExportable(
                        f"document {self.docid!r}: token {i} ({token!r}) is empty or contains whitespace"
                    )
        if any(end <= start for start, end in self.sentence_ranges.tolist()):
            raise DocumentNotExportable(f"document {self.docid!r} has an empty sentence")

    def text(self) -> str:
        return "\n".join(" ".join(self.tokens[s:e]) for s, e in self.sentence_ranges.tolist())

    def sentence_of(self, token: int) -> int:
        starts = self.sentence_ranges[:, 0]
        return int(np.searchsorted(starts, token, side="right") - 1)


@dataclass
class ExportEvidence:
    docid: str
    start_token: int
    end_token: int
    # Given values win (a round trip keeps them); None means "compute from the document".
    start_sentence: int | None = None
    end_sentence: int | None = None
    text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    keys: Sequence[str] | None = None  # the keys to write, when reproducing an imported record

    def record(self, document: ExportDocument) -> dict:
        start_sentence = self.start_sentence
        end_sentence = self.end_sentence
        if start_sentence is None:
            start_sentence = document.sentence_of(self.start_token)
        if end_sentence is None:
            end_sentence = document.sentence_of(max(self.end_token - 1, self.start_token)) + 1
        text = (
            self.text
            if self.text is not None
            else " ".join(document.tokens[self.start_token : self.end_token])
        )
        full = {
            "docid": self.docid,
            "start_token": self.start_token,
            "end_token": self.end_token,
            "start_sentence": start_sentence,
            "end_sentence": end_sentence,
            "text": text,
            **self.extra,
        }
        if self.keys is not None:
            return {key: full[key] for key in self.keys if key in full}
        return full


@dataclass
class ExportInstance:
    annotation_id: str | int
    classification: str | None
    docids: list[str] | None
    evidences: list[list[ExportEvidence]]
    query: str | None
    query_type: str | None
    extra: dict[str, Any] = field(default_factory=dict)
    omit_keys: Sequence[str] = ()  # keys the source line did not have (e.g. movies has no docids)

    def line(self, documents: dict[str, ExportDocument]) -> str:
        record = {
            "annotation_id": self.annotation_id,
            "classification": self.classification,
            "docids": self.docids,
            "evidences": [
                [ev.record(documents[ev.docid]) for ev in group] for group in self.evidences
            ],
            "query": self.query,
            "query_type": self.query_type,
            **self.extra,
        }
        for key in self.omit_keys:
            record.pop(key, None)
        return json.dumps(record, sort_keys=True, ensure_ascii=False)


def runs_of(tokens: Iterable[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for token in sorted(set(tokens)):
        if spans and spans[-1][1] == token:
            spans[-1] = (spans[-1][0], token + 1)
        else:
            spans.append((token, token + 1))
    return spans


class DatasetSink(Protocol):
    """Where a dataset's files go: a directory, or straight into a zip archive."""

    def write_text(self, name: str, text: str) -> None: ...

    def open_text(self, name: str) -> TextIO: ...

    def open_bytes(self, name: str) -> BinaryIO: ...


class DirectorySink:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def write_text(self, name: str, text: str) -> None:
        self._path(name).write_text(text, encoding="utf-8")

    def open_text(self, name: str) -> TextIO:
        return open(self._path(name), "w", encoding="utf-8")

    def open_bytes(self, name: str) -> BinaryIO:
        return open(self._path(name), "wb")

    def close(self) -> None:
        pass


class ZipSink:
    """Writes members under `root_name/` of a zip, one after the other, each as it is
    made: a stream from open_text or open_bytes is a member being written, to be closed
    before the next begins. The archive is deterministic (rationale_metrics/zip_stream.py):
    the same files in the same order give the same bytes."""

    def __init__(self, path: Path, root_name: str):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "wb")  # noqa: SIM115 - closed in close()
        self.archive = StreamingZip(self.file, compresslevel=1)
        self.root_name = root_name

    def write_text(self, name: str, text: str) -> None:
        self.archive.write(f"{self.root_name}/{name}", text.encode("utf-8"))

    def open_bytes(self, name: str) -> BinaryIO:
        return io.BufferedWriter(self.archive.open(f"{self.root_name}/{name}"), 1 << 16)

    def open_text(self, name: str) -> TextIO:
        return io.TextIOWrapper(self.open_bytes(name), encoding="utf-8", newline="")

    def close(self) -> None:
        try:
            self.archive.close()
        finally:
            self.file.close()


def write_documents(sink: DatasetSink, documents: Iterable[ExportDocument], layout: str) -> int:
    """Write `docs/` (one file per docid) or `docs.jsonl`; returns how many."""
    count = 0
    if layout == "docs":
        for document in documents:
            document.check()
            sink.write_text(f"docs/{document.docid}", document.text() + "\n")
            count += 1
    else:
        with sink.open_text("docs.jsonl") as handle:
            for document in documents:
                document.check()
                handle.write(
                    json.dumps(
                        {"docid": document.docid, "document": document.text()}, ensure_ascii=False
                    )
                )
                handle.write("\n")
                count += 1
    return count
