"""Leasing and submitting have two implementations on PostgreSQL: one prepared statement
each for the common case (annotate/services/hot_path_sql.py) and the general services.
Tests that ask for `hot_path` run once per path, so both answer to the same tests."""

import pytest
from django.conf import settings

HOT_PATHS = ("sql", "orm")


def _on_postgresql() -> bool:
    return "postgresql" in settings.DATABASES["default"]["ENGINE"]


def pytest_generate_tests(metafunc):
    if "hot_path" in metafunc.fixturenames:
        # On SQLite only the general services exist: one run, named for what it is.
        paths = HOT_PATHS if _on_postgresql() else ("orm",)
        metafunc.parametrize("hot_path", paths, indirect=True)


@pytest.fixture
def hot_path(request, settings):
    """ "sql": the prepared statements serve what they can (the production default);
    "orm": they are switched off and the general services do everything."""
    settings.ANNOTATE_HOT_PATH_SQL = request.param == "sql"
    return request.param
