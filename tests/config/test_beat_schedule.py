"""The periodic jobs run in the stack's scheduler (Celery beat), not in a cron the operator
must remember: each entry of CELERY_BEAT_SCHEDULE names a task the worker knows, and the
housekeeping commands' work is among them."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from config.sessions.models import SignInSession
from qc.models import SubmissionCheck
from tests.qc.test_check_batches import unchecked_submissions


def _scheduled_tasks() -> set[str]:
    return {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}


def test_every_beat_entry_names_a_task_the_worker_runs():
    from config.celery import app

    app.loader.import_default_modules()

    assert _scheduled_tasks() <= set(app.tasks)


def test_clearing_expired_sessions_is_scheduled_and_keeps_live_ones(db):
    from config.sessions.tasks import sessions_clear_expired

    now = timezone.now()
    SignInSession.objects.create(session_key="old", session_data="", expire_date=now - timedelta(1))
    SignInSession.objects.create(
        session_key="live", session_data="", expire_date=now + timedelta(1)
    )

    assert "config.sessions.tasks.sessions_clear_expired" in _scheduled_tasks()
    sessions_clear_expired.delay()

    assert list(SignInSession.objects.values_list("session_key", flat=True)) == ["live"]


def test_submissions_older_than_the_sweeps_window_are_checked_on_schedule(db):
    """What `qc_check_missing` does, beat now starts: the sweep looks only among recent
    submissions, so one left unchecked below its window waited for a cron job."""
    from qc.tasks import quality_checks_missing

    _, ids = unchecked_submissions(seed=3)

    assert "qc.tasks.quality_checks_missing" in _scheduled_tasks()
    assert quality_checks_missing.delay().get() == len(ids)

    assert SubmissionCheck.objects.filter(annotation_id__in=ids).count() == len(ids)


def test_a_silent_agreement_run_is_failed_on_schedule_keeping_the_last_report(db, settings):
    """Before, a report whose worker died stayed 'running' until someone opened it."""
    from qc.models import AgreementPart, AgreementReport
    from qc.tasks import agreement_report_sweep
    from tests.factories import ProjectFactory

    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 120
    now = timezone.now()
    earlier = {"annotations": 3}
    silent, alive, finished = (
        AgreementReport.objects.create(
            project=ProjectFactory(),
            status=status,
            attempt=attempt,
            heartbeat_at=now - timedelta(seconds=seconds),
            data=earlier,
        )
        for status, attempt, seconds in (
            ("running", "a1", 121),
            ("running", "b1", 5),
            ("ready", "c1", 3600),
        )
    )
    for report, attempt in ((silent, "a1"), (alive, "b1"), (alive, "b0"), (finished, "c1")):
        AgreementPart.objects.create(
            report=report, kind="items", key=attempt, attempt=attempt, data={}
        )

    assert "qc.tasks.agreement_report_sweep" in _scheduled_tasks()
    # The failed run's own part goes with it; the superseded attempt's and the finished
    # report's are the leftovers.
    assert agreement_report_sweep.delay().get() == {"lost_reports": 1, "parts": 2}

    silent.refresh_from_db()
    assert silent.status == "failed" and silent.data == earlier
    assert silent.error == (
        "the worker computing this report stopped (no report for 120 s); "
        "the previous report is kept; refresh it again"
    )
    assert AgreementReport.objects.get(pk=alive.pk).status == "running"
    assert AgreementReport.objects.get(pk=finished.pk).status == "ready"
    assert list(AgreementPart.objects.values_list("report_id", "attempt")) == [(alive.pk, "b1")]
