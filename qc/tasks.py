from celery import shared_task

from qc.agreement import agreement_report_refresh
from qc.services import annotation_quality_check
from qc.services.checks import quality_checks_run


@shared_task(acks_late=True)
def agreement_report_job(project_id: int) -> str:
    return agreement_report_refresh(project_id=project_id).status


@shared_task(acks_late=True)
def quality_checks_job(last_look: bool = False) -> int:
    return quality_checks_run(last_look=last_look)


@shared_task(acks_late=True)
def annotation_quality_check_job(annotation_id: int) -> list[str]:
    """One submission's checks. Submits now queue `quality_checks_job`; this stays for
    messages queued before, and for checking one annotation again by hand."""
    return annotation_quality_check(annotation_id=annotation_id)
