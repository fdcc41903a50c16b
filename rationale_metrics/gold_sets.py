"""The gold token set a predicted rationale is scored against, when an instance has several
alternative gold sets (docs/reference/metrics.md#token-f1-against-rationale-sets).

One rule for both places that score against rationale sets: the fine-grained benchmark's
own files (`fine_grained`) and ERASER datasets whose evidence groups are the sets
(`extensions`, reported beside the reference scores).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction


def token_f1(gold: Sequence[int], predicted: Sequence[int], *, exact: bool = False):
    """F1 of predicted token indexes against gold ones: precision over the predicted list's
    length, recall over the gold's; 0 when either is 0. A Fraction when `exact`."""
    common = len(set(predicted).intersection(gold))
    if not common:
        return Fraction(0) if exact else 0.0
    if exact:
        precision, recall = Fraction(common, len(predicted)), Fraction(common, len(gold))
    else:
        precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def choose_gold(
    sets: Sequence[Sequence[int]],
    predicted: Sequence[int],
    *,
    gold_choice: str = "greedy_union",
    exact: bool = False,
) -> list[int]:
    """The gold token set a predicted rationale is scored against
    (docs/reference/metrics.md#token-f1-against-rationale-sets).

    First the single set with the highest F1, the earliest of equals. Then, for
    "greedy_union", for each start s from the first set to the second-to-last: walk the
    sets from s, adding one only when the union does not already cover it, its own F1 is
    above 0, and it strictly raises the union's F1; the union replaces the gold only when
    its F1 is strictly higher. Nothing overlapping gives [].
    """
    own = [token_f1(s, predicted, exact=exact) for s in sets]
    best, chosen = 0, []
    for group, f1 in zip(sets, own, strict=True):
        if f1 > best:
            best, chosen = f1, list(group)
    if gold_choice == "greedy_union":
        for start in range(len(sets) - 1):
            union: set[int] = set()
            union_f1 = 0
            for group, f1 in zip(sets[start:], own[start:], strict=True):
                # A set's length is its list's, so a set with a repeated index never counts
                # as covered: the public code's test, kept for its numbers.
                if len(union.intersection(group)) < len(group) and f1 > 0:
                    merged = union.union(group)
                    merged_f1 = token_f1(list(merged), predicted, exact=exact)
                    if merged_f1 > union_f1:
                        union, union_f1 = merged, merged_f1
            if union_f1 > best:
                best, chosen = union_f1, sorted(union)
    return chosen if best > 0 else []
