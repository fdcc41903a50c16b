from celery import shared_task

from annotate.services.dataset_import import import_job_run, import_uploads_expire


@shared_task(acks_late=True)
def import_job_execute(job_id: int) -> str:
    return import_job_run(job_id=job_id).status


@shared_task
def import_uploads_sweep() -> int:
    """Started daily by Celery beat (CELERY_BEAT_SCHEDULE); `manage.py import_uploads_expire`
    does the same by hand."""
    return import_uploads_expire()
