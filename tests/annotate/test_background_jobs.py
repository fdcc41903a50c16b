"""The one rule for a background job whose worker was lost (annotate/services/background_jobs.py),
over every kind of job: imports, worker imports, exports, explainer runs, agreement reports."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import ImportJob
from annotate.services.background_jobs import job_attempt_begin, job_fail_if_worker_lost
from annotate.services.imports import import_job_fail_if_worker_lost
from exports.models import ExplainerRun, Export
from exports.runs import explainer_run_fail_if_worker_lost
from exports.services import export_fail_if_worker_lost
from qc.agreement import agreement_report_with_news
from qc.models import AgreementPart, AgreementReport, WorkerImportJob
from qc.services.worker_import_jobs import worker_import_fail_if_worker_lost

TIMEOUT = 60
LONG_AGO = timedelta(seconds=10 * TIMEOUT)


@pytest.fixture(autouse=True)
def _timeout(settings):
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = TIMEOUT


def _silent_import(project) -> ImportJob:
    then = timezone.now() - LONG_AGO
    return ImportJob.objects.create(
        project=project,
        source_format="jsonl",
        source_name="x.jsonl",
        upload="x",
        status="running",
        attempt="first",
        started_at=then,
        heartbeat_at=then,
    )


def _silent_export(project) -> Export:
    then = timezone.now() - LONG_AGO
    return Export.objects.create(
        project=project,
        params={},
        status="running",
        attempt="first",
        started_at=then,
        heartbeat_at=then,
    )


def _silent_run(project) -> ExplainerRun:
    export = Export.objects.create(project=project, params={}, status="succeeded")
    return ExplainerRun.objects.create(
        export=export,
        name="r",
        status="running",
        attempt="first",
        heartbeat_at=timezone.now() - LONG_AGO,
    )


def _silent_report(project) -> AgreementReport:
    return AgreementReport.objects.create(
        project=project, status="running", attempt="first", heartbeat_at=timezone.now() - LONG_AGO
    )


# Each kind of job with the service that checks it, as the pages and sweeps call them.
KINDS = {
    "import": (_silent_import, import_job_fail_if_worker_lost),
    "export": (_silent_export, export_fail_if_worker_lost),
    "explainer run": (_silent_run, explainer_run_fail_if_worker_lost),
    "agreement report": (
        _silent_report,
        lambda report: agreement_report_with_news(project=report.project)[0],
    ),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_silent_job_is_failed_in_its_own_words(db, project, kind):
    make, check = KINDS[kind]
    job = make(project)

    ended = check(job)

    assert ended.status == "failed"
    assert f"no report for {TIMEOUT} s" in ended.error
    assert type(ended).objects.get(pk=job.pk).status == "failed"


@pytest.mark.parametrize("kind", KINDS)
def test_a_job_started_again_after_it_was_read_is_left_to_its_new_attempt(db, project, kind):
    """The guard: the check read the row while the old attempt was silent; before it writes,
    a redelivered task starts the job again. The new attempt is not failed for the old
    one's silence."""
    make, check = KINDS[kind]
    job = make(project)
    type(job).objects.filter(pk=job.pk).update(attempt="second")

    after = check(job) if kind != "agreement report" else job_fail_if_worker_lost(job, error="x")

    row = type(job).objects.get(pk=job.pk)
    assert (row.status, row.attempt, row.error) == ("running", "second", "")
    assert after.status == "running"


@pytest.mark.parametrize("kind", ["import", "export"])
def test_a_job_started_again_runs_under_a_new_attempt_and_keeps_its_first_start(db, project, kind):
    make, _ = KINDS[kind]
    job = make(project)
    first_start = job.started_at
    type(job).objects.filter(pk=job.pk).update(progress_done=7, progress_total=9)
    job.refresh_from_db()

    attempt = job_attempt_begin(job, phase="validating")

    row = type(job).objects.get(pk=job.pk)
    assert attempt not in ("", "first") and row.attempt == attempt
    assert (row.status, row.phase, row.progress_done, row.progress_total) == (
        "running",
        "validating",
        0,
        0,
    )
    assert row.started_at == first_start
    assert row.heartbeat_at > first_start


def test_a_heartbeat_written_after_the_job_was_read_keeps_it_running(db, project):
    """The guard for a job without attempts: its worker reported between the read and the
    write."""
    then = timezone.now() - LONG_AGO
    job = WorkerImportJob.objects.create(
        project=project,
        source_name="w.csv",
        upload="w",
        status="running",
        started_at=then,
        heartbeat_at=then,
    )
    WorkerImportJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())

    assert worker_import_fail_if_worker_lost(job).status == "running"
    assert WorkerImportJob.objects.get(pk=job.pk).error == ""


def test_a_recent_report_in_the_cache_keeps_an_import_running(db, project):
    job = _silent_import(project)

    kept = job_fail_if_worker_lost(job, error="x", reported_at=timezone.now().timestamp())

    assert kept.status == "running"


def test_a_report_no_worker_has_taken_yet_is_waiting_not_lost(db, project):
    """A refresh queued behind other work keeps the heartbeat of the run before it."""
    AgreementReport.objects.create(
        project=project,
        status="running",
        attempt="",
        phase="queued",
        heartbeat_at=timezone.now() - LONG_AGO,
    )

    assert agreement_report_with_news(project=project)[0].status == "running"


def test_a_lost_agreement_run_leaves_no_parts_of_its_attempt(db, project):
    report = _silent_report(project)
    AgreementPart.objects.create(report=report, attempt="first", kind="variant", key="a", data={})

    agreement_report_with_news(project=project)

    assert not AgreementPart.objects.filter(report=report).exists()


# ---------------------------------------------------------------- reading writes nothing


def test_the_selectors_read_a_silent_job_without_failing_it(db, project):
    """Selectors read; failing a lost job is the services' (and the pages call them)."""
    from annotate import selectors as annotate_selectors
    from exports import selectors as export_selectors

    job, export, run = _silent_import(project), _silent_export(project), _silent_run(project)

    assert annotate_selectors.import_job_get(project=project, job_id=job.pk).status == "running"
    assert [j.status for j in annotate_selectors.import_job_list(project=project)] == ["running"]
    assert export_selectors.export_get(project=project, export_id=export.pk).status == "running"
    assert "running" in {e.status for e in export_selectors.export_list(project=project)}
    assert [r.status for r in export_selectors.explainer_run_list(export=run.export)] == ["running"]
    assert ImportJob.objects.get(pk=job.pk).status == "running"
    assert Export.objects.get(pk=export.pk).status == "running"
    assert ExplainerRun.objects.get(pk=run.pk).status == "running"


@pytest.mark.parametrize(
    "page",
    ["import list", "import detail", "import progress", "export list", "export detail", "run list"],
)
def test_each_page_that_shows_a_job_fails_it_when_its_worker_was_lost(
    db, project, role_users, page
):
    from django.urls import reverse

    from tests.conftest import client_for

    job, export, run = _silent_import(project), _silent_export(project), _silent_run(project)
    url, row = {
        "import list": (reverse("annotate:import-list", args=[project.pk]), job),
        "import detail": (reverse("annotate:import-detail", args=[project.pk, job.pk]), job),
        "import progress": (reverse("annotate:import-progress", args=[project.pk, job.pk]), job),
        "export list": (reverse("exports:export-list", args=[project.pk]), export),
        "export detail": (reverse("exports:export-detail", args=[project.pk, export.pk]), export),
        "run list": (reverse("exports:run-list", args=[project.pk, run.export_id]), run),
    }[page]

    response = client_for(role_users["admin"]).get(url)

    assert response.status_code == 200
    assert type(row).objects.get(pk=row.pk).status == "failed"
