"""Which benchmark scripts a change runs in the smoke run (bench/smoke.py --changed-since)."""

from bench.smoke import EXERCISES, FAULT_RUNS, LANES, SMOKE_RUNS, scripts_touched_by

EVERY = list(SMOKE_RUNS)


def test_every_script_says_what_it_exercises():
    assert set(EXERCISES) == set(SMOKE_RUNS) | set(FAULT_RUNS)


def test_a_change_to_the_scorer_runs_the_scripts_that_score_and_no_others():
    chosen = scripts_touched_by(["rationale_metrics/soft.py"], EVERY)

    assert {"metrics", "fine_grained", "export", "explain"} <= set(chosen)
    assert not {"load", "hotpath_cost", "workspace", "import"} & set(chosen)


def test_a_script_runs_when_its_own_file_changes():
    assert scripts_touched_by(["bench/load.py"], EVERY) == ["load"]


def test_a_change_to_what_all_stand_on_runs_them_all():
    assert scripts_touched_by(["requirements/constraints.txt"], EVERY) == EVERY
    assert scripts_touched_by(["bench/common.py", "docs/index.md"], EVERY) == EVERY


def test_documentation_alone_runs_none():
    assert scripts_touched_by(["docs/index.md", "README.md"], EVERY) == []


def test_every_smoke_script_runs_in_one_lane():
    in_lanes = [script for lane in LANES for script in lane]

    assert sorted(in_lanes) == sorted(SMOKE_RUNS), "each script in exactly one lane"
