import os
import shutil
from pathlib import Path

import hypothesis
import pytest
from django.db import connection
from rest_framework.test import APIClient

from annotate.models import Role
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.hypothesis_budget import SHARES, examples, profile_name

# Property tests that state no budget follow the run's profile too (tests/hypothesis_budget.py).
# Hypothesis' two clocks are off: its per-example deadline and its "input generation is slow"
# health check time the machine, not the code, and failed healthy tests whenever the 2-core
# machine was busy (3 integers "took" 1.05 s at load 26). Tests assert behaviour, not time.
for _profile in SHARES:
    hypothesis.settings.register_profile(
        _profile,
        max_examples=examples(100, _profile),
        deadline=None,
        suppress_health_check=[hypothesis.HealthCheck.too_slow],
    )
hypothesis.settings.load_profile(profile_name())

SHARED_REFERENCE = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "eraser-reference"
)


def services_required() -> bool:
    """In CI (RW_REQUIRE_SERVICES=1) a missing service fails the test instead of skipping it."""
    return os.environ.get("RW_REQUIRE_SERVICES") == "1"


def skip_or_fail(reason: str):
    if services_required():
        pytest.fail(f"CI needs this service: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """On PostgreSQL each test process's database is a copy of a template migrated once
    for this checkout's migrations (bench/common.py), not migrated again from nothing."""
    from django.conf import settings
    from django.db import connections

    from bench.common import migrated_template

    database = settings.DATABASES["default"]
    # By vendor: the settings name the project's own subclasses of Django's backend.
    if connections["default"].vendor == "postgresql":
        database.setdefault("TEST", {})["TEMPLATE"] = migrated_template(
            _database_url_for(database, name="postgres")
        )


@pytest.fixture
def eraser_reference() -> Path:
    if not SHARED_REFERENCE.is_dir():
        skip_or_fail(f"shared ERASER reference data not found at {SHARED_REFERENCE}")
    return SHARED_REFERENCE


@pytest.fixture
def postgres_only(db):
    if connection.vendor != "postgresql":
        skip_or_fail("needs PostgreSQL: set DATABASE_URL=postgres://...")


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache (throttles and cached pages keyed by ids that
    the next test's rows may reuse)."""
    from django.core.cache import cache

    from annotate.services.assignments import expiry_sweep_asked_forget

    cache.clear()
    expiry_sweep_asked_forget()
    yield


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    yield
    shutil.rmtree(tmp_path / "media", ignore_errors=True)


@pytest.fixture
def worker_silence_outlasts_timeout(monkeypatch, settings):
    """Call it to move the liveness rule's clock past `JOB_HEARTBEAT_TIMEOUT_SECONDS`: every
    running job's worker has then been silent too long, without the test sleeping for it."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.services import background_jobs

    def outlast() -> None:
        ahead = timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS + 1)
        monkeypatch.setattr(background_jobs, "liveness_clock", lambda: timezone.now() + ahead)

    return outlast


@pytest.fixture
def project(db):
    return ProjectFactory(labels=[])


@pytest.fixture
def role_users(project):
    """One member per role, plus a user who is not a member of the project."""
    users = {}
    for role in Role.values:
        user = UserFactory(username=f"{role}-user")
        MembershipFactory(project=project, user=user, role=role)
        users[role] = user
    users["outsider"] = UserFactory(username="outsider")
    return users


@pytest.fixture
def api_client():
    return APIClient()


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def start_celery_worker(
    *,
    queue: str,
    media_root,
    log,
    extra_env: dict | None = None,
    beat: bool = False,
    name: str | None = None,
):
    """Start a Celery worker process on `queue`, connected to the test database; wait for it.

    Several workers may share a queue if each has its own `name`.

    With `beat`, the worker also starts the periodic tasks, as beat does in production (the
    quality checks' sweep), and sends them to `queue`; its schedule file goes beside `log`.
    Only for a test of its own, stopped when the test ends: the sweep checks whatever any
    test commits to the shared database and takes the sweep's lock every second. Stop it
    with SIGTERM: SIGKILL leaves the beat child running."""
    import subprocess
    import sys
    import time

    from config.celery import app

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        # Named after its queue, so a test can tell its backends apart in pg_stat_activity.
        "DATABASE_URL": f"{_database_url_for_worker()}?application_name={queue}",
        # Connections kept between tasks, as in production (the test settings close them).
        "DATABASE_CONN_MAX_AGE": "60",
        "DJANGO_MEDIA_ROOT": str(media_root),
        # Tasks the worker queues itself (beat's periodic ones) go to the queue it
        # consumes, as in production, where every process shares one queue.
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        **(extra_env or {}),
    }
    with open(log, "w") as log_handle:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                queue,
                "--pool=solo",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-n",
                f"{name or queue}@%h",
                "--loglevel=INFO",
                *(
                    ["--beat", "--schedule", str(Path(log).parent / "celerybeat-schedule")]
                    if beat
                    else []
                ),
            ],
            env=env,
            stdout=log_handle,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[1],
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            pytest.fail(f"Celery worker exited early:\n{Path(log).read_text()}")
        if app.control.ping(destination=[f"{name or queue}@{os.uname().nodename}"], timeout=1.0):
            return worker
    worker.terminate()
    pytest.fail(f"Celery worker did not answer a ping within 60 s:\n{Path(log).read_text()}")


def _database_url_for_worker() -> str:
    return _database_url_for(connection.settings_dict, name=connection.settings_dict["NAME"])


def _database_url_for(settings_dict: dict, *, name: str) -> str:
    user = settings_dict.get("USER") or ""
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{name}"


def celery_worker_services_required() -> None:
    """What a real worker needs: a broker, and PostgreSQL for the database it shares."""
    from django.conf import settings

    if not settings.CELERY_BROKER_URL:
        skip_or_fail("needs a Celery broker: set CELERY_BROKER_URL=redis://...")
    if connection.vendor != "postgresql":
        skip_or_fail("the worker shares the test database, which needs PostgreSQL")


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, tmp_path_factory):
    """A real Celery worker process on the configured broker, consuming a private queue,
    connected to the test database. Yields (queue name, media root)."""
    import uuid

    celery_worker_services_required()
    queue = f"rw-test-{uuid.uuid4().hex[:8]}"
    media = tmp_path_factory.mktemp("worker-media")
    log = tmp_path_factory.mktemp("worker-log") / "worker.log"
    worker = start_celery_worker(queue=queue, media_root=media, log=log)
    yield {"queue": queue, "media_root": str(media), "log": log}
    worker.terminate()
    worker.wait(timeout=30)


@pytest.fixture
def live_celery(celery_worker_process, settings):
    """Send tasks to the real worker instead of running them in-process."""
    from config.celery import app

    settings.MEDIA_ROOT = celery_worker_process["media_root"]
    previous = app.conf.task_always_eager, app.conf.task_default_queue
    app.conf.task_always_eager = False
    app.conf.task_default_queue = celery_worker_process["queue"]
    yield celery_worker_process
    app.conf.task_always_eager, app.conf.task_default_queue = previous


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` with the groups tests/xdist_scheduling.py declares."""
    if config.getvalue("dist") == "loadgroup":
        from tests.xdist_scheduling import SerialGroupScheduling

        return SerialGroupScheduling(config, log)
    return None
