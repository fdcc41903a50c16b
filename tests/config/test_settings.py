"""Settings: environment switches and the production safety checks."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings.safety import DEFAULT_SECRET_KEY, refuse_unsafe_settings, unsafe_settings

ROOT = Path(__file__).resolve().parents[2]
GOOD_KEY = "k" * 50


@pytest.mark.parametrize(
    ("debug", "key", "hosts", "complaint"),
    [
        (True, GOOD_KEY, ["example.org"], "DJANGO_DEBUG"),
        (False, DEFAULT_SECRET_KEY, ["example.org"], "DJANGO_SECRET_KEY"),
        (False, "", ["example.org"], "DJANGO_SECRET_KEY"),
        (False, "short", ["example.org"], "DJANGO_SECRET_KEY"),
        (False, GOOD_KEY, ["*"], "DJANGO_ALLOWED_HOSTS"),
        (False, GOOD_KEY, [], "DJANGO_ALLOWED_HOSTS"),
    ],
)
def test_production_refuses_unsafe_settings(debug, key, hosts, complaint):
    with pytest.raises(ImproperlyConfigured, match=complaint):
        refuse_unsafe_settings(debug=debug, secret_key=key, allowed_hosts=hosts)


def test_production_accepts_safe_settings():
    assert unsafe_settings(debug=False, secret_key=GOOD_KEY, allowed_hosts=["example.org"]) == []


def test_the_shortest_key_production_accepts_has_32_characters():
    hosts = ["example.org", "www.example.org"]

    assert unsafe_settings(debug=False, secret_key="k" * 32, allowed_hosts=hosts) == []
    assert unsafe_settings(debug=False, secret_key="k" * 31, allowed_hosts=hosts) == [
        "DJANGO_SECRET_KEY must be set to a random value of 32+ characters"
    ]


def test_production_names_every_problem_at_once():
    problems = unsafe_settings(debug=True, secret_key=DEFAULT_SECRET_KEY, allowed_hosts=["*"])

    assert [p.split()[0] for p in problems] == [
        "DJANGO_DEBUG",
        "DJANGO_SECRET_KEY",
        "DJANGO_ALLOWED_HOSTS",
    ]


def run_settings(module: str, **env) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "CACHE_"))
    }
    code = (
        "import django; from django.conf import settings; django.setup(); "
        "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_TASK_ALWAYS_EAGER, settings.DEBUG)"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_SETTINGS_MODULE": module, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_module_will_not_start_with_the_default_key():
    result = run_settings("config.settings.production", DJANGO_ALLOWED_HOSTS="example.org")

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_production_module_starts_with_safe_environment():
    result = run_settings(
        "config.settings.production", DJANGO_SECRET_KEY=GOOD_KEY, DJANGO_ALLOWED_HOSTS="example.org"
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[2] == "False"


def test_nothing_set_means_sqlite_and_eager_celery():
    result = run_settings("config.settings.local")

    assert result.stdout.split() == ["django.db.backends.sqlite3", "True", "True"]


def test_environment_switches_to_postgres_and_a_broker():
    result = run_settings(
        "config.settings.local",
        DATABASE_URL="postgres://u@127.0.0.1:5432/x",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
    )

    assert result.stdout.split()[:2] == ["config.postgresql", "False"]  # Django's, subclassed
