"""How many examples each property test generates, by where the suite runs.

A test states its full budget, `max_examples=examples(400)`; the Hypothesis profile named by
HYPOTHESIS_PROFILE runs a share of it: "dev" (a newcomer's `make test`) a quarter, "ci" (CI's
`make test`) half, "full" (the scheduled run, `.ci/scheduled`) all of it. Tests that state no
budget take the profile's own max_examples, Hypothesis' default of 100 scaled alike. An
explicit number in a test would override the profile, so tests always go through here.
"""

from __future__ import annotations

import os

SHARES = {"dev": 0.25, "ci": 0.5, "full": 1.0}


def profile_name() -> str:
    name = os.environ.get("HYPOTHESIS_PROFILE") or (
        "ci" if os.environ.get("CI") == "true" else "dev"
    )
    if name not in SHARES:
        raise ValueError(f"HYPOTHESIS_PROFILE={name!r}: expected one of {', '.join(SHARES)}")
    return name


def examples(full: int, profile: str | None = None) -> int:
    """The share of a test's full budget of examples that this run (or `profile`)
    generates, at least 1."""
    return max(1, round(full * SHARES[profile or profile_name()]))
