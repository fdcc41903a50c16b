"""Agreement reports split over real Celery workers (PostgreSQL, Redis): two chords of
chunks and one assembly store the report one worker stores, byte for byte, and its
matrices are those computed over every annotation at once; a worker killed in the middle
of a run leaves it to beat's sweep, which fails it and keeps the last finished report."""

import os
import signal
import uuid

import pytest
from django.db.models import F, TextField
from django.db.models.functions import Cast
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from qc.agreement import agreement_report_refresh
from qc.models import AgreementPart, AgreementReport
from tests.annotate.test_worker_killed import wait_until
from tests.conftest import client_for, start_celery_worker
from tests.exports.test_export_workers import workers  # noqa: F401  (the fixture)
from tests.factories import UserFactory
from tests.qc.agreement_data import agreement_project
from tests.qc.test_agreement_chunks import whole_cohort_matrix, whole_variant_cells

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
        name=f"split-{uuid.uuid4().hex[:6]}", items=60, variants=3, annotators=3, interleaved=True
    )
    client = researcher(project)
    first, first_log = workers("agree-a", AGREEMENT_CHUNK_ITEMS="20")
    second, second_log = workers("agree-b", AGREEMENT_CHUNK_ITEMS="20")

    split = refresh_and_wait(client, project)
    split_text = stored_text(project)

    # 3 variants, 3 worker groups, 3 cohorts, 3 ranges of 20 items (with their share of
    # the variant and cohort matrices); then 3 pairs of variants.
    assert split["progress_done"] == split["progress_total"] == 15
    logs = [log.read_text() for log in (first_log, second_log)]
    assert all(CHUNK_TASK in log for log in logs), "both workers computed chunks"
    assert sum(log.count(CHUNK_TASK) for log in logs) >= 2 * 15, "each received and finished"
    assert not AgreementPart.objects.filter(report__project=project).exists()
    report = split["report"]
    assert [row["variant"] for row in report["variants"]] == ["v0", "v1", "v2"]
    assert set(report["matrix"]["cells"]) == {f"v{a}|v{b}" for a in range(3) for b in range(a, 3)}
    assert len(report["permutation_tests"]) == 3 and len(report["workers"]) == 9
    assert report["cohort_matrix"] is not None and len(report["cohorts"]) == 3
    assert report["cohort_matrix"] == whole_cohort_matrix(project)
    assert report["matrix"]["cells"] == whole_variant_cells(project)
    for worker in (first, second):
        worker.terminate()
        worker.wait(timeout=30)

    # One worker, one task: the chunks are not sent anywhere.
    _, single_log = workers("agree-single", AGREEMENT_CHUNKED="false", AGREEMENT_CHUNK_ITEMS="20")
    whole = refresh_and_wait(client, project)

    assert "qc.tasks.agreement_report_job[" in single_log.read_text()
    assert CHUNK_TASK not in single_log.read_text(), "one task computed every chunk"
    assert whole["progress_done"] == whole["progress_total"] == 15
    assert stored_text(project) == split_text


@pytest.fixture
def sweeper(celery_worker_process, tmp_path):
    """Celery beat and a worker on a queue of their own (they take none of the run's
    chunks), sweeping every half second for agreement runs silent for 6 s."""
    queue = f"rw-sweep-{uuid.uuid4().hex[:8]}"
    started = []

    def start():
        worker = start_celery_worker(
            queue=queue,
            media_root=celery_worker_process["media_root"],
            log=tmp_path / "sweeper.log",
            extra_env={
                "AGREEMENT_SWEEP_INTERVAL_SECONDS": "0.5",
                # A fresh worker's first chunk imports spaCy, and spaCy's thinc imports
                # torch where the models extra is installed: seconds before its first report.
                "JOB_HEARTBEAT_TIMEOUT_SECONDS": "6",
                # Not the quality checks' sweep: its flags would join the report's figures.
                "QC_CHECK_INTERVAL_SECONDS": "86400",
                # Nor the data manager's summaries: their work would compete for the CPU.
                "ITEM_SUMMARIES_INTERVAL_SECONDS": "86400",
                "CELERY_TRACE_LOG_LEVEL": "INFO",
            },
            beat=True,
        )
        started.append(worker)
        return worker, tmp_path / "sweeper.log"

    yield start
    for worker in started:
        if worker.poll() is None:
            worker.terminate()  # SIGTERM: SIGKILL would leave beat's child running
        worker.wait(timeout=30)


def report_row(project) -> AgreementReport:
    """Read without the API, which fails a silent run itself when asked."""
    return AgreementReport.objects.get(project=project)


def test_a_worker_killed_mid_chunk_is_failed_by_the_sweep_keeping_the_last_report(
    workers,  # noqa: F811
    sweeper,
    settings,
):
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
    wait_until(lambda: 0 < report_row(project).progress_done < 10, timeout=180)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    assert report_row(project).status == "running", "nothing has failed it yet"
    assert AgreementPart.objects.filter(report__project=project).exists()
    assert stored_text(project) == earlier_text, "the last finished report is still shown"

    # Nobody opens the report: beat's sweep fails it once its run has been silent.
    _, sweep_log = sweeper()
    failed = wait_until(
        lambda: (lambda row: row if row.status != "running" else None)(report_row(project)),
        timeout=120,
    )
    assert "qc.tasks.agreement_report_sweep[" in sweep_log.read_text()
    assert failed.status == "failed"
    assert failed.error == (
        "the worker computing this report stopped (no report for 6 s); "
        "the previous report is kept; refresh it again"
    )
    assert stored_text(project) == earlier_text
    assert not AgreementPart.objects.filter(report__project=project).exists()
    assert client.get(reverse("qc:agreement", args=[project.id])).data["status"] == "failed"

    # The chunks still queued go to a new worker: they find the run failed and stop.
    _, log = workers("agree-after", AGREEMENT_CHUNK_ITEMS="25")
    wait_until(lambda: "succeeded" in log.read_text() and CHUNK_TASK in log.read_text())
    assert report_row(project).status == "failed"
    assert not AgreementPart.objects.filter(report__project=project).exists()

    # Refreshed again, it finishes with the same bytes as the one-process report.
    again = refresh_and_wait(client, project)
    assert again["progress_done"] == again["progress_total"] == 33
    assert stored_text(project) == earlier_text
