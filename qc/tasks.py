from celery import shared_task

from qc.agreement import agreement_report_refresh
from qc.services import checks


@shared_task(acks_late=True)
def agreement_report_job(project_id: int) -> str:
    return agreement_report_refresh(project_id=project_id).status


@shared_task
def quality_checks_sweep() -> int:
    """Started by Celery beat (CELERY_BEAT_SCHEDULE); returns at once while another runs."""
    return checks.quality_checks_sweep()


@shared_task
def quality_checks_missing() -> int:
    """Started by Celery beat (CELERY_BEAT_SCHEDULE): submissions older than the sweep's
    window that have no check."""
    return checks.quality_checks_missing()
