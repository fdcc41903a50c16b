"""The options every PostgreSQL connection is opened with."""

import subprocess
import sys

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_each_postgresql_connection_plans_for_cached_data_and_ssds():
    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL setting; this run uses SQLite (make test without CI)")
    with connection.cursor() as cursor:
        cursor.execute("SHOW random_page_cost")
        assert cursor.fetchone() == ("1.1",)


def test_an_empty_setting_leaves_the_server_s_cost():
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings.test';"
        "django.setup(); from django.conf import settings;"
        "print(settings.DATABASES['default'].get('OPTIONS', {}).get('options', ''))"
    )
    env = {
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/unused",
        "PATH": "/usr/bin:/bin",
    }
    kept = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    cleared = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "DATABASE_RANDOM_PAGE_COST": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert kept.stdout.strip() == "-c random_page_cost=1.1"
    assert cleared.stdout.strip() == ""
