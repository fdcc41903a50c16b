"""Which columns of a Hugging Face dataset say what an item needs, and an item from a row:
plain functions over plain data (no ORM, no pyarrow), used by the `hf` import
(annotate/services/imports/huggingface.py).

A column's type is described as the import reads it: "string", "int", "bool", "float",
"other", ("list", inner) or ("struct", {field: type}); a ClassLabel column is an "int"
column with label names.

A mapping names, for each role an item has, the dataset's column that fills it:

| role | column type | |
|---|---|---|
| text | string, or a list of string columns (a text pair: one document each) | text or documents |
| documents | list of {docid, text, tokens, offsets, sentences} (the `hf` export's) | text or documents |
| label | string, int (a ClassLabel's names, else the number as text) or bool | optional |
| id | string or int | optional: else the split and row number |
| split | string: train, validation (or val, dev) or test | optional: else the file's split |
| query, query_type | string | optional |
| rationale_spans | rationale sets, each a list of {docid, start_token, end_token} (docid optional with one document), or one set | optional |
| rationale_tokens | rationale sets, each a list of token indices (one document) or of {docid, indices} | optional |
| perturbation_of | string or int: the id of the item this row perturbs | optional |
| perturbation_types | list of string | optional |
| question | string: a reading-comprehension item's question (its query and a document of its own) | reading comprehension only, optional |
| answers | {text: [string], answer_start: [int]} as SQuAD gives them (optionally docid: [string]): the gold answer first, by character offset in the passage; empty lists: no answer | reading comprehension only, optional |

In a reading-comprehension project the texts are named as raw-text imports name them
(`<id>:question`, `<id>:passage`), a documents column's `role` ("question" or "text") is kept,
and an answer's passage (its context) is the answer's docid, else the row's first document
whose role is text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ROLES = (
    "text",
    "documents",
    "label",
    "id",
    "split",
    "query",
    "query_type",
    "rationale_spans",
    "rationale_tokens",
    "perturbation_of",
    "perturbation_types",
    "question",
    "answers",
)
# Roles only a reading-comprehension project has.
READING_ROLES = ("question", "answers")
# The default guess: the first of these names that the dataset has, per role.
GUESSES = {
    "documents": ("documents",),
    "text": ("text", "sentence", "document", "review", "content", "passage", "context", "premise"),
    "label": ("label", "labels", "classification", "class", "target"),
    "id": ("annotation_id", "id", "idx", "guid", "uid"),
    "split": ("split",),
    "query": ("query", "question", "hypothesis"),
    "query_type": ("query_type",),
    "rationale_spans": ("rationale_spans", "evidences", "rationales_spans"),
    "rationale_tokens": ("rationale_tokens", "rationales", "rationale"),
    "perturbation_of": ("perturbation_of",),
    "perturbation_types": ("perturbation_types",),
    "question": ("question",),
    "answers": ("answers",),
}
SPLIT_NAMES = {
    "train": "train",
    "training": "train",
    "validation": "val",
    "val": "val",
    "valid": "val",
    "dev": "val",
    "test": "test",
    "testing": "test",
}
NO_LABEL = -1  # ClassLabel's "no label"


@dataclass
class Column:
    kind: Any  # as the module's text says
    label_names: list[str] | None = None  # a ClassLabel's names


@dataclass
class RowProblem:
    field: str
    message: str


@dataclass
class MappedDocument:
    docid: str
    text: str
    offsets: list[list[int]] | None  # given: [start, end) characters per token
    sentences: list[list[int]] | None  # given: [start, end) tokens per sentence
    tokens: list[str] | None = None  # given without offsets: found in the text in order
    role: str = "text"  # or "question": a reading-comprehension item's question


@dataclass
class MappedRow:
    annotation_id: str
    label: str | None
    split: str | None  # None: the file's
    query: str | None
    query_type: str | None
    documents: list[MappedDocument]
    rationale_sets: list[list[tuple[str, int, int]]]  # (docid, start_token, end_token)
    perturbation_of: str | None
    perturbation_types: list[str] = field(default_factory=list)
    # Reading comprehension: {"docid", "start_char", "end_char", "text"} of the gold answer in
    # its passage, {"none": True} when the passage holds none, None when not given.
    answer: dict | None = None


def roles_for(reading: bool) -> tuple[str, ...]:
    """The roles a project's mapping has: the reading-comprehension ones only in such a
    project."""
    return ROLES if reading else tuple(r for r in ROLES if r not in READING_ROLES)


def kind_text(kind) -> str:
    """A column type as a user reads it."""
    if isinstance(kind, str):
        return kind
    if kind[0] == "list":
        return f"list of {kind_text(kind[1])}"
    return "{" + ", ".join(f"{k}: {kind_text(v)}" for k, v in kind[1].items()) + "}"


def mapping_guess(
    columns: dict[str, Column], settled: Iterable[str] = (), *, reading: bool = False
) -> dict[str, Any]:
    """The default mapping: per role, the first usual name the dataset has (case-insensitive);
    the documents column rules out the text column, and a reading-comprehension question
    column the query. Roles in `settled` are left out (a mapping gives them)."""
    by_lower = {name.lower(): name for name in columns}
    guess: dict[str, Any] = {}
    for role in roles_for(reading):
        if role in settled:
            continue
        for name in GUESSES[role]:
            if name in by_lower:
                guess[role] = by_lower[name]
                break
    if "documents" in guess:
        guess.pop("text", None)
    elif "text" in guess and guess.get("query") == guess["text"]:
        guess.pop("query")
    if guess.get("question") and guess.get("query") == guess["question"]:
        guess.pop("query")  # the question is the query
    if guess.get("rationale_spans") and guess.get("rationale_tokens"):
        guess.pop("rationale_tokens")  # the spans say all that the indices say
    return guess


def _is_string(kind) -> bool:
    return kind == "string"


def _is_id(kind) -> bool:
    return kind in ("string", "int")


def _is_list_of(kind, test) -> bool:
    return not isinstance(kind, str) and kind[0] == "list" and test(kind[1])


def _is_struct_with(kind, required: Iterable[str]) -> bool:
    return not isinstance(kind, str) and kind[0] == "struct" and set(required) <= set(kind[1])


def _span_kind(kind) -> bool:
    return _is_struct_with(kind, ("start_token", "end_token"))


def _document_kind(kind) -> bool:
    return (
        not isinstance(kind, str)
        and kind[0] == "struct"
        and ("text" in kind[1] or "tokens" in kind[1])
    )


_EXPECTED = {
    "documents": (
        lambda k: _is_list_of(k, _document_kind),
        "a list of documents, each with text or tokens",
    ),
    "label": (lambda k: k in ("string", "int", "bool"), "string, integer or boolean"),
    "id": (_is_id, "string or integer"),
    "split": (_is_string, "string"),
    "query": (_is_string, "string"),
    "query_type": (_is_string, "string"),
    "rationale_spans": (
        lambda k: (
            _is_list_of(k, lambda s: _is_list_of(s, _span_kind)) or _is_list_of(k, _span_kind)
        ),
        "a list of rationale sets, each a list of {start_token, end_token} (with docid when "
        "there are several documents)",
    ),
    "rationale_tokens": (
        lambda k: (
            _is_list_of(k, lambda s: _is_list_of(s, lambda i: i == "int"))
            or _is_list_of(k, lambda s: _is_list_of(s, lambda i: _is_struct_with(i, ("indices",))))
        ),
        "a list of rationale sets, each a list of token indices (or of {docid, indices})",
    ),
    "perturbation_of": (_is_id, "string or integer"),
    "perturbation_types": (lambda k: _is_list_of(k, _is_string), "a list of strings"),
    "question": (_is_string, "string"),
    "answers": (
        lambda k: (
            _is_struct_with(k, ("text", "answer_start"))
            and _is_list_of(k[1]["text"], _is_string)
            and _is_list_of(k[1]["answer_start"], lambda i: i == "int")
        ),
        "{text: list of strings, answer_start: list of integers} (as SQuAD gives answers)",
    ),
}


def mapping_problems(
    mapping: dict[str, Any], columns: dict[str, Column], *, reading: bool = False
) -> list[RowProblem]:
    """What is wrong with `mapping` for a dataset with `columns` (`reading`: for a
    reading-comprehension project), each named by the role (field "mapping.<role>") or, for
    a column of the wrong type, by the column."""
    problems: list[RowProblem] = []
    roles = roles_for(reading)
    unknown = sorted(set(mapping) - set(ROLES))
    if unknown:
        problems.append(
            RowProblem(
                "mapping",
                f"unknown role(s) {', '.join(unknown)}; the roles are {', '.join(roles)}",
            )
        )
    for role in READING_ROLES:
        if not reading and mapping.get(role):
            problems.append(
                RowProblem(
                    f"mapping.{role}",
                    f"only a reading-comprehension project has {role}; map the column as "
                    "query or leave it out",
                )
            )
    if mapping.get("question") and mapping.get("query"):
        problems.append(
            RowProblem(
                "mapping.query",
                "the question is a reading-comprehension item's query: map question or "
                "query, not both",
            )
        )
    if not mapping.get("text") and not mapping.get("documents"):
        problems.append(
            RowProblem(
                "mapping.text",
                "no column gives the text: name a string column as text (or a documents "
                f"column); the dataset's columns are {', '.join(columns) or 'none'}",
            )
        )
    if mapping.get("text") and mapping.get("documents"):
        problems.append(RowProblem("mapping.documents", "give text or documents, not both"))
    for role in roles:
        named = mapping.get(role)
        if role not in mapping or named is None:
            continue
        names = named if role == "text" and isinstance(named, list) else [named]
        if role == "text" and isinstance(named, list) and not named:
            problems.append(RowProblem("mapping.text", "an empty list of text columns"))
        for name in names:
            if not isinstance(name, str):
                problems.append(RowProblem(f"mapping.{role}", f"{name!r} is not a column name"))
            elif name not in columns:
                problems.append(
                    RowProblem(
                        f"mapping.{role}",
                        f"column {name!r} is not in the dataset; its columns are "
                        f"{', '.join(columns) or 'none'}",
                    )
                )
            else:
                kind = columns[name].kind
                if role == "text":
                    ok, expected = _is_string(kind), "string"
                else:
                    test, expected = _EXPECTED[role]
                    ok = test(kind)
                if not ok:
                    problems.append(
                        RowProblem(
                            name,
                            f"column {name!r} (mapped to {role}) is {kind_text(kind)}; "
                            f"{role} needs {expected}",
                        )
                    )
    return problems


# ---------------------------------------------------------------- rows


def _label(value, column: Column, problems: list[RowProblem], name: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) and column.label_names is not None:
        if value == NO_LABEL:
            return None
        if not 0 <= value < len(column.label_names):
            problems.append(
                RowProblem(
                    name,
                    f"class {value} is not one of the column's {len(column.label_names)} "
                    "label names",
                )
            )
            return None
        return column.label_names[value]
    return str(value)


def _text(value, problems: list[RowProblem], name: str) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(RowProblem(name, "the text is empty" if value is not None else "no text"))
        return None
    return value


def _documents(
    mapping: dict, row: dict, annotation_id: str, problems: list[RowProblem], reading: bool
) -> list[MappedDocument]:
    found = []
    if reading and mapping.get("question"):
        name = mapping["question"]
        question = _text(row.get(name), problems, name)
        if question is not None:
            found.append(
                MappedDocument(
                    docid=f"{annotation_id}:question",
                    text=question,
                    offsets=None,
                    sentences=None,
                    role="question",
                )
            )
    if mapping.get("documents"):
        name = mapping["documents"]
        for position, record in enumerate(row.get(name) or []):
            record = record or {}
            docid = record.get("docid")
            docid = str(docid) if docid not in (None, "") else _docid(annotation_id, position)
            tokens = record.get("tokens")
            text = record.get("text")
            if text is None and tokens:
                text = " ".join(tokens)
            if not isinstance(text, str) or not text.strip():
                problems.append(RowProblem(name, f"document {docid!r} has no text"))
                continue
            offsets = record.get("offsets")
            found.append(
                MappedDocument(
                    docid=docid,
                    text=text,
                    offsets=[list(pair) for pair in offsets] if offsets else None,
                    sentences=[list(pair) for pair in record["sentences"]]
                    if record.get("sentences")
                    else None,
                    tokens=list(tokens) if tokens and not offsets else None,
                    role="question" if reading and record.get("role") == "question" else "text",
                )
            )
        if not found and not any(p.field == name for p in problems):
            problems.append(RowProblem(name, "the row has no documents"))
        return found
    names = mapping["text"] if isinstance(mapping["text"], list) else [mapping["text"]]
    for name in names:
        text = _text(row.get(name), problems, name)
        if text is not None:
            if len(names) > 1:
                docid = f"{annotation_id}_{name}"
            else:
                docid = f"{annotation_id}:passage" if reading else annotation_id
            found.append(MappedDocument(docid=docid, text=text, offsets=None, sentences=None))
    return found


def _answer(
    value, name: str, documents: list[MappedDocument], problems: list[RowProblem]
) -> dict | None:
    """The gold answer of SQuAD-style answers (the first of them; every one checked against
    its passage), {"none": True} for empty lists, None for no value."""
    if value is None:
        return None
    texts = list(value.get("text") or [])
    starts = list(value.get("answer_start") or [])
    docids = list(value.get("docid") or [])
    if len(texts) != len(starts):
        problems.append(
            RowProblem(name, f"{len(texts)} answer text(s) but {len(starts)} answer_start(s)")
        )
        return None
    if not texts:
        return {"none": True}
    by_docid = {d.docid: d for d in documents}
    passages = [d for d in documents if d.role == "text"]
    answers = []
    for number, (text, start) in enumerate(zip(texts, starts, strict=True), start=1):
        docid = docids[number - 1] if number <= len(docids) and docids[number - 1] else None
        passage = by_docid.get(docid) if docid else (passages[0] if passages else None)
        if passage is None:
            problems.append(
                RowProblem(
                    name,
                    f"answer {number} names document {docid!r}, which is not one of the row's"
                    if docid
                    else f"answer {number} has no passage: the row has no text document",
                )
            )
            continue
        if not isinstance(text, str) or not text.strip():
            problems.append(RowProblem(name, f"answer {number}'s text is empty"))
            continue
        if not isinstance(start, int) or not 0 <= start < len(passage.text):
            problems.append(
                RowProblem(
                    name,
                    f"answer {number} starts at character {start}, outside the passage "
                    f"{passage.docid!r} of {len(passage.text)} characters",
                )
            )
            continue
        found = passage.text[start : start + len(text)]
        if found != text:
            problems.append(
                RowProblem(
                    name,
                    f"answer {number} {_preview(text)} is not the passage's text at character "
                    f"{start}, which is {_preview(found)}",
                )
            )
            continue
        answers.append(
            {
                "docid": passage.docid,
                "start_char": start,
                "end_char": start + len(text),
                "text": text,
            }
        )
    return answers[0] if answers and len(answers) == len(texts) else None


def _preview(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _docid(annotation_id: str, position: int) -> str:
    return annotation_id if position == 0 else f"{annotation_id}_{position}"


def _sets(
    mapping: dict, row: dict, documents: list[MappedDocument], problems: list[RowProblem]
) -> list[list[tuple[str, int, int]]]:
    # A reading-comprehension question is a document, but rationales are in the passage.
    passages = [d for d in documents if d.role == "text"]
    only = passages[0].docid if len(passages) == 1 else None
    sets: list[list[tuple[str, int, int]]] = []
    if mapping.get("rationale_spans"):
        name = mapping["rationale_spans"]
        value = row.get(name) or []
        groups = [value] if value and isinstance(value[0], dict) else value
        for group in groups:
            spans = []
            for span in group or []:
                docid = span.get("docid") or only
                start, end = span.get("start_token"), span.get("end_token")
                if docid is None:
                    problems.append(
                        RowProblem(name, "a span names no docid, and the row has several documents")
                    )
                elif (
                    not isinstance(start, int) or not isinstance(end, int) or not 0 <= start <= end
                ):
                    problems.append(RowProblem(name, f"span [{start}, {end}) is not a token range"))
                else:
                    spans.append((str(docid), start, end))
            if spans:
                sets.append(spans)
    elif mapping.get("rationale_tokens"):
        name = mapping["rationale_tokens"]
        for group in row.get(name) or []:
            spans = []
            entries = (
                [{"docid": only, "indices": group}]
                if group and not isinstance(group[0], dict)
                else (group or [])
            )
            for entry in entries:
                docid = entry.get("docid") or only
                indices = entry.get("indices") or []
                if docid is None:
                    problems.append(
                        RowProblem(name, "indices name no docid, and the row has several documents")
                    )
                    continue
                if any(i is None or i < 0 for i in indices):
                    problems.append(RowProblem(name, "a token index is negative or missing"))
                    continue
                spans += [(str(docid), s, e) for s, e in runs_of(indices)]
            if spans:
                sets.append(spans)
    known = {d.docid for d in documents}
    for group in sets:
        for docid, _, _ in group:
            if docid not in known:
                problems.append(
                    RowProblem(
                        mapping.get("rationale_spans") or mapping["rationale_tokens"],
                        f"a rationale names document {docid!r}, which is not one of the row's",
                    )
                )
    return sets


def runs_of(indices: Iterable[int]) -> list[tuple[int, int]]:
    """Token indices as half-open runs of consecutive tokens: [0, 1, 2, 5] -> [(0, 3), (5, 6)]."""
    runs: list[tuple[int, int]] = []
    for index in sorted(set(indices)):
        if runs and runs[-1][1] == index:
            runs[-1] = (runs[-1][0], index + 1)
        else:
            runs.append((index, index + 1))
    return runs


def row_mapped(
    row: dict,
    position: int,
    split: str,
    mapping: dict[str, Any],
    columns: dict[str, Column],
    *,
    reading: bool = False,
) -> tuple[MappedRow | None, list[RowProblem]]:
    """The item of a row (the `position`-th of its file, in split `split`; `reading`: of a
    reading-comprehension project), or the problems that prevent it, each named by its
    column."""
    problems: list[RowProblem] = []
    if mapping.get("id"):
        value = row.get(mapping["id"])
        if value is None or str(value).strip() == "":
            problems.append(RowProblem(mapping["id"], "no id"))
            annotation_id = ""
        else:
            annotation_id = str(value)
    else:
        annotation_id = f"{split or 'row'}-{position}"
    row_split = None
    if mapping.get("split"):
        raw = row.get(mapping["split"])
        row_split = SPLIT_NAMES.get(str(raw).lower()) if raw is not None else None
        if row_split is None:
            problems.append(
                RowProblem(
                    mapping["split"], f"split {raw!r} is not train, validation (val, dev) or test"
                )
            )
    label = None
    if mapping.get("label"):
        name = mapping["label"]
        label = _label(row.get(name), columns[name], problems, name)
    documents = _documents(mapping, row, annotation_id, problems, reading)
    sets = _sets(mapping, row, documents, problems) if documents else []
    answer = None
    if reading and mapping.get("answers") and documents:
        answer = _answer(row.get(mapping["answers"]), mapping["answers"], documents, problems)
    query = row.get(mapping["query"]) if mapping.get("query") else None
    if reading and mapping.get("question"):
        query = row.get(mapping["question"])
    original = row.get(mapping["perturbation_of"]) if mapping.get("perturbation_of") else None
    types = (
        [str(t) for t in row.get(mapping["perturbation_types"]) or []]
        if mapping.get("perturbation_types")
        else []
    )
    if problems:
        return None, problems
    return (
        MappedRow(
            annotation_id=annotation_id,
            label=label,
            split=row_split,
            query=query,
            query_type=row.get(mapping["query_type"]) if mapping.get("query_type") else None,
            documents=documents,
            rationale_sets=sets,
            perturbation_of=None if original in (None, "") else str(original),
            perturbation_types=types,
            answer=answer,
        ),
        [],
    )


def tokens_located(text: str, tokens: list[str]) -> list[list[int]] | None:
    """The character offsets of `tokens` found in `text` in order, or None if one is not."""
    offsets, position = [], 0
    for token in tokens:
        found = text.find(token, position)
        if not token or found < 0:
            return None
        offsets.append([found, found + len(token)])
        position = found + len(token)
    return offsets


def offsets_problem(
    text: str, offsets: list[list[int]], sentences: list[list[int]] | None
) -> str | None:
    """Why given token offsets (and sentences) do not fit a text, or None."""
    previous = 0
    for start, end in offsets:
        if not previous <= start < end <= len(text):
            return (
                f"token offsets [{start}, {end}) are out of order or outside the text of "
                f"{len(text)} characters"
            )
        previous = end
    if sentences is not None:
        expected = 0
        for start, end in sentences:
            if start != expected or end <= start:
                return "sentences do not cover the tokens in order"
            expected = end
        if expected != len(offsets):
            return f"sentences cover {expected} tokens of {len(offsets)}"
    return None
