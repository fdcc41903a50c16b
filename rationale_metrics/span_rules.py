"""What makes a token span, and a group of rationale sets, well formed: one rule for
every place that takes spans (an annotator's submission on either path of "submit", a
qualification test answer, an imported ERASER evidence).

Spans are half-open token ranges [start, end) of one document. An annotator's span must
cover at least one token and may not overlap another span of its set; an imported
evidence may be empty (real ERASER data has some) and may overlap. Every problem is
worded with the field it is about, so the caller only says where the span came from.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# A submitted set as plain rows: (docid, start_token, end_token), sorted.
SpanRow = tuple[str, int, int]


def is_token_index(value: Any) -> bool:
    return type(value) is int


def span_problem(
    start: int, end: int, *, docid: str, n_tokens: int | None, allow_empty: bool
) -> tuple[str, str] | None:
    """(field, message) for what is wrong with [start, end) in document `docid` of
    `n_tokens` tokens, or None. With `n_tokens` None the document's length is not known
    here, and only the span's own shape is checked."""
    if start < 0:
        return "start_token", f"start_token {start} is negative"
    if end < start:
        return "end_token", f"end_token {end} is before start_token {start}"
    if end == start and not allow_empty:
        return "end_token", f"span [{start}, {end}) is empty: a span covers at least one token"
    if n_tokens is not None and end > n_tokens:
        return (
            "end_token",
            f"span [{start}, {end}) is past the end of document {docid!r}, "
            f"which has {n_tokens} tokens",
        )
    return None


@dataclass
class RationaleSetsProblem(ValueError):
    """A submission's rationale sets are malformed; `message` names the field."""

    message: str
    code: str | None = None  # a machine-readable name where a client acts on it

    def __str__(self) -> str:
        return self.message


def rationale_sets_check(
    sets: Any,
    *,
    token_counts: Mapping[str, int] | None,
    min_highlight: int | None,
    closed: Mapping[str, str] | None = None,
) -> list[list[SpanRow]]:
    """The sets as sorted (docid, start, end) rows, empty sets left out; raises
    RationaleSetsProblem at the first problem, in the order an annotator reads the sets.

    `token_counts` maps the item's docids to their token counts. The fast path of
    "submit" passes None: it does not read the documents, and the database statement
    checks docids and lengths. `min_highlight` None leaves the highlight count unchecked
    for the same reason. `closed` names documents of the item that take no rationale here,
    each with the reason (a reading-comprehension question, where the project allows none)."""
    if not isinstance(sets, list):
        raise RationaleSetsProblem("rationale_sets must be a list of lists of spans")
    cleaned: list[list[SpanRow]] = []
    for i, spans in enumerate(sets):
        if not isinstance(spans, list):
            raise RationaleSetsProblem(f"rationale_sets[{i}] must be a list of spans")
        rows = [
            _span_row(span, f"rationale_sets[{i}][{j}]", token_counts, closed or {})
            for j, span in enumerate(spans)
        ]
        rows.sort()
        for (d1, _, e1), (d2, s2, _) in itertools.pairwise(rows):
            if d1 == d2 and s2 < e1:
                raise RationaleSetsProblem(f"rationale_sets[{i}]: spans overlap in document {d1!r}")
        if rows:
            cleaned.append(rows)
    highlighted = sum(end - start for rows in cleaned for _, start, end in rows)
    if min_highlight is not None and highlighted < min_highlight:
        raise RationaleSetsProblem(
            f"highlight at least {min_highlight} token(s) before submitting: this project does "
            "not accept empty or too-short rationales",
            code="too_few_tokens",
        )
    return cleaned


def _span_row(
    span: Any, where: str, token_counts: Mapping[str, int] | None, closed: Mapping[str, str]
) -> SpanRow:
    if not isinstance(span, dict):
        raise RationaleSetsProblem(f"{where} must be an object with docid, start_token, end_token")
    docid = span.get("docid")
    known = isinstance(docid, str) and (token_counts is None or docid in token_counts)
    if not known:
        raise RationaleSetsProblem(f"{where}.docid: {docid!r} is not a document of this item")
    if docid in closed:
        raise RationaleSetsProblem(f"{where}.docid: {docid!r} {closed[docid]}")
    start, end = span.get("start_token"), span.get("end_token")
    if not (is_token_index(start) and is_token_index(end)):
        raise RationaleSetsProblem(f"{where}: start_token and end_token must be integers")
    n_tokens = token_counts[docid] if token_counts is not None else None
    problem = span_problem(start, end, docid=docid, n_tokens=n_tokens, allow_empty=False)
    if problem is not None:
        name, message = problem
        raise RationaleSetsProblem(f"{where}.{name}: {message}")
    return docid, start, end
