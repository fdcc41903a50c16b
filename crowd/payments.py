"""What a platform session earns, and effective hourly pay: plain arithmetic on Decimals.

The inputs are counts from the platform's own records (`crowd.selectors`), never numbers
a worker sent. A session's pay is:

    base           = reward_per_session              (paid by the platform on approval)
    item pay       = items x reward_per_item
    review bonus   = accepted annotations x bonus_per_accepted
    extra bonus    = max(0, items - items_required) x bonus_per_extra_item
    bonus          = item pay + review bonus + extra bonus   (paid as the platform's bonus)

Rates have two decimals, so every figure is exact in cents and nothing is rounded.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

CENT = Decimal("0.01")


@dataclass(frozen=True)
class PayTerms:
    items_required: int
    reward_per_session: Decimal
    reward_per_item: Decimal = Decimal(0)
    bonus_per_accepted: Decimal = Decimal(0)
    bonus_per_extra_item: Decimal = Decimal(0)


@dataclass(frozen=True)
class SessionPay:
    base: Decimal
    item_pay: Decimal
    review_bonus: Decimal
    extra_bonus: Decimal
    extra_items: int

    @property
    def bonus(self) -> Decimal:
        return self.item_pay + self.review_bonus + self.extra_bonus

    @property
    def total(self) -> Decimal:
        return self.base + self.bonus


def session_pay(terms: PayTerms, *, items: int, accepted: int) -> SessionPay:
    if items < 0 or accepted < 0 or accepted > items:
        raise ValueError(f"items {items} and accepted {accepted} are not counts of one session")
    extra = max(0, items - terms.items_required)
    return SessionPay(
        base=terms.reward_per_session,
        item_pay=items * terms.reward_per_item,
        review_bonus=accepted * terms.bonus_per_accepted,
        extra_bonus=extra * terms.bonus_per_extra_item,
        extra_items=extra,
    )


def money(amount: Decimal) -> str:
    """Two decimals, no symbol: what both platforms' bonus inputs take."""
    return str(amount.quantize(CENT))


def hourly(amount: Decimal, seconds: float) -> Decimal | None:
    """Pay per hour for `seconds` of work; None when no time was measured."""
    if seconds <= 0:
        return None
    return (amount * 3600 / Decimal(str(seconds))).quantize(CENT)


def median_money(values: Iterable[Decimal | None]) -> Decimal | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    return Decimal(statistics.median(present)).quantize(CENT)
