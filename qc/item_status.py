"""An item's place in the workflow, as the data manager shows it: plain rules over plain
data (no ORM), so that every rule is tested on its own (tests/qc/test_item_status.py).

The rules, first match wins:

1. excluded     the item is kept out of exports (`Item.excluded`);
2. gold         the item is in the project's gold set (`Item.marked_gold`);
3. accepted     the item's work is complete (rule 6) and the newest annotation of every
   discarded   chain (an annotation and its revisions) has a final review verdict:
                accepted when at least one chain was accepted, else discarded;
4. revising     the newest annotation of some chain was sent back (a "revise" verdict)
                and its revision is not submitted yet;
5. in_review    the newest annotation of some chain has a review but no verdict yet;
6. complete     every active variant (or the one variant the item is pinned to) has
                `annotators_per_item` submitted chains;
7. in_progress  some lease is open or some annotation submitted;
8. waiting      nothing has happened to the item yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

WAITING = "waiting"
IN_PROGRESS = "in_progress"
COMPLETE = "complete"
IN_REVIEW = "in_review"
REVISING = "revising"
ACCEPTED = "accepted"
DISCARDED = "discarded"
GOLD = "gold"
EXCLUDED = "excluded"

ITEM_STATUSES = (
    WAITING,
    IN_PROGRESS,
    COMPLETE,
    IN_REVIEW,
    REVISING,
    ACCEPTED,
    DISCARDED,
    GOLD,
    EXCLUDED,
)

VERDICT_ACCEPTED = "accepted"
VERDICT_REVISE = "revise"
VERDICT_DISCARDED = "discarded"


@dataclass(frozen=True)
class ChainState:
    """The newest submitted annotation of one chain: its verdict ("accepted", "revise",
    "discarded" or None) and whether any reviewer has scored it."""

    verdict: str | None
    reviewed: bool


@dataclass(frozen=True)
class ItemState:
    excluded: bool
    marked_gold: bool
    chains: tuple[ChainState, ...]
    # Submitted chains per active variant, and how many each needs.
    submitted_per_variant: tuple[int, ...]
    quota: int
    open_leases: int


def quota_met(submitted_per_variant: Iterable[int], quota: int) -> bool:
    counts = list(submitted_per_variant)
    return bool(counts) and all(n >= quota for n in counts)


def item_status(state: ItemState) -> str:
    if state.excluded:
        return EXCLUDED
    if state.marked_gold:
        return GOLD
    verdicts = [chain.verdict for chain in state.chains]
    complete = quota_met(state.submitted_per_variant, state.quota)
    final = (VERDICT_ACCEPTED, VERDICT_DISCARDED)
    if complete and verdicts and all(v in final for v in verdicts):
        return ACCEPTED if VERDICT_ACCEPTED in verdicts else DISCARDED
    if VERDICT_REVISE in verdicts:
        return REVISING
    if any(chain.reviewed and chain.verdict is None for chain in state.chains):
        return IN_REVIEW
    if complete:
        return COMPLETE
    if state.open_leases or state.chains:
        return IN_PROGRESS
    return WAITING
