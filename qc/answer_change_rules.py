"""Whether an annotator may still change an answer they submitted: plain rules over plain
facts (no ORM), each tested on its own (tests/qc/test_answer_change_rules.py).

An answer stays open to its annotator until a reviewer scores it, or, when the project
says so, until its item has every annotation its variant needs, whichever comes first: a
review scores the sets as they were, so a change after it would leave the scores about
an answer nobody sees any more. A study's participants never change theirs: their
submissions are what the study pays for and reports, as they were given. Nothing changes
in a project that is archived or on an item that was deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

UNTIL_REVIEWED = "reviewed"
UNTIL_COMPLETE = "complete"

PARTICIPANT = "participant"
REVIEWED = "reviewed"
COMPLETE = "complete"
ARCHIVED = "project_archived"
DELETED = "item_deleted"


@dataclass(frozen=True)
class AnswerFacts:
    participant: bool
    reviewed: bool
    # The item's variant holds `annotators_per_item` submitted annotations of this round.
    complete: bool
    project_archived: bool
    item_deleted: bool


def answer_closed_reason(facts: AnswerFacts, *, until: str) -> str | None:
    """Why the answer may no longer change (one of the codes above), or None if it may."""
    if facts.item_deleted:
        return DELETED
    if facts.project_archived:
        return ARCHIVED
    if facts.participant:
        return PARTICIPANT
    if facts.reviewed:
        return REVIEWED
    if until == UNTIL_COMPLETE and facts.complete:
        return COMPLETE
    return None
