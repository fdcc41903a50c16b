"""bench/hotpath_cost.py's budget: the committed file is read whole or refused with the
field named, and a figure more than the tolerance above its budget fails the run."""

import json
from pathlib import Path

import pytest

from bench.hotpath_cost import (
    BUDGET_FILE,
    FIGURES,
    budget_overruns,
    budget_read,
    budget_write,
    figures_from_dumps,
)


def test_the_committed_budget_holds_every_figure():
    budget, tolerance = budget_read()

    assert set(budget) == set(FIGURES)
    assert tolerance == 0.05


def test_a_figure_over_its_budget_by_more_than_the_tolerance_is_named():
    budget = {"pair": 6.0e6, "entry": 10.0e6}

    overruns = budget_overruns({"pair": 6.31e6, "entry": 10.4e6}, budget, 0.05)

    assert len(overruns) == 1
    assert overruns[0].startswith("pair: 6.31 M instructions, +5.2% against its budget of 6.00 M")


def test_figures_within_the_tolerance_or_without_a_budget_pass():
    assert budget_overruns({"pair": 6.29e6, "workspace": 99e6}, {"pair": 6.0e6}, 0.05) == []


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{", "cannot read the budget"),
        ('{"tolerance": 0.05}', 'needs an "instructions" object'),
        ('{"instructions": {"pairs": 1}}', "instructions.pairs: not a figure"),
        ('{"instructions": {"pair": -1}}', "instructions.pair: must be a positive number"),
        ('{"instructions": {"pair": true}}', "instructions.pair: must be a positive number"),
        ('{"instructions": {}, "tolerance": 2}', '"tolerance" must be a fraction'),
    ],
)
def test_a_bad_budget_file_is_refused_naming_the_file_and_field(tmp_path, content, words):
    path = tmp_path / "budget.json"
    path.write_text(content)

    with pytest.raises(SystemExit) as refused:
        budget_read(path)

    assert str(path) in str(refused.value)
    assert words in str(refused.value)


def test_a_written_budget_reads_back_and_keeps_its_tolerance(tmp_path):
    path = tmp_path / "budget.json"
    path.write_text(json.dumps({"tolerance": 0.03, "instructions": {"pair": 1}}))
    figures = {name: 1_234_567.0 + n for n, name in enumerate(FIGURES)}

    budget_write(figures, path)

    assert budget_read(path) == ({name: 1_235_000.0 for name in FIGURES}, 0.03)
    assert BUDGET_FILE.name == "hotpath_budget.json"


def test_the_figures_are_read_from_callgrinds_numbered_dumps_in_the_counted_order(tmp_path):
    out = tmp_path / "callgrind.out"
    totals = {2: 60_000_000, 3: 900_000}  # 3 pairs, then 3 bare requests
    for n in range(2):  # 2 arrivals, a dump after each of their 5 requests
        for k in range(5):
            totals[4 + n * 5 + k] = (k + 1) * 1_000_000 + n * 2_000_000
    for number, total in totals.items():
        Path(f"{out}.{number}").write_text(f"events: Ir\nsummary: {total}\n")

    figures = figures_from_dumps(out, pairs=3, arrivals=2)

    assert figures == {
        "pair": 20_000_000,
        "bare request": 300_000,
        "entry": 2_000_000,
        "consent page": 3_000_000,
        "consent answer": 4_000_000,
        "workspace": 5_000_000,
        "first next": 6_000_000,
    }


def test_a_dump_without_a_total_is_named(tmp_path):
    out = tmp_path / "callgrind.out"
    Path(f"{out}.2").write_text("events: Ir\n")

    with pytest.raises(SystemExit, match=r"callgrind\.out\.2: no instruction total"):
        figures_from_dumps(out, pairs=1, arrivals=1)
