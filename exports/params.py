"""Export parameters: what to select, how highlights become evidences, splits and format."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from config.exceptions import ApplicationError
from qc.cohorts import COHORTS
from qc.filters import ItemListFilter, item_filter_data, item_filter_problems

SELECTIONS = ("submitted", "accepted", "reference")
# "curated": the curators' gold sets (qc's CuratedAnnotation); uncurated items are left out.
AGGREGATIONS = (
    "majority",
    "union",
    "annotator",
    "all_sets",
    "accepted_sets",
    "reference",
    "curated",
)
SPLIT_MODES = ("keep", "ratios")
# "benchmark": the fine-grained benchmark's own format (exports/benchmark.py) instead of ERASER.
BENCHMARK_LAYOUT = "benchmark"
# "hf": a folder `datasets.load_dataset` reads: Parquet shards per split and a dataset card
# (exports/huggingface.py).
HF_LAYOUT = "hf"
LAYOUTS = ("docs", "docs.jsonl", BENCHMARK_LAYOUT, HF_LAYOUT)
ARCHIVES = ("zip", "directory")
# A seed is any 32-bit unsigned integer (numpy's and most tools' range). Beyond it a number
# is a typo, and one beyond 64 bits could not even be written back as JSON by the API.
SEED_MAX = 2**32 - 1


@dataclass(frozen=True)
class ExportParams:
    selection: str = "submitted"
    variant: str | None = None
    cohort: str | None = None
    aggregation: str = "majority"
    annotator: str | None = None
    splits: str = "keep"
    ratios: tuple[float, float, float] = (0.8, 0.1, 0.1)
    seed: int = 0
    layout: str = "docs"
    archive: str = "zip"
    # The data manager's query string (qc/filters.py): export only the items it matches.
    item_filter: str | None = None

    def as_dict(self) -> dict:
        data = asdict(self)
        data["ratios"] = list(self.ratios)
        return data


def export_params_from(raw: dict) -> ExportParams:
    """Validate raw parameters; every problem is named by its field."""
    problems = []
    known = set(ExportParams.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        problems.append(f"unknown parameter(s): {', '.join(unknown)}")
    values = {k: v for k, v in raw.items() if k in known and v is not None}
    for key, allowed in (
        ("selection", SELECTIONS),
        ("aggregation", AGGREGATIONS),
        ("splits", SPLIT_MODES),
        ("layout", LAYOUTS),
        ("archive", ARCHIVES),
    ):
        if key in values and values[key] not in allowed:
            problems.append(f"{key}: {values[key]!r} is not one of {', '.join(allowed)}")
    if "ratios" in values:
        ratios = values["ratios"]
        if (
            not isinstance(ratios, list | tuple)
            or len(ratios) != 3
            or not all(
                isinstance(r, int | float)
                and not isinstance(r, bool)
                and math.isfinite(r)
                and 0 <= r <= 1
                for r in ratios
            )
            or abs(sum(ratios) - 1) > 1e-6
        ):
            problems.append("ratios: three numbers from 0 to 1 (train, val, test) that sum to 1")
        else:
            values["ratios"] = tuple(float(r) for r in ratios)
    if "seed" in values and (
        not isinstance(values["seed"], int)
        or isinstance(values["seed"], bool)
        or not 0 <= values["seed"] <= SEED_MAX
    ):
        problems.append(f"seed: an integer from 0 to {SEED_MAX}")
    params = ExportParams(**values) if not problems else None
    if params is not None:
        if params.aggregation == "annotator" and not params.annotator:
            problems.append("annotator: name the annotator whose highlights to export")
        if params.aggregation == "reference" and params.selection != "reference":
            problems.append(
                "aggregation: 'reference' exports the imported rationales; use selection 'reference'"
            )
        if params.aggregation == "accepted_sets" and params.selection != "accepted":
            problems.append(
                "aggregation: 'accepted_sets' takes the sets of accepted annotations; use selection 'accepted'"
            )
        if params.item_filter is not None:
            problem = item_filter_problem(params.item_filter)
            if problem:
                problems.append(f"item_filter: {problem}")
        if params.aggregation == "curated" and params.selection == "reference":
            problems.append(
                "aggregation: 'curated' exports the curated gold of annotated items; use "
                "selection 'submitted' or 'accepted'"
            )
        if params.cohort and params.cohort not in COHORTS:
            problems.append(f"cohort: {params.cohort!r} is not one of {', '.join(COHORTS)}")
        if params.layout == BENCHMARK_LAYOUT and params.splits != "keep":
            problems.append(
                "splits: the benchmark format has no splits: every chosen item goes into one "
                "file; use splits 'keep'"
            )
        if params.selection == "reference" and params.aggregation != "reference":
            problems.append(
                "selection: 'reference' exports every item with its imported rationales only"
            )
    if problems:
        raise ApplicationError(
            "invalid export parameters: " + "; ".join(problems), extra={"problems": problems}
        )
    return params


def item_filter_problem(query) -> str | None:
    """Why the data manager's list would refuse this query string, if it would."""
    if not isinstance(query, str):
        return "the item list's query string, as text"
    filters = ItemListFilter(data=item_filter_data(query), queryset=None)
    if filters.is_valid():
        return None
    return item_filter_problems(filters)
