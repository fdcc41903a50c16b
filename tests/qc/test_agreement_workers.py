"""Agreement reports split over real Celery workers (PostgreSQL, Redis): two chords of
chunks and one assembly store the report one worker stores, byte for byte; a worker killed
in the middle of a run fails it and leaves the last finished report in place."""

import os
import signal
import time
import uuid

import pytest
from django.db.models import F, TextField
from django.db.models.functions import Cast
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from qc.agreement import agreement_report_refresh
from qc.models import AgreementPart, AgreementReport
from tests.annotate.test_worker_killed import wait_until
from tests.conftest import client_for
from tests.exports.test_export_workers import workers  # noqa: F401  (the fixture)
from tests.factories import UserFactory
from tests.qc.agreement_data import agreement_project

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

CHUNK_TASK = "qc.tasks.agreement_chunk["


def researcher(project):
    user = UserFactory(username=f"r-{uuid.uuid4().hex[:6]}")
    ProjectMembership.objects.create(project=project, user=user, role=Role.RESEARCHER)
    return client_for(user)


def stored_text(project) -> str:
    """The report as PostgreSQL stores it (jsonb as text)."""
    return (
        AgreementReport.objects.filter(project=project)
        .annotate(text=Cast(F("data"), output_field=TextField()))
        .values_list("text", flat=True)
        .get()
    )


def refresh_and_wait(client, project) -> dict:
    started = client.post(reverse("qc:agreement-refresh", args=[project.id]))
    assert started.status_code == 202
    url = reverse("qc:agreement", args=[project.id])
    done = wait_until(
        lambda: (lambda body: body if body["status"] != "running" else None)(client.get(url).data)
    )
    assert done["status"] == "ready", done["error"]
    return done


def test_chunks_on_two_workers_store_the_report_of_one(workers):  # noqa: F811
    project = agreement_project(
        name=f"split-{uuid.uuid4().hex[:6]}", items=60, variants=3, annotators=3
    )
    client = researcher(project)
    first, first_log = workers("agree-a", AGREEMENT_CHUNK_ITEMS="20")
    second, second_log = workers("agree-b", AGREEMENT_CHUNK_ITEMS="20")

    split = refresh_and_wait(client, project)
    split_text = stored_text(project)

    # 3 variants, 3 worker groups, 3 cohorts, 3 ranges of 20 items, the cohort matrix;
    # then 3 pairs of variants.
    assert split["progress_done"] == split["progress_total"] == 16
    logs = [log.read_text() for log in (first_log, second_log)]
    assert all(CHUNK_TASK in log for log in logs), "both workers computed chunks"
    assert sum(log.count(CHUNK_TASK) for log in logs) >= 2 * 16, "each received and finished"
    assert not AgreementPart.objects.filter(report__project=project).exists()
    report = split["report"]
    assert [row["variant"] for row in report["variants"]] == ["v0", "v1", "v2"]
    assert set(report["matrix"]["cells"]) == {f"v{a}|v{b}" for a in range(3) for b in range(a, 3)}
    assert len(report["permutation_tests"]) == 3 and len(report["workers"]) == 9
    assert report["cohort_matrix"] is not None and len(report["cohorts"]) == 3
    for worker in (first, second):
        worker.terminate()
        worker.wait(timeout=30)

    # One worker, one task: the chunks are not sent anywhere.
    _, single_log = workers("agree-single", AGREEMENT_CHUNKED="false", AGREEMENT_CHUNK_ITEMS="20")
    whole = refresh_and_wait(client, project)

    assert "qc.tasks.agreement_report_job[" in single_log.read_text()
    assert CHUNK_TASK not in single_log.read_text(), "one task computed every chunk"
    assert whole["progress_done"] == whole["progress_total"] == 16
    assert stored_text(project) == split_text


def test_a_worker_killed_in_the_middle_of_a_run_keeps_the_last_report(workers, settings):  # noqa: F811
    project = agreement_project(
        name=f"kill-{uuid.uuid4().hex[:6]}", items=400, variants=4, annotators=3
    )
    settings.AGREEMENT_CHUNKED = False  # the first report, computed here in one process
    earlier = agreement_report_refresh(project_id=project.pk)
    assert earlier.status == "ready"
    earlier_text = stored_text(project)
    settings.AGREEMENT_CHUNKED = True
    client = researcher(project)
    worker, _ = workers("agree-doomed", AGREEMENT_CHUNK_ITEMS="25")

    client.post(reverse("qc:agreement-refresh", args=[project.id]))
    # At least one chunk is in and the worker is computing another.
    wait_until(
        lambda: 0 < AgreementReport.objects.get(project=project).progress_done < 10,
        timeout=180,
    )
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    url = reverse("qc:agreement", args=[project.id])
    running = client.get(url).data
    assert running["status"] == "running" and 0 < running["progress_done"] < 34
    assert stored_text(project) == earlier_text, "the last finished report is still shown"
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 1
    time.sleep(1.5)
    failed = client.get(url).data
    assert failed["status"] == "failed"
    assert "worker computing this report stopped" in failed["error"]
    assert "previous report is kept" in failed["error"]
    assert stored_text(project) == earlier_text
    assert not AgreementPart.objects.filter(report__project=project).exists()

    # The chunks still queued go to a new worker: they find the run failed and stop.
    _, log = workers("agree-after", AGREEMENT_CHUNK_ITEMS="25")
    wait_until(lambda: "succeeded" in log.read_text() and CHUNK_TASK in log.read_text())
    assert AgreementReport.objects.get(project=project).status == "failed"
    assert not AgreementPart.objects.filter(report__project=project).exists()

    # Refreshed again, it finishes with the same bytes as the one-process report.
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 120
    again = refresh_and_wait(client, project)
    assert again["progress_done"] == again["progress_total"] == 34
    assert stored_text(project) == earlier_text
