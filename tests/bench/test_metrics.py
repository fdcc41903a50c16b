"""bench/metrics.py: a failing child, such as the reference scorer without torch, says why."""

import os
import sys

import pytest

from bench.metrics import run_timed, whole_process_commands


def test_a_failing_child_shows_its_own_error_output():
    command = [sys.executable, "-c", "import sys; sys.exit(\"No module named 'torch'\")"]

    with pytest.raises(RuntimeError) as caught:
        run_timed(command, dict(os.environ))

    assert "exited with 1" in str(caught.value)
    assert "No module named 'torch'" in str(caught.value)


def test_the_reference_runs_with_its_own_python(tmp_path):
    commands = whole_process_commands(tmp_path, tmp_path / "eraser", "/opt/eraser/bin/python")

    assert commands["reference"][0][:3] == [
        "/opt/eraser/bin/python",
        "-m",
        "rationale_benchmark.metrics",
    ]
    assert commands["reference"][1]["PYTHONPATH"] == str(tmp_path / "eraser")
    assert commands["score"][0][0] == sys.executable
