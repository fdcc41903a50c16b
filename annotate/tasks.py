from celery import shared_task

from annotate.services import imports
from config.job_chunks import chunk_run_or_fail


@shared_task(acks_late=True)
def import_job_execute(job_id: int) -> str:
    return imports.import_job_run(job_id=job_id).status


# A chord's chunk keeps its result (every other task ignores its own): the result backend
# counts the finished chunks to start the last step.
@shared_task(bind=True, acks_late=True, ignore_result=False, max_retries=3)
def import_chunk(
    self, job_id: int, attempt: str, index: int, start: int, stop: int, plan: dict | None = None
) -> str:
    return chunk_run_or_fail(
        self,
        lambda: imports.import_chunk_run(
            job_id=job_id, attempt=attempt, index=index, start=start, stop=stop, plan=plan
        ),
        lambda error: imports.import_job_fail(job_id=job_id, attempt=attempt, error=error),
        what=f"chunk {index}",
        outcome="nothing was imported; start the import again",
    )


@shared_task(acks_late=True)
def import_publish(
    job_id: int, attempt: str, chunks: int, labels: list[str], warnings: list[str] | None = None
) -> str:
    return imports.import_publish_run(
        job_id=job_id, attempt=attempt, chunks=chunks, labels=labels, warnings=warnings
    ).status


@shared_task
def import_uploads_sweep() -> int:
    """Started daily by Celery beat (CELERY_BEAT_SCHEDULE); `manage.py import_uploads_expire`
    does the same by hand. The staged chunks of imports that ended go too."""
    imports.import_parts_sweep()
    return imports.import_uploads_expire()
