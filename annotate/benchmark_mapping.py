"""The fine-grained benchmark's gold lines
(docs/reference/metrics.md#fine-grained-benchmark-files) as a project's items, documents and
reference spans, and items back as gold lines. Plain functions, no ORM: the import and export
services feed them.

| project task type     | benchmark task          | documents: docid (role)                         | reference sets                   |
|-----------------------|-------------------------|-------------------------------------------------|----------------------------------|
| classification        | `sentiment`             | `<id>` (text)                                   | one per alternative set          |
| sentence_pair         | `similarity`            | `<id>:a`, `<id>:b` (texts)                      | one, with spans of both texts    |
| reading_comprehension | `reading_comprehension` | `<id>:question` (question), `<id>:passage` (text) | one, in the passage           |

Docids follow the raw-text import's (annotate/raw_text.py). A document's text is its given
tokens joined by one space (English) or by nothing (Chinese, one character per token), and
its tokens are those tokens' character offsets. The question of a reading-comprehension
line has no given tokens, so the import tokenizes it like any raw text; it is also the
item's query. Token-index sets are stored as half-open runs, so a set's order and repeated
indexes are not kept: they are written back sorted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rationale_metrics.benchmark_format import (
    ORIGINAL,
    PERTURBED,
    BenchmarkInstance,
    SentId,
    task_layout,
)
from rationale_metrics.eraser_writer import runs_of
from rationale_metrics.jsonl import unstorable_character
from rationale_metrics.problems import ProblemList

TASK_BY_TYPE = {
    "classification": "sentiment",
    "sentence_pair": "similarity",
    "reading_comprehension": "reading_comprehension",
}
# Item.source_extra holds, under this key, what a benchmark line had beyond the item's own
# fields (its raw texts, unknown keys, an integer label), so an export writes it back.
SOURCE_KEY = "benchmark"
# The first line of a file is read this far to tell the benchmark format from others.
SNIFF_BYTES = 1 << 20
# Item.annotation_id and Item.label are 255 characters; docids add a suffix to the id.
MAX_ID_LENGTH = 255 - len(":question")
MAX_LABEL_LENGTH = 255
_INTEGER = re.compile(r"-?[0-9]+")

Span = tuple[str, int, int]  # docid, start token, end token (half-open)


def benchmark_task(task_type: str) -> str | None:
    """The benchmark task a project of `task_type` imports and exports (None: it has none)."""
    return TASK_BY_TYPE.get(task_type)


def looks_like_benchmark(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` is in the benchmark's format: its first
    non-blank line names the keys `sent_id` and `sample_type`."""
    for line in head.splitlines():
        if line.strip():
            return b'"sent_id"' in line and b'"sample_type"' in line
    return False


def task_of_record(record: dict) -> tuple[str, str] | None:
    """The task a gold line is laid out for, and the key that says so (None: cannot tell)."""
    for key in ("text_q_seg", "text_t_seg"):
        if key in record:
            return "similarity", key
    if "sent_token" in record:
        if "question" in record:
            return "reading_comprehension", "question"
        return "sentiment", "sent_token"
    return None


def text_from_tokens(tokens: Sequence[str], language: str) -> tuple[str, np.ndarray]:
    """The text the tokens make and each token's (start, end) character offsets in it."""
    separator = "" if language == "zh" else " "
    offsets = np.zeros((len(tokens), 2), dtype=np.int64)
    at = 0
    for i, token in enumerate(tokens):
        offsets[i] = (at, at + len(token))
        at += len(token) + len(separator)
    return separator.join(tokens), offsets


# ---------------------------------------------------------------- checks beyond the reader's


def check_instances(
    instances: Sequence[BenchmarkInstance], task: str, label: str, problems: ProblemList
) -> None:
    """What the platform needs beyond a valid gold file of `task`: ids that stay apart as
    text, a token in every sentence, a question that is not blank, nothing the database
    cannot store, perturbation types it can read."""
    token_fields = task_layout(task, "en").token_fields
    by_key: dict[str, BenchmarkInstance] = {}
    for inst in instances:
        key = str(inst.sent_id)
        first = by_key.setdefault(key, inst)
        if first is not inst and first.sent_id != inst.sent_id:
            problems.add(
                label,
                inst.line,
                "sent_id",
                f"{inst.sent_id!r} and {first.sent_id!r} (line {first.line}) are the same id "
                "here: the platform keeps ids as text, with one JSON type each",
            )
        if len(key) > MAX_ID_LENGTH:
            problems.add(
                label, inst.line, "sent_id", f"is {len(key)} characters, over {MAX_ID_LENGTH}"
            )
        # A reading-comprehension label is the answer, kept apart from the item's label.
        if task != "reading_comprehension" and len(str(inst.label)) > MAX_LABEL_LENGTH:
            problems.add(
                label,
                inst.line,
                "sent_label",
                f"is {len(str(inst.label))} characters, over {MAX_LABEL_LENGTH}",
            )
        for field_name, tokens in zip(token_fields, inst.tokens, strict=True):
            if not tokens:
                problems.add(
                    label, inst.line, field_name, "is empty: a sentence needs at least one token"
                )
        # The scorer needs neither; an item does.
        if task != "reading_comprehension" and inst.label is None:
            problems.add(label, inst.line, "sent_label", "missing: the item's class is its label")
        if task == "reading_comprehension" and "question" not in inst.texts:
            problems.add(label, inst.line, "question", "missing: the item asks it")
        elif task == "reading_comprehension" and not inst.texts["question"].strip():
            problems.add(label, inst.line, "question", "must not be blank")
        # PostgreSQL stores no NUL character in text or JSON.
        stored = [
            ("sent_id", inst.sent_id),
            ("sent_label", inst.label),
            *zip(token_fields, inst.tokens, strict=True),
            *inst.texts.items(),
            *inst.extra.items(),
        ]
        for field_name, value in stored:
            if found := unstorable_character(value, field_name):
                problems.add(label, inst.line, *found)
        types = inst.extra.get("perturbation_types")
        if (
            inst.sample_type == PERTURBED
            and "perturbation_types" in inst.extra
            and not (isinstance(types, list) and all(isinstance(t, str) and t for t in types))
        ):
            problems.add(
                label,
                inst.line,
                "perturbation_types",
                "must be a list of perturbation type names",
            )


def originals_of(
    instances: Sequence[BenchmarkInstance], label: str, problems: ProblemList
) -> dict[SentId, SentId]:
    """Each perturbed line's original (perturbed sent_id -> original sent_id), read from the
    originals' rel_ids; a perturbed line no original lists, or one listed twice, is a problem.
    The reader has already checked that every rel_id names a perturbed line of the file."""
    original_of: dict[SentId, SentId] = {}
    line_of = {inst.sent_id: inst.line for inst in instances}
    for inst in instances:
        for i, target in enumerate(inst.rel_ids):
            first = original_of.setdefault(target, inst.sent_id)
            if first == inst.sent_id and inst.rel_ids.index(target) == i:
                continue
            where = "earlier in its rel_ids" if first == inst.sent_id else f"by {first!r}"
            problems.add(
                label,
                inst.line,
                f"rel_ids[{i}]",
                f"{target!r} is listed already {where} (line {line_of[first]}): "
                "a perturbed line has one original",
            )
    for inst in instances:
        if inst.sample_type == PERTURBED and inst.sent_id not in original_of:
            problems.add(
                label,
                inst.line,
                "sent_id",
                f"perturbed line {inst.sent_id!r} has no original in this file: no "
                "'ori' line lists it in its rel_ids",
            )
    return original_of


# ---------------------------------------------------------------- a gold line as an item


@dataclass
class MappedDocument:
    docid: str
    role: str  # "text" or "question"
    text: str
    token_offsets: np.ndarray | None  # None: no tokens given (a question); tokenize the text


@dataclass
class MappedItem:
    """What one gold line makes: an item with its documents and reference sets."""

    sent_id: SentId
    line: int | None
    label: str | None  # the class as text; None for reading comprehension (see `answer`)
    query: str | None
    documents: list[MappedDocument]
    reference_sets: list[list[Span]]
    answer: dict | None
    source: dict  # kept under Item.source_extra[SOURCE_KEY]
    perturbation_types: list[str] = field(default_factory=list)


def item_from_instance(inst: BenchmarkInstance, task: str, language: str) -> MappedItem:
    """The item a valid gold line of `task` makes (see the module's table)."""
    key = str(inst.sent_id)
    texts = dict(inst.texts)
    extra = dict(inst.extra)
    types: list[str] = []
    if inst.sample_type == PERTURBED and "perturbation_types" in extra:
        types = list(extra.pop("perturbation_types"))
    query = None
    answer = None
    label: str | None = str(inst.label)
    if task == "similarity":
        names = (f"{key}:a", f"{key}:b")
        documents = [
            _given(name, tokens, language) for name, tokens in zip(names, inst.tokens, strict=True)
        ]
        combined = [
            (doc.docid, start, end)
            for doc, sets in zip(documents, inst.rationale_sets, strict=True)
            for start, end in runs_of(sets[0])
        ]
        reference_sets = [combined]
    else:
        passage = _given(key if task == "sentiment" else f"{key}:passage", inst.tokens[0], language)
        reference_sets = [
            [(passage.docid, start, end) for start, end in runs_of(chosen)]
            for chosen in inst.rationale_sets[0]
        ]
        documents = [passage]
        if task == "reading_comprehension":
            query = texts.pop("question")
            documents.insert(0, MappedDocument(f"{key}:question", "question", query, None))
            answer = None if inst.label is None else _answer(passage, inst.label)
            label = None
    source: dict[str, Any] = {"texts": texts}
    if extra:
        source["extra"] = extra
    if isinstance(inst.label, int) and not isinstance(inst.label, bool):
        source["int_label"] = True
    return MappedItem(
        sent_id=inst.sent_id,
        line=inst.line,
        label=label,
        query=query,
        documents=documents,
        reference_sets=reference_sets,
        answer=answer,
        source=source,
        perturbation_types=types,
    )


def _given(docid: str, tokens: Sequence[str], language: str) -> MappedDocument:
    text, offsets = text_from_tokens(tokens, language)
    return MappedDocument(docid, "text", text, offsets)


def _answer(passage: MappedDocument, answer: Any) -> dict:
    """The answer where it occurs once in the passage; else its text only (it is absent,
    or found twice and either could be meant); "" is the benchmark's "no answer"."""
    if answer == "":
        return {"none": True}
    found = passage.text.find(answer)
    if found < 0 or passage.text.find(answer, found + 1) >= 0:
        return {"text": answer}
    return {
        "docid": passage.docid,
        "start_char": found,
        "end_char": found + len(answer),
        "text": answer,
    }


# ---------------------------------------------------------------- an item as a gold line


class BenchmarkMisfit(ValueError):
    """An item the benchmark's format cannot hold as chosen (the message says why)."""


@dataclass
class ItemDocumentRows:
    docid: str
    role: str
    text: str
    tokens: list[str]


@dataclass
class ItemRows:
    """What the export reads of one item, as plain values."""

    sent_id: SentId
    label: str | None
    query: str | None
    answer: dict | None
    source_extra: dict
    documents: list[ItemDocumentRows]  # in position order
    groups: list[list[Span]]  # rationale sets from the chosen aggregation
    is_perturbed: bool = False
    rel_ids: list[SentId] = field(default_factory=list)  # exported perturbed copies
    perturbation_types: list[str] = field(default_factory=list)
    original_source_extra: dict = field(default_factory=dict)


def instance_for_item(rows: ItemRows, task: str, language: str) -> BenchmarkInstance:
    """The gold line of one item; BenchmarkMisfit when the format cannot hold it.

    Texts and unknown keys come back as imported from the benchmark; items made otherwise
    (imported from ERASER or raw text, or perturbed here) get the texts from their
    documents. Rationale tokens highlighted in a reading-comprehension question are left
    out: the format's one set indexes the passage."""
    source = rows.source_extra.get(SOURCE_KEY)
    imported = isinstance(source, dict)
    source = source if imported else {}
    texts_all = [d for d in rows.documents if d.role != "question"]
    wanted = 2 if task == "similarity" else 1
    if len(texts_all) != wanted:
        raise BenchmarkMisfit(
            f"item {rows.sent_id!r} has {len(texts_all)} text(s); the {task} format holds {wanted}"
        )
    tokens = [d.tokens for d in texts_all]
    per_document = _sets_per_document(rows, texts_all, task)
    layout = task_layout(task, language)
    texts = dict(source.get("texts", {})) if imported else _texts_from(rows, texts_all, layout)
    extra = dict(source.get("extra", {}))
    if rows.is_perturbed and rows.perturbation_types:
        extra["perturbation_types"] = list(rows.perturbation_types)
    if task == "reading_comprehension":
        question = rows.query or next((d.text for d in rows.documents if d.role == "question"), "")
        texts["question"] = question
    return BenchmarkInstance(
        sent_id=rows.sent_id,
        sample_type=PERTURBED if rows.is_perturbed else ORIGINAL,
        label=_label(rows, task, source),
        tokens=tokens,
        rationale_sets=per_document,
        rel_ids=[] if rows.is_perturbed else list(rows.rel_ids),
        texts=texts,
        extra=extra,
    )


def _sets_per_document(
    rows: ItemRows, texts: list[ItemDocumentRows], task: str
) -> list[list[list[int]]]:
    positions = {d.docid: n for n, d in enumerate(texts)}

    def indexes(group: list[Span], docid: str) -> list[int]:
        return sorted({t for d, start, end in group if d == docid for t in range(start, end)})

    if task == "sentiment":
        return [[indexes(group, texts[0].docid) for group in rows.groups]]
    if len(rows.groups) > 1:
        raise BenchmarkMisfit(
            f"item {rows.sent_id!r} has {len(rows.groups)} rationale sets; the {task} format "
            "holds one set per sentence: choose an aggregation that gives one (majority, union)"
        )
    group = rows.groups[0] if rows.groups else []
    return [[indexes(group, docid)] for docid in positions]


def _texts_from(rows: ItemRows, texts: list[ItemDocumentRows], layout) -> dict[str, str]:
    if len(layout.token_fields) == 2:
        return {name: doc.text for name, doc in zip(layout.text_fields, texts, strict=True)}
    return {"context": texts[0].text}


def _label(rows: ItemRows, task: str, source: dict) -> int | str:
    if task == "reading_comprehension":
        answer = rows.answer or {}
        if answer.get("none"):
            return ""
        if "text" in answer:
            return answer["text"]
        return rows.label or ""
    if rows.label is None:
        raise BenchmarkMisfit(f"item {rows.sent_id!r} has no label; the {task} format needs one")
    # An item perturbed here has no source of its own: its label is typed like its original's.
    typed_from = source if source else rows.original_source_extra.get(SOURCE_KEY) or {}
    if typed_from.get("int_label") and _INTEGER.fullmatch(rows.label):
        return int(rows.label)
    return rows.label
