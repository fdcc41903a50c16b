"""Which instruction variant a worker is allocated to: permuted blocks.

Workers are numbered in the order they first ask for work in a project (their ticket,
1, 2, 3, ...). Consecutive tickets form blocks of as many workers as there are active
variants, and each block takes the variants in an order shuffled by the project's seed
and the block's number. After every complete block each variant has exactly as many
workers as every other, and in between no variant leads by more than one; which worker
gets which variant is random, and replayable from the seed and the order of arrival.

This is permuted block randomization, the usual way to balance the arms of a
between-subjects experiment as participants arrive. It needs nothing but the ticket,
which one atomic counter hands out, so concurrent first visits never wait on each other.
No Django here: plain values in, an index out.
"""

from __future__ import annotations

import random


def allocation_index(*, ticket: int, seed: int, variants: int) -> int:
    """The position, in the project's active variants ordered by name and version, of the
    variant for the worker holding `ticket` (1-based)."""
    if ticket < 1 or variants < 1:
        raise ValueError(f"ticket {ticket} and variants {variants} must both be at least 1")
    block, place = divmod(ticket - 1, variants)
    order = list(range(variants))
    random.Random(f"{seed}:{variants}:{block}").shuffle(order)
    return order[place]
