"""Tests that ask for `hot_path` run on both paths of "next" and "submit" here too."""

from tests.annotate.conftest import hot_path, pytest_generate_tests  # noqa: F401
