from celery import shared_task

from annotate.services import import_chunks
from annotate.services.dataset_import import import_job_run, import_uploads_expire
from config.job_chunks import chunk_run_or_fail


@shared_task(acks_late=True)
def import_job_execute(job_id: int) -> str:
    return import_job_run(job_id=job_id).status


# A chord's chunk keeps its result (every other task ignores its own): the result backend
# counts the finished chunks to start the last step.
@shared_task(bind=True, acks_late=True, ignore_result=False, max_retries=3)
def import_chunk(
    self, job_id: int, attempt: str, index: int, start: int, stop: int, plan: dict | None = None
) -> str:
    return chunk_run_or_fail(
        self,
        lambda: import_chunks.import_chunk_run(
            job_id=job_id, attempt=attempt, index=index, start=start, stop=stop, plan=plan
        ),
        lambda error: import_chunks.import_job_fail(job_id=job_id, attempt=attempt, error=error),
        what=f"chunk {index}",
        outcome="nothing was imported; start the import again",
    )


@shared_task(acks_late=True)
def import_publish(
    job_id: int, attempt: str, chunks: int, labels: list[str], warnings: list[str] | None = None
) -> str:
    return import_chunks.import_publish_run(
        job_id=job_id, attempt=attempt, chunks=chunks, labels=labels, warnings=warnings
    ).status


@shared_task
def import_uploads_sweep() -> int:
    """Started daily by Celery beat (CELERY_BEAT_SCHEDULE); `manage.py import_uploads_expire`
    does the same by hand. The staged chunks of imports that ended go too."""
    import_chunks.import_parts_sweep()
    return import_uploads_expire()
