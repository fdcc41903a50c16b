"""What a project's task type asks of its items: answers found in passages, options read
from a CoS-E query, the names of a pair's texts. Plain functions, no ORM."""

from __future__ import annotations

# ERASER's CoS-E writes an item's answer options as its query, joined by this.
OPTION_SEPARATOR = " [sep] "

# What an annotator's label says when they find no answer in a reading-comprehension
# passage: the submit body needs a non-blank label, and a typed answer is passage text,
# which this bracketed phrase is unlikely to be.
NO_ANSWER_LABEL = "(no answer)"

DEFAULT_TEXT_NAMES = ("Text 1", "Text 2")
MAX_TEXT_NAME_LENGTH = 60


def options_from_query(query: str | None) -> list[str]:
    """The options of a CoS-E-style query ("a [sep] b [sep] c"); none for any other query."""
    if not query or OPTION_SEPARATOR not in query:
        return []
    return [part.strip() for part in query.split(OPTION_SEPARATOR)]


def answer_char_span(
    passage: str, answer: str | None, start: int | None, end: int | None
) -> tuple[tuple[int, int] | None, tuple[str, str] | None]:
    """Where a reading-comprehension answer sits in its passage, as half-open character
    offsets, or the problem (field, message) that prevents saying.

    Offsets, when given, decide, and a given answer text must then match them; a text
    alone must occur exactly once, since an answer found twice could be either."""
    if start is not None or end is not None:
        if start is None or end is None:
            missing = "answer_start" if start is None else "answer_end"
            return None, (missing, "answer_start and answer_end are given together")
        if not 0 <= start < len(passage):
            return None, (
                "answer_start",
                f"{start} is outside the passage, which has {len(passage)} characters",
            )
        if not start < end <= len(passage):
            return None, (
                "answer_end",
                f"{end} must be after answer_start {start} and at most the passage length "
                f"{len(passage)}",
            )
        if answer is not None and passage[start:end] != answer:
            return None, (
                "answer",
                f"{answer!r} is not the passage text at [{start}, {end}), which is "
                f"{passage[start:end]!r}",
            )
        return (start, end), None
    assert answer is not None
    found = passage.find(answer)
    if found < 0:
        return None, ("answer", f"{_preview(answer)} does not occur in the passage")
    again = passage.find(answer, found + 1)
    if again >= 0:
        count = passage.count(answer)
        return None, (
            "answer",
            f"{_preview(answer)} occurs {count} times in the passage (first at characters "
            f"{found} and {again}); give answer_start and answer_end to say which",
        )
    return (found, found + len(answer)), None


def _preview(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def text_names_shown(task_type: str, text_names: list[str]) -> list[str]:
    """What a project's texts are called on its pages: a pair's own names, or its defaults."""
    if task_type == "sentence_pair" and not text_names:
        return list(DEFAULT_TEXT_NAMES)
    return list(text_names)


def text_names_problem(task_type: str, text_names: list[str]) -> str | None:
    """Why these names cannot name this project's texts, if they cannot."""
    if not text_names:
        return None
    if task_type != "sentence_pair":
        return "only a text-pair project names its two texts"
    if len(text_names) != 2:
        return f"a text pair has two texts: give two names, not {len(text_names)}"
    return None


def question_rationales_problem(task_type: str, question_rationales: bool) -> str | None:
    if question_rationales and task_type != "reading_comprehension":
        return "only a reading-comprehension project has a question to highlight in"
    return None
