from celery import shared_task

from annotate.services.dataset_import import import_job_run


@shared_task(acks_late=True)
def import_job_execute(job_id: int) -> str:
    return import_job_run(job_id=job_id).status
