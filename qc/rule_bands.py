"""Recruitment bands: a qualification rule with a lower and an upper bound.

The crowd study behind this project compared workers recruited above 80, 90 and 95 percent
approval. With a lower bound alone, the "above 80" crowd also holds every 95-percent worker,
so the levels could only be told apart afterwards (qc.cohorts). An upper bound lets each
level be recruited on its own: 80-90 %, then 90-95 %. Both bounds are inclusive, like the
lower bound has always been. Plain functions over numbers, no ORM.
"""

from __future__ import annotations

APPROVAL_RATE_LIMITS = (0.0, 100.0)


def band_text(low: float | None, high: float | None, unit: str = "") -> str:
    if low is not None and high is not None:
        return f"{low:g}-{high:g}{unit}"
    if low is not None:
        return f"≥ {low:g}{unit}"
    if high is not None:
        return f"≤ {high:g}{unit}"
    return "any"


def approval_rate_failure(rate: float | None, low: float | None, high: float | None) -> str | None:
    """Why a worker's approval rate keeps them out, in words; None when it lets them in."""
    if low is None and high is None:
        return None
    band = band_text(low, high, "%")
    if rate is None:
        if high is None:  # the wording workers with no history have always been given
            return f"approval rate unknown is under {low:g}%"
        return f"approval rate unknown, not in the band {band}"
    if (low is None or rate >= low) and (high is None or rate <= high):
        return None
    if high is None:
        return f"approval rate {rate:g}% is under {low:g}%"
    if low is None:
        return f"approval rate {rate:g}% is over {high:g}%"
    return f"approval rate {rate:g}% is outside the band {band}"


def approved_count_failure(count: int, low: int | None, high: int | None) -> str | None:
    if (low is None or count >= low) and (high is None or count <= high):
        return None
    if high is None:
        return f"{count} approved tasks, under {low}"
    if low is None:
        return f"{count} approved tasks, over {high}"
    return f"{count} approved tasks, outside the band {band_text(low, high)}"


def band_problem(
    *,
    low_field: str,
    high_field: str,
    low: float | None,
    high: float | None,
    limits: tuple[float, float] | None = None,
) -> tuple[str, str] | None:
    """What is wrong with a band's bounds, as (field, message); None when they are usable.
    `limits` is the range both bounds must lie in (0-100 for a percentage)."""
    for field, value in ((low_field, low), (high_field, high)):
        if value is None:
            continue
        if value < 0 or (limits is not None and not limits[0] <= value <= limits[1]):
            allowed = f"{limits[0]:g} to {limits[1]:g}" if limits else "0 or more"
            return field, f"{value:g} is out of range: it must be {allowed}"
    if low is not None and high is not None and low > high:
        return high_field, (
            f"{high:g} is below {low_field} {low:g}: a band needs {low_field} ≤ {high_field}"
        )
    return None
