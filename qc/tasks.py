from celery import shared_task

from qc.agreement import agreement_report_refresh


@shared_task(acks_late=True)
def agreement_report_job(project_id: int) -> str:
    return agreement_report_refresh(project_id=project_id).status
