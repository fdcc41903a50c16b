"""Read ERASER datasets (docs/reference/metrics.md#eraser-dataset-directory), validating
everything before returning.

A reader returns plain dataclasses. Problems are collected, never raised one at a time:
`read_eraser_dataset` raises `DataValidationError` carrying all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rationale_metrics.choices import SPLITS
from rationale_metrics.file_names import (
    MAX_ID_CHARACTERS,
    MAX_QUERY_TYPE_CHARACTERS,
    file_name_problem,
    id_length_problem,
    text_length_problem,
)
from rationale_metrics.jsonl import (
    collector_paused,
    iter_json_objects,
    json_kind,
    unstorable_character,
)
from rationale_metrics.problems import ProblemList
from rationale_metrics.sources import UTF8_BOM, DatasetSource, utf8_error
from rationale_metrics.span_rules import span_problem

INSTANCE_KEYS = ("annotation_id", "classification", "docids", "evidences", "query", "query_type")
EVIDENCE_KEYS = ("docid", "start_token", "end_token", "start_sentence", "end_sentence", "text")
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024


class EraserDocument:
    """A document and its tokens under one of ERASER's two reading rules.

    Offsets are computed on first use: scoring needs only the token and sentence counts,
    which for the `docs.jsonl` rule are a count of separators.
    """

    __slots__ = ("_n_sentences", "_n_tokens", "_offsets", "_sentences", "docid", "rule", "text")

    def __init__(self, docid: str, text: str, rule: str):
        self.docid, self.text, self.rule = docid, text, rule
        self._offsets: np.ndarray | None = None
        self._sentences: np.ndarray | None = None
        self._n_tokens: int | None = None
        self._n_sentences: int | None = None

    def _compute(self) -> None:
        reader = _lines_file_offsets if self.rule == "docs" else _jsonl_offsets
        self._offsets, self._sentences = reader(self.text)

    @property
    def token_offsets(self) -> np.ndarray:
        """Token char offsets into `text`, shape (n, 2)."""
        if self._offsets is None:
            self._compute()
        return self._offsets

    @property
    def sentence_ranges(self) -> np.ndarray:
        """Sentences as [start_token, end_token), shape (s, 2)."""
        if self._sentences is None:
            self._compute()
        return self._sentences

    def _count_separators(self) -> None:
        # The docs.jsonl reading makes a token per space or newline, and a sentence per
        # newline, so counting them is enough. In UTF-8 neither byte occurs inside another
        # character's bytes; numpy counts them several times faster than str.count.
        data = np.frombuffer(self.text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        newlines = int(np.count_nonzero(data == _NEWLINE))
        self._n_sentences = newlines + 1
        self._n_tokens = int(np.count_nonzero(data == _SPACE)) + newlines + 1

    @property
    def n_tokens(self) -> int:
        if self._n_tokens is None:
            if self._offsets is None and self.rule == "docs.jsonl":
                self._count_separators()
            else:
                self._n_tokens = len(self.token_offsets)
        return self._n_tokens

    @property
    def n_sentences(self) -> int:
        if self._n_sentences is None:
            if self._sentences is None and self.rule == "docs.jsonl":
                self._count_separators()
            else:
                self._n_sentences = len(self.sentence_ranges)
        return self._n_sentences

    @property
    def tokens(self) -> list[str]:
        text = self.text
        return [text[s:e] for s, e in self.token_offsets.tolist()]

    @property
    def sentences(self) -> list[list[str]]:
        toks = self.tokens
        return [toks[s:e] for s, e in self.sentence_ranges.tolist()]


@dataclass
class Evidence:
    docid: str
    start_token: int
    end_token: int
    start_sentence: int | None = None
    end_sentence: int | None = None
    text: str | None = None
    # Keys this record had, in the order read, and values of keys ERASER does not define.
    present_keys: tuple[str, ...] = EVIDENCE_KEYS
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Instance:
    annotation_id: str | int
    classification: str | None
    docids: list[str] | None
    evidences: list[list[Evidence]]
    query: str | None
    query_type: str | None
    split: str
    file: str
    line: int
    present_keys: tuple[str, ...] = INSTANCE_KEYS
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return str(self.annotation_id)

    def resolved_docids(self) -> list[str]:
        """The instance's documents: declared, else those its evidences name, else its id."""
        if self.docids:
            return list(self.docids)
        named: list[str] = []
        for group in self.evidences:
            for ev in group:
                if ev.docid not in named:
                    named.append(ev.docid)
        return named or [str(self.annotation_id)]


@dataclass
class EraserDataset:
    documents: dict[str, EraserDocument]
    splits: dict[str, list[Instance]]
    docs_layout: str  # "docs" (a folder) or "docs.jsonl"
    missing_splits: list[str] = field(default_factory=list)

    def instances(self) -> list[Instance]:
        return [inst for split in SPLITS for inst in self.splits.get(split, [])]


# ---------------------------------------------------------------- documents


# Every code point Python's str.strip() removes.
_WHITESPACE = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
_SPACE, _NEWLINE = 32, 10


def _code_points(text: str) -> np.ndarray:
    """One uint32 per character, so array indexes are char offsets."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _arrays(token_starts, token_ends, token_lines) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.stack([token_starts, token_ends], axis=1).astype(np.int64)
    if len(token_lines):
        boundaries = np.flatnonzero(np.diff(token_lines)) + 1
        firsts = np.concatenate(([0], boundaries))
        lasts = np.concatenate((boundaries, [len(token_lines)]))
        sentences = np.stack([firsts, lasts], axis=1).astype(np.int64)
    else:
        sentences = np.zeros((0, 2), np.int64)
    return offsets.reshape(-1, 2), sentences


def document_from_lines_file(docid: str, raw: str) -> EraserDocument:
    """The `docs/` reading: strip lines, drop empty lines and empty tokens."""
    return EraserDocument(docid, raw.replace("\r\n", "\n").replace("\r", "\n"), "docs")


def document_from_jsonl_text(docid: str, text: str) -> EraserDocument:
    """The `docs.jsonl` reading: split on newline, then on single spaces, no filtering."""
    return EraserDocument(docid, text, "docs.jsonl")


def _lines_file_offsets(text: str) -> tuple[np.ndarray, np.ndarray]:
    cp = _code_points(text)
    n = len(cp)
    newline = cp == _NEWLINE
    line = np.cumsum(newline) - newline  # line number of every char (a newline ends its line)
    solid = ~np.isin(cp, _WHITESPACE)
    # Chars between the first and last non-whitespace char of their line survive strip().
    solid_index = np.flatnonzero(solid)
    first = np.full(line[-1] + 1 if n else 0, n, dtype=np.int64)
    last = np.full_like(first, -1)
    np.minimum.at(first, line[solid_index], solid_index)
    np.maximum.at(last, line[solid_index], solid_index)
    positions = np.arange(n)
    kept = (positions >= first[line]) & (positions <= last[line]) if n else np.zeros(0, bool)
    in_token = kept & (cp != _SPACE) & ~newline
    edges = np.diff(np.concatenate(([False], in_token, [False])).astype(np.int8))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return _arrays(starts, ends, line[starts] if n else starts)


def _jsonl_offsets(text: str) -> tuple[np.ndarray, np.ndarray]:
    cp = _code_points(text)
    separators = np.flatnonzero((cp == _SPACE) | (cp == _NEWLINE))
    starts = np.concatenate(([0], separators + 1))
    ends = np.concatenate((separators, [len(cp)]))
    line = np.concatenate(([0], np.cumsum(cp[separators] == _NEWLINE)))
    return _arrays(starts, ends, line)


def _read_docs_folder(
    source: DatasetSource, problems: ProblemList, max_bytes: int, storable_only: bool
) -> dict[str, EraserDocument]:
    documents: dict[str, EraserDocument] = {}
    for name in source.list_files("docs"):
        label = source.display(f"docs/{name}")
        if problem := file_name_problem(name):
            problems.add(label, None, "docid", f"the file's name {problem}")
            continue
        if source.size(f"docs/{name}") > max_bytes:
            problems.add(label, None, None, f"document larger than the limit of {max_bytes} bytes")
            continue
        with source.open(f"docs/{name}") as stream:
            raw = stream.read()
        raw = raw.removeprefix(UTF8_BOM)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            line, message = utf8_error(raw)
            problems.add(label, line, None, message)
            continue
        if storable_only and "\x00" in text:
            line = text.count("\n", 0, text.index("\x00")) + 1
            problems.add(label, line, None, "contains a NUL character (\\u0000)")
        doc = document_from_lines_file(name, text)
        if not doc.n_tokens:
            problems.add(label, None, None, "document is empty: it has no tokens")
            continue
        documents[name] = doc
    return documents


def _read_docs_jsonl(
    source: DatasetSource, problems: ProblemList, max_bytes: int, storable_only: bool
) -> dict[str, EraserDocument]:
    documents: dict[str, EraserDocument] = {}
    first_line: dict[str, int] = {}
    label = source.display("docs.jsonl")
    for number, record in _json_records(source, "docs.jsonl", problems, max_bytes):
        if storable_only:
            _name_unstorable(record, label, number, problems)
        docid, text = record.get("docid"), record.get("document")
        ok = True
        if not isinstance(docid, str) or not docid:
            problems.add(
                label, number, "docid", f"must be a non-empty string, got {json_kind(docid)}"
            )
            ok = False
        if not isinstance(text, str):
            problems.add(label, number, "document", f"must be a string, got {json_kind(text)}")
            ok = False
        if not ok:
            continue
        if docid in first_line:
            problems.add(
                label,
                number,
                "docid",
                f"duplicate docid {docid!r} (first on line {first_line[docid]})",
            )
            continue
        first_line[docid] = number
        if problem := file_name_problem(docid):
            problems.add(label, number, "docid", f"{docid[:80]!r} {problem}")
            continue
        if not text or text.isspace():
            problems.add(label, number, "document", "document is empty: it has no tokens")
            continue
        documents[docid] = document_from_jsonl_text(docid, text)
    if not first_line and not any(p.file == label for p in problems):
        problems.add(label, None, None, "file is empty: it lists no documents")
    return documents


# ---------------------------------------------------------------- instances


def _json_records(source: DatasetSource, name: str, problems: ProblemList, max_line_bytes: int):
    """Yield (line_number, object) for each non-blank line that parses to a JSON object."""
    with source.open(name) as stream:
        yield from iter_json_objects(
            stream, label=source.display(name), problems=problems, max_line_bytes=max_line_bytes
        )


def _name_unstorable(record: dict, label: str, number: int, problems: ProblemList) -> None:
    # The line is still read: what refers to it should not raise problems of its own.
    for key, value in record.items():
        if found := unstorable_character(value, key):
            problems.add(label, number, *found)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _optional_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _parse_evidence(
    raw: Any, where: str, label: str, number: int, problems: ProblemList
) -> Evidence | None:
    if not isinstance(raw, dict):
        problems.add(label, number, where, f"evidence must be an object, got {json_kind(raw)}")
        return None
    ok = True
    docid = raw.get("docid")
    if not isinstance(docid, str) or not docid:
        problems.add(
            label, number, f"{where}.docid", f"must be a non-empty string, got {json_kind(docid)}"
        )
        ok = False
    for key in ("start_token", "end_token"):
        value = raw.get(key)
        if not _is_int(value):
            problems.add(
                label, number, f"{where}.{key}", f"must be an integer, got {json_kind(value)}"
            )
            ok = False
    for key in ("start_sentence", "end_sentence"):
        if key in raw and not (raw[key] is None or _is_int(raw[key])):
            problems.add(
                label, number, f"{where}.{key}", f"must be an integer, got {json_kind(raw[key])}"
            )
            ok = False
    if "text" in raw and not _optional_str(raw["text"]):
        problems.add(
            label, number, f"{where}.text", f"must be a string, got {json_kind(raw['text'])}"
        )
        ok = False
    if not ok:
        return None
    # The document's length is checked once every document is read (_check_references).
    problem = span_problem(
        raw["start_token"], raw["end_token"], docid=docid, n_tokens=None, allow_empty=True
    )
    if problem is not None:
        name, message = problem
        problems.add(label, number, f"{where}.{name}", message)
        return None
    return Evidence(
        docid=docid,
        start_token=raw["start_token"],
        end_token=raw["end_token"],
        start_sentence=raw.get("start_sentence"),
        end_sentence=raw.get("end_sentence"),
        text=raw.get("text"),
        present_keys=tuple(raw.keys()),
        extra={k: v for k, v in raw.items() if k not in EVIDENCE_KEYS},
    )


_INSTANCE_KEY_SET = frozenset(INSTANCE_KEYS)
_EVIDENCE_KEY_SET = frozenset(EVIDENCE_KEYS)
_OPTIONAL_STR = (str, type(None))
_OPTIONAL_INT = (int, type(None))


def _plain_evidence(raw: Any) -> Evidence | None:
    """The evidence when it has exactly ERASER's keys, each valid; None means "check it"."""
    if type(raw) is not dict or raw.keys() != _EVIDENCE_KEY_SET:
        return None
    docid, start, end = raw["docid"], raw["start_token"], raw["end_token"]
    start_sentence, end_sentence, text = raw["start_sentence"], raw["end_sentence"], raw["text"]
    if not (
        type(docid) is str
        and docid
        and type(start) is int
        and type(end) is int
        and 0 <= start <= end
        and type(start_sentence) in _OPTIONAL_INT
        and type(end_sentence) in _OPTIONAL_INT
        and type(text) in _OPTIONAL_STR
    ):
        return None
    return Evidence(docid, start, end, start_sentence, end_sentence, text, tuple(raw), {})


def _plain_instance(record: dict, split: str, label: str, number: int) -> Instance | None:
    """The instance when it has exactly ERASER's keys, each valid; None means "check it"."""
    if record.keys() != _INSTANCE_KEY_SET:
        return None
    aid, docids, evidences = record["annotation_id"], record["docids"], record["evidences"]
    if not (
        ((type(aid) is str and aid and len(aid) <= MAX_ID_CHARACTERS) or type(aid) is int)
        and type(record["classification"]) in _OPTIONAL_STR
        and type(record["query"]) in _OPTIONAL_STR
        and type(record["query_type"]) in _OPTIONAL_STR
        and (record["query_type"] is None or len(record["query_type"]) <= MAX_QUERY_TYPE_CHARACTERS)
        and (docids is None or (type(docids) is list and all(type(d) is str and d for d in docids)))
        and type(evidences) is list
        and all(type(group) is list for group in evidences)
    ):
        return None
    groups = [[_plain_evidence(raw) for raw in group] for group in evidences]
    if any(ev is None for group in groups for ev in group):
        return None
    return Instance(
        annotation_id=aid,
        classification=record["classification"],
        docids=docids,
        evidences=groups,
        query=record["query"],
        query_type=record["query_type"],
        split=split,
        file=label,
        line=number,
        present_keys=tuple(record),
        extra={},
    )


def parse_instance(
    record: dict, *, split: str, label: str, number: int, problems: ProblemList
) -> Instance | None:
    """Check one split line's fields; return None (with problems added) when unusable."""
    plain = _plain_instance(record, split, label, number)
    if plain is not None:
        return plain
    before = len(problems)
    aid = record.get("annotation_id")
    if "annotation_id" not in record:
        problems.add(label, number, "annotation_id", "missing")
    elif not (isinstance(aid, str) and aid) and not _is_int(aid):
        problems.add(
            label,
            number,
            "annotation_id",
            f"must be a non-empty string or an integer, got {json_kind(aid)}",
        )
    elif problem := id_length_problem(str(aid)):
        problems.add(label, number, "annotation_id", problem)
    if "evidences" not in record:
        problems.add(label, number, "evidences", "missing")
    for key in ("classification", "query", "query_type"):
        if key in record and not _optional_str(record[key]):
            problems.add(
                label, number, key, f"must be a string or null, got {json_kind(record[key])}"
            )
    query_type = record.get("query_type")
    if isinstance(query_type, str) and (
        problem := text_length_problem(query_type, MAX_QUERY_TYPE_CHARACTERS)
    ):
        problems.add(label, number, "query_type", problem)
    docids = record.get("docids")
    if docids is not None and not (
        isinstance(docids, list) and all(isinstance(d, str) and d for d in docids)
    ):
        problems.add(label, number, "docids", "must be null or a list of non-empty strings")
    groups: list[list[Evidence]] = []
    evidences = record.get("evidences", [])
    if not isinstance(evidences, list):
        problems.add(
            label, number, "evidences", f"must be a list of lists, got {json_kind(evidences)}"
        )
    else:
        for g, group in enumerate(evidences):
            if not isinstance(group, list):
                problems.add(
                    label,
                    number,
                    f"evidences[{g}]",
                    f"must be a list of evidences, got {json_kind(group)}",
                )
                continue
            parsed = []
            for e, raw in enumerate(group):
                ev = _parse_evidence(raw, f"evidences[{g}][{e}]", label, number, problems)
                if ev is not None:
                    parsed.append(ev)
            groups.append(parsed)
    if len(problems) > before:
        return None
    return Instance(
        annotation_id=aid,
        classification=record.get("classification"),
        docids=docids,
        evidences=groups,
        query=record.get("query"),
        query_type=record.get("query_type"),
        split=split,
        file=label,
        line=number,
        present_keys=tuple(record.keys()),
        extra={k: v for k, v in record.items() if k not in INSTANCE_KEYS},
    )


def _check_references(
    instances: list[Instance], documents: dict[str, EraserDocument], problems: ProblemList
) -> None:
    seen: dict[str, tuple[str, int]] = {}
    for inst in instances:
        if inst.key in seen:
            file, line = seen[inst.key]
            problems.add(
                inst.file,
                inst.line,
                "annotation_id",
                f"duplicate annotation_id {inst.annotation_id!r} (first at {file}:{line})",
            )
        else:
            seen[inst.key] = (inst.file, inst.line)
        for d, docid in enumerate(inst.docids or []):
            if docid not in documents:
                problems.add(inst.file, inst.line, f"docids[{d}]", f"unknown docid {docid!r}")
        if not inst.docids and not any(inst.evidences):
            own = str(inst.annotation_id)
            if own not in documents:
                problems.add(
                    inst.file,
                    inst.line,
                    "docids",
                    f"null and no evidences, and no document is named {own!r}",
                )
        for g, group in enumerate(inst.evidences):
            for e, ev in enumerate(group):
                doc = documents.get(ev.docid)
                if doc is None:
                    problems.add(
                        inst.file,
                        inst.line,
                        f"evidences[{g}][{e}].docid",
                        f"unknown docid {ev.docid!r}",
                    )
                elif problem := span_problem(
                    ev.start_token,
                    ev.end_token,
                    docid=ev.docid,
                    n_tokens=doc.n_tokens,
                    allow_empty=True,
                ):
                    name, message = problem
                    problems.add(inst.file, inst.line, f"evidences[{g}][{e}].{name}", message)


def read_eraser_dataset(
    source: DatasetSource,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    progress: Callable[[str, int], None] | None = None,
    storable_only: bool = False,
) -> EraserDataset:
    """Read and validate a whole dataset. Raises DataValidationError listing every problem.

    With `storable_only`, a character a database cannot store (NUL, a lone surrogate) is a
    problem too, named by file, line and field: scoring has no use for the check."""
    with collector_paused():
        return _read_eraser_dataset(source, max_line_bytes, progress, storable_only)


def _read_eraser_dataset(source, max_line_bytes, progress, storable_only) -> EraserDataset:
    problems = ProblemList()
    has_folder, has_jsonl = source.is_dir("docs"), source.exists("docs.jsonl")
    root = source.display(".")
    if has_folder and has_jsonl:
        problems.add(
            root, None, "docs", "both docs/ and docs.jsonl are present; keep exactly one of them"
        )
        problems.raise_if_any()
    if not has_folder and not has_jsonl:
        problems.add(root, None, "docs", "no documents: expected a docs/ folder or docs.jsonl")
    present = [s for s in SPLITS if source.exists(f"{s}.jsonl")]
    if not present:
        problems.add(root, None, None, "no split file: expected train.jsonl, val.jsonl, test.jsonl")
    problems.raise_if_any()

    if has_folder:
        documents = _read_docs_folder(source, problems, max_line_bytes, storable_only)
        if not documents and not problems:
            problems.add(
                source.display("docs"), None, None, "folder is empty: it holds no documents"
            )
    else:
        documents = _read_docs_jsonl(source, problems, max_line_bytes, storable_only)
    if progress:
        progress("documents", len(documents))

    splits: dict[str, list[Instance]] = {s: [] for s in SPLITS}
    for split in present:
        name = f"{split}.jsonl"
        label = source.display(name)
        for number, record in _json_records(source, name, problems, max_line_bytes):
            if storable_only:
                _name_unstorable(record, label, number, problems)
            inst = parse_instance(
                record, split=split, label=label, number=number, problems=problems
            )
            if inst is not None:
                splits[split].append(inst)
            if progress and number % 1000 == 0:
                progress(split, number)
    all_instances = [i for s in SPLITS for i in splits[s]]
    if not all_instances and not problems:
        problems.add(root, None, None, "the dataset is empty: no split file has an instance")
    _check_references(all_instances, documents, problems)
    problems.raise_if_any()
    return EraserDataset(
        documents=documents,
        splits=splits,
        docs_layout="docs" if has_folder else "docs.jsonl",
        missing_splits=[s for s in SPLITS if s not in present],
    )
