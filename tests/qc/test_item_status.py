"""The status rules of qc/item_status.py, one by one and in their order of precedence."""

import pytest

from qc.item_status import (
    ACCEPTED,
    COMPLETE,
    DISCARDED,
    EXCLUDED,
    GOLD,
    IN_PROGRESS,
    IN_REVIEW,
    REVISING,
    WAITING,
    ChainState,
    ItemState,
    item_status,
)

UNREVIEWED = ChainState(verdict=None, reviewed=False)
REVIEWED = ChainState(verdict=None, reviewed=True)
ACCEPT = ChainState(verdict="accepted", reviewed=True)
DISCARD = ChainState(verdict="discarded", reviewed=True)
REVISE = ChainState(verdict="revise", reviewed=True)


def state(chains=(), per_variant=(0,), quota=2, leases=0, excluded=False, gold=False):
    return ItemState(
        excluded=excluded,
        marked_gold=gold,
        chains=tuple(chains),
        submitted_per_variant=tuple(per_variant),
        quota=quota,
        open_leases=leases,
    )


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (state(), WAITING),
        (state(leases=1), IN_PROGRESS),
        (state(chains=[UNREVIEWED], per_variant=[1]), IN_PROGRESS),
        (state(chains=[UNREVIEWED] * 2, per_variant=[2]), COMPLETE),
        # Every active variant needs its quota.
        (state(chains=[UNREVIEWED] * 2, per_variant=[2, 1]), IN_PROGRESS),
        (state(chains=[REVIEWED, UNREVIEWED], per_variant=[2]), IN_REVIEW),
        (state(chains=[REVIEWED], per_variant=[1]), IN_REVIEW),
        (state(chains=[REVISE, ACCEPT], per_variant=[2]), REVISING),
        (state(chains=[ACCEPT, ACCEPT], per_variant=[2]), ACCEPTED),
        (state(chains=[ACCEPT, DISCARD], per_variant=[2]), ACCEPTED),
        (state(chains=[DISCARD, DISCARD], per_variant=[2]), DISCARDED),
        # Decided chains of an item short of its quota: still being worked on.
        (state(chains=[ACCEPT], per_variant=[1], leases=1), IN_PROGRESS),
        (state(chains=[ACCEPT, ACCEPT], per_variant=[2], gold=True), GOLD),
        (state(chains=[ACCEPT], per_variant=[2], gold=True, excluded=True), EXCLUDED),
        # No active variant: nothing can be complete.
        (state(chains=[UNREVIEWED], per_variant=[]), IN_PROGRESS),
    ],
)
def test_each_status_rule(given, expected):
    assert item_status(given) == expected


def test_precedence_is_the_documented_order():
    everything = state(chains=[REVISE, REVIEWED, ACCEPT], per_variant=[3], quota=3, leases=1)
    assert item_status(everything) == REVISING  # revising outranks in review and complete
    assert item_status(state(chains=[REVIEWED, UNREVIEWED], per_variant=[2], leases=1)) == (
        IN_REVIEW
    )
