"""Health and readiness, request ids, 503 when the database is away, a bounded hot path."""

import json
import logging
import uuid
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


def test_healthz_needs_nothing(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_readyz_checks_the_database(db, client):
    response = client.get("/readyz")

    assert response.status_code == 200 and response.json()["checks"]["database"] == "ok"


def test_readyz_is_503_when_the_database_is_unreachable(db, client):
    with mock.patch(
        "config.health.connection.cursor",
        side_effect=OperationalError("could not connect to server"),
    ):
        response = client.get("/readyz")

    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["checks"]["database"] == "unavailable"
    assert "could not connect" not in response.content.decode(), (
        "no internal detail on a public endpoint"
    )


def test_readyz_reports_an_unreachable_broker(db, client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"

    response = client.get("/readyz")

    assert response.status_code == 503 and response.json()["checks"]["broker"] == "unavailable"


def test_a_lost_database_is_a_503_with_retry_after_not_a_500(db):
    user = UserFactory()
    client = client_for(user)

    with mock.patch(
        "annotate.apis.selectors.project_list_for_user",
        side_effect=OperationalError("server closed the connection"),
    ):
        response = client.get(reverse("annotate:project-list"))

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "database_unavailable"
    assert client.get(reverse("annotate:project-list")).status_code == 200, (
        "recovers on the next request"
    )


def test_requests_carry_an_id_and_log_one_json_line(db, client, caplog):
    with caplog.at_level(logging.INFO, logger="rationale_workbench.requests"):
        given = client.get("/healthz", HTTP_X_REQUEST_ID="abc-123")
        made = client.get("/healthz", HTTP_X_REQUEST_ID="<script>")

    assert given["X-Request-ID"] == "abc-123"
    assert made["X-Request-ID"] != "<script>" and len(made["X-Request-ID"]) == 32
    lines = [
        json.loads(r.getMessage())
        for r in caplog.records
        if r.name == "rationale_workbench.requests"
    ]
    assert lines[0] == {
        **lines[0],
        "request_id": "abc-123",
        "method": "GET",
        "path": "/healthz",
        "status": 200,
    }


def _hot_path_queries(items: int) -> tuple[int, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    project = make_project(items=items, variants=("a", "b", "c"), quota=3)
    worker = UserFactory()
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    client = client_for(worker)
    first = client.post(
        reverse("annotate:assignment-next", args=[project.id])
    ).data  # binds a variant
    client.post(
        reverse("annotate:assignment-submit", args=[first["id"]]),
        {
            "client_uuid": str(uuid.uuid4()),
            "rationale_sets": [
                [
                    {
                        "docid": first["item"]["documents"][0]["docid"],
                        "start_token": 0,
                        "end_token": 1,
                    }
                ]
            ],
        },
        format="json",
    )
    with CaptureQueriesContext(connection) as next_queries:
        lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [
            [{"docid": lease["item"]["documents"][0]["docid"], "start_token": 0, "end_token": 2}]
        ],
    }
    with CaptureQueriesContext(connection) as submit_queries:
        response = client.post(
            reverse("annotate:assignment-submit", args=[lease["id"]]), body, format="json"
        )
    assert response.status_code == 201
    return len(next_queries), len(submit_queries)


def test_next_and_submit_use_a_bounded_number_of_queries_whatever_the_project_size(db):
    small = _hot_path_queries(5)
    large = _hot_path_queries(150)

    assert small == large, "the number of queries must not grow with the project"
    if connection.vendor == "postgresql":
        # One statement each (under a savepoint here: tests run inside a transaction), after
        # the caller's role and the qualification gate for "next"; the lease statement
        # reads the worker's variant itself.
        assert small == (5, 3)
    else:
        assert small[0] <= 13 and small[1] <= 8  # the general services (SQLite, the demo)


@pytest.mark.parametrize(
    "failing",
    [
        "config.sessions.backend.SessionStore._session_data_from_db",
        "config.auth.ModelBackend.get_user",
    ],
)
def test_a_lost_database_while_loading_the_session_or_user_is_a_503(db, client, failing):
    client.force_login(UserFactory())

    with mock.patch(failing, side_effect=OperationalError("could not connect to server")):
        response = client.get(reverse("annotate:project-list"))

    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert client.get(reverse("annotate:project-list")).status_code == 200


def test_gunicorn_workers_shorten_the_gil_switch_interval(monkeypatch):
    import runpy
    import sys
    from pathlib import Path

    monkeypatch.setenv("GUNICORN_SWITCH_INTERVAL", "0.002")
    conf = runpy.run_path(str(Path(__file__).resolve().parents[2] / "config" / "gunicorn.conf.py"))
    before = sys.getswitchinterval()
    try:
        conf["post_fork"](server=None, worker=None)
        assert sys.getswitchinterval() == pytest.approx(0.002)
    finally:
        sys.setswitchinterval(before)


def test_loading_the_wsgi_application_imports_the_views_and_connects_to_nothing():
    """gunicorn preloads the application in its master and forks the workers from it: the
    views, the cache's Redis client and Celery's publishing side are loaded once, and no
    connection exists yet for the workers to share."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import sys, config.wsgi\n"
        "from django.db import connections\n"
        "from django_redis import pool\n"
        "assert 'annotate.apis' in sys.modules and 'qc.apis' in sys.modules\n"
        "assert 'django_redis.client.default' in sys.modules\n"
        "assert 'celery.app.amqp' in sys.modules and 'qc.tasks' in sys.modules\n"
        "assert 'kombu.transport.redis' in sys.modules\n"
        "assert all(c.connection is None for c in connections.all(initialized_only=True))\n"
        "assert not pool.ConnectionFactory._pools\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "CACHE_URL": "redis://127.0.0.1:6379/12",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/13",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.stdout.strip() == "ok", done.stderr[-2000:]
