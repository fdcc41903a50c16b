"""A Redis outage (docs/design/architecture.md#when-things-fail): with the cache and the broker
away, signed-in work goes on, every acknowledged submit is stored, a request that needs the
broker answers 503 with Retry-After, and the quality checks catch up once it is back.

Redis is "away" as a closed port (nothing listens on 127.0.0.1:1), so these tests need no
Redis; bench/faults.py stops a real one under load."""

import os
import runpy
import uuid
from pathlib import Path
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotate.models import Annotation, ImportJob, JobStatus, ProjectMembership, Role
from bench.common import free_port
from exports.models import Export
from qc.models import AgreementReport, SubmissionCheck
from qc.services import checks
from tests.annotate.workflow_helpers import make_project
from tests.conftest import skip_or_fail
from tests.factories import UserFactory

AWAY = "redis://127.0.0.1:1/0"
BASE_SETTINGS = Path(__file__).resolve().parents[2] / "config" / "settings" / "base.py"


def _caches_when_cache_url_is(url: str) -> dict:
    """CACHES as config/settings/base.py builds them with CACHE_URL=url."""
    with mock.patch.dict(os.environ, {"CACHE_URL": url}):
        return runpy.run_path(str(BASE_SETTINGS))["CACHES"]


@pytest.fixture
def cache_away(settings):
    settings.CACHES = _caches_when_cache_url_is(AWAY)


def _broker_switch(url: str) -> None:
    """Point this process's Celery app at the broker `url` (Celery reads the environment's
    CELERY_BROKER_URL before its settings), forgetting the pooled connections to the one
    before (a ping or a publish would reuse them). Only inside `broker_away`, which puts
    the environment back."""
    from config.celery import app

    os.environ["CELERY_BROKER_URL"] = url
    app.conf.broker_url = url
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker_away():
    """Tasks are published to a broker that is not there, as with a broker configured."""
    from config.celery import app

    previous = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager = False
    with mock.patch.dict(os.environ):
        _broker_switch(AWAY)
        yield
    app.conf.task_always_eager, app.conf.broker_url = previous
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def annotator_in_project(db):
    project = make_project(items=3, quota=2)
    annotator = UserFactory(username="outage-annotator")
    ProjectMembership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    client = Client()
    client.force_login(annotator)
    return project, client


def _next_and_submit(client: Client, project):
    """The answer to submitting the item that \"next\" hands out."""
    lease = client.post(reverse("annotate:assignment-next", args=[project.id]))
    assert lease.status_code == 200, lease.content
    docid = lease.json()["item"]["documents"][0]["docid"]
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 2}]],
        "time_spent_ms": 900,
    }
    submitted = client.post(
        reverse("annotate:assignment-submit", args=[lease.json()["id"]]),
        body,
        content_type="application/json",
    )
    return submitted


def test_the_redis_cache_ignores_an_outage_within_a_second():
    options = _caches_when_cache_url_is(AWAY)["default"]["OPTIONS"]

    assert options["IGNORE_EXCEPTIONS"] is True
    assert options["SOCKET_CONNECT_TIMEOUT"] == options["SOCKET_TIMEOUT"] == 1.0


def test_with_the_cache_away_an_annotator_gets_work_submits_and_opens_the_workspace(
    cache_away, annotator_in_project
):
    project, client = annotator_in_project

    submitted = _next_and_submit(client, project)
    workspace = client.get(reverse("workspace", args=[project.id]))

    assert submitted.status_code == 201, submitted.content
    assert Annotation.objects.filter(pk=submitted.json()["annotation_id"]).exists()
    assert workspace.status_code == 200


def test_with_the_cache_away_signing_in_works(cache_away, db):
    UserFactory(username="outage-signer", password="a-long-enough-password")

    answer = Client().post(
        reverse("login"),
        {"username": "outage-signer", "password": "a-long-enough-password"},
    )

    assert answer.status_code == 302


def test_with_the_broker_away_a_submit_is_acknowledged_and_the_sweep_checks_it_later(
    broker_away, annotator_in_project
):
    project, client = annotator_in_project

    submitted = _next_and_submit(client, project)
    annotation_id = submitted.json()["annotation_id"]
    unchecked_at_first = not SubmissionCheck.objects.filter(annotation_id=annotation_id).exists()
    checks.quality_checks_sweep()

    assert submitted.status_code == 201
    assert unchecked_at_first
    assert SubmissionCheck.objects.filter(annotation_id=annotation_id).exists()


# Transactions that commit, as in production: the job is queued once its row is committed.
@pytest.mark.django_db(transaction=True)
def test_with_the_broker_away_starting_an_import_answers_503_with_retry_after(
    broker_away, annotator_in_project
):
    project, _annotator = annotator_in_project
    admin = UserFactory(username="outage-admin")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    client = Client()
    client.force_login(admin)

    answer = client.post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile("t.jsonl", b'{"text": "ok", "label": "neg"}\n')},
    )

    job = ImportJob.objects.get(project=project)
    assert answer.status_code == 503
    assert int(answer["Retry-After"]) > 0
    assert answer.json()["code"] == "queue_unavailable"
    # Not left pending, waiting for a task that was never queued.
    assert job.status == JobStatus.FAILED
    assert "never started" in job.error
    assert not job.upload


def _export_row(project):
    return Export.objects.get(project=project)


def _agreement_row(project):
    return AgreementReport.objects.get(project=project)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("url_name", "body", "row_of"),
    [
        ("exports:export-list", {"variant": "plain"}, _export_row),
        ("qc:agreement-refresh", None, _agreement_row),
    ],
)
def test_with_the_broker_away_an_export_or_a_report_is_refused_and_not_left_running(
    broker_away, annotator_in_project, url_name, body, row_of
):
    project, _annotator = annotator_in_project
    researcher = UserFactory(username="outage-researcher")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    client = Client()
    client.force_login(researcher)

    answer = client.post(
        reverse(url_name, args=[project.id]), body or {}, content_type="application/json"
    )

    row = row_of(project)
    assert answer.status_code == 503
    assert int(answer["Retry-After"]) > 0
    assert row.status == "failed"
    assert "never started" in row.error


REDIS_SERVER = Path("/usr/bin/redis-server")


class _PrivateRedis:
    """A redis-server of the test's own on `port`, with nothing on disk, that the test
    stops and starts (never the machine's)."""

    def __init__(self, port: int, folder: Path):
        self.port, self.folder, self.process = port, folder, None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import subprocess
        import time

        import redis

        self.process = subprocess.Popen(
            [
                *(str(REDIS_SERVER), "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.folder)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        probe = redis.Redis(port=self.port, socket_connect_timeout=1)
        for _ in range(100):
            try:
                probe.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        pytest.fail(f"the test's redis-server on port {self.port} did not answer")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


@pytest.fixture
def private_redis(tmp_path):
    if not REDIS_SERVER.exists():
        skip_or_fail(f"needs {REDIS_SERVER} (Debian package redis-server) to stop a Redis")
    # A port the system hands out, not one probed in a range: test processes run side by side.
    server = _PrivateRedis(free_port(), tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_after_a_real_redis_outage_beat_and_the_worker_check_what_was_submitted_meanwhile(
    postgres_only, private_redis, annotator_in_project, tmp_path, broker_away
):
    import time

    from tests.conftest import start_celery_worker

    project, client = annotator_in_project
    # As in production: a broker, so the submit leaves its check to beat's sweep (broker_away
    # switched eager mode off); this process talks to the broker only to ping the worker.
    _broker_switch(private_redis.url)
    worker = start_celery_worker(
        queue=f"rw-redis-outage-{uuid.uuid4().hex[:8]}",
        media_root=tmp_path / "media",
        log=tmp_path / "worker.log",
        beat=True,
        extra_env={
            "CELERY_BROKER_URL": private_redis.url,
            "CELERY_RESULT_BACKEND": private_redis.url,
            "CACHE_URL": private_redis.url,
            "QC_CHECK_INTERVAL_SECONDS": "1",
        },
    )
    try:
        private_redis.stop()
        submitted = _next_and_submit(client, project)
        annotation_id = submitted.json()["annotation_id"]
        time.sleep(3)  # beat's ticks meanwhile are refused by the absent broker
        unchecked_during = not SubmissionCheck.objects.filter(annotation_id=annotation_id).exists()
        private_redis.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if SubmissionCheck.objects.filter(annotation_id=annotation_id).exists():
                break
            time.sleep(0.5)

        assert submitted.status_code == 201
        assert unchecked_during
        assert SubmissionCheck.objects.filter(annotation_id=annotation_id).exists(), (
            tmp_path / "worker.log"
        ).read_text()[-3000:]
    finally:
        _worker_stop(worker)


def _worker_stop(worker) -> None:
    """SIGTERM the worker, then SIGKILL what it leaves behind: after a broker outage its
    beat child (a process of its own) outlived it, holding the test database open."""
    import contextlib
    import signal

    children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children")
    beat = [int(pid) for pid in children.read_text().split()] if children.exists() else []
    worker.terminate()
    worker.wait(timeout=30)
    for pid in beat:
        with contextlib.suppress(ProcessLookupError):  # it ended with the worker
            os.kill(pid, signal.SIGKILL)
