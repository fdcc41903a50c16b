"""The property tests' budgets follow the run's profile (tests/hypothesis_budget.py)."""

import hypothesis
import pytest

from tests.hypothesis_budget import examples, profile_name


def test_each_profile_runs_its_share_of_a_stated_budget():
    assert [examples(400, p) for p in ("dev", "ci", "full")] == [100, 200, 400]
    assert examples(2, "dev") == 1  # never none at all


@pytest.mark.parametrize(
    ("environment", "expected"),
    [({}, "dev"), ({"CI": "true"}, "ci"), ({"CI": "true", "HYPOTHESIS_PROFILE": "full"}, "full")],
)
def test_the_profile_is_named_by_the_environment(monkeypatch, environment, expected):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    assert profile_name() == expected


def test_an_unknown_profile_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "nightly")

    with pytest.raises(ValueError, match="HYPOTHESIS_PROFILE='nightly'"):
        profile_name()


def test_tests_without_a_budget_follow_the_loaded_profile():
    assert hypothesis.settings().max_examples == examples(100)
