"""The perturbation types a project offers: the benchmark's three and the project's own.

Plain functions over plain data (no ORM): the services validate with them, the selectors
and pages list them. A project's own types are stored in `Project.perturbation_types`
as objects `{"key", "name", "description"}`; a bare string there is read as a key.
"""

from __future__ import annotations

import re

from annotate.models import PerturbationType

# The criteria in section 3.2 of the fine-grained benchmark's paper
# (docs/reference/metrics.md#sources), shown to authors and checkers so that both judge a
# perturbation by the same definition.
BUILTIN_DESCRIPTIONS = {
    PerturbationType.DISPENSABLE_WORDS: (
        "Insert, delete or replace words that should not change the prediction or the "
        "rationale, e.g. “what are some reasons to travel alone” becomes “list some "
        "reasons to travel alone”."
    ),
    PerturbationType.IMPORTANT_WORDS: (
        "Replace words that matter for the prediction with synonyms or related words, "
        "e.g. “i hate you” becomes “i dislike you”: prediction and rationale should "
        "change with them."
    ),
    PerturbationType.SYNTAX: (
        "Transform the syntax without changing the meaning, e.g. “the customer commented "
        "the hotel” becomes “the hotel is commented by the customer”: prediction and "
        "rationale should not change."
    ),
}

KEY_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
MAX_PROJECT_TYPES = 20
MAX_NAME_CHARS = 80
MAX_DESCRIPTION_CHARS = 1000


def project_types(stored: list) -> list[dict]:
    """A project's own types as stored, each read as {"key", "name", "description"}."""
    types = []
    for entry in stored or []:
        if isinstance(entry, str):
            types.append({"key": entry, "name": entry.replace("_", " "), "description": ""})
        elif isinstance(entry, dict) and isinstance(entry.get("key"), str):
            types.append(
                {
                    "key": entry["key"],
                    "name": entry.get("name") or entry["key"],
                    "description": entry.get("description") or "",
                }
            )
    return types


def available_types(stored: list) -> list[dict]:
    """Every type an author may pick, built-in first, each with `builtin` set."""
    builtin = [
        # str(): the label is translatable (lazy), and the API's JSON takes plain strings.
        {
            "key": t.value,
            "name": str(t.label),
            "description": BUILTIN_DESCRIPTIONS[t],
            "builtin": True,
        }
        for t in PerturbationType
    ]
    own = [{**t, "builtin": False} for t in project_types(stored)]
    return builtin + own


def project_types_checked(entries: list[dict]) -> tuple[list[dict], list[str]]:
    """A project's own types cleaned for storage, and what is wrong with them, each
    problem naming the entry it is about."""
    cleaned: list[dict] = []
    problems: list[str] = []
    if len(entries) > MAX_PROJECT_TYPES:
        problems.append(
            f"perturbation_types: at most {MAX_PROJECT_TYPES} project types, got {len(entries)}"
        )
    seen: set[str] = set()
    builtin = set(PerturbationType.values)
    for n, entry in enumerate(entries):
        where = f"perturbation_types[{n}]"
        key = (entry.get("key") or "").strip()
        name = (entry.get("name") or "").strip() or key.replace("_", " ")
        description = (entry.get("description") or "").strip()
        if not KEY_PATTERN.match(key):
            problems.append(
                f"{where}.key: {key!r} must start with a lowercase letter and hold only "
                "lowercase letters, digits and _ (at most 48)"
            )
        elif key in builtin:
            problems.append(f"{where}.key: {key!r} is one of the built-in types already")
        elif key in seen:
            problems.append(f"{where}.key: {key!r} is given twice")
        if len(name) > MAX_NAME_CHARS:
            problems.append(f"{where}.name: at most {MAX_NAME_CHARS} characters")
        if len(description) > MAX_DESCRIPTION_CHARS:
            problems.append(f"{where}.description: at most {MAX_DESCRIPTION_CHARS} characters")
        seen.add(key)
        cleaned.append({"key": key, "name": name, "description": description})
    return cleaned, problems
