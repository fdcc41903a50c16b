from celery import shared_task

from config.job_chunks import chunk_run_or_fail
from qc import agreement
from qc.services import checks, item_summaries, lifecycle
from qc.services.worker_import_jobs import worker_import_run


@shared_task(acks_late=True)
def agreement_report_job(project_id: int) -> str:
    return agreement.agreement_report_refresh(project_id=project_id).status


# The chords' chunks keep their results (every other task ignores its own,
# CELERY_TASK_IGNORE_RESULT): the result backend counts them to start the next stage.
@shared_task(bind=True, acks_late=True, ignore_result=False, max_retries=3)
def agreement_chunk(self, report_id: int, attempt: str, chunk: dict, bound: int) -> str:
    return chunk_run_or_fail(
        self,
        lambda: agreement.agreement_chunk_run(
            report_id=report_id, attempt=attempt, chunk=chunk, bound=bound
        ),
        lambda error: agreement.agreement_chunk_fail(
            report_id=report_id, attempt=attempt, error=error
        ),
        what=f"{chunk['kind']} chunk {chunk['key']!r}",
        outcome="the previous report is kept; refresh it again",
    )


@shared_task(acks_late=True)
def agreement_pairs(report_id: int, attempt: str, plan: dict) -> str:
    return agreement.agreement_pairs_run(report_id=report_id, attempt=attempt, plan=plan).status


@shared_task(acks_late=True)
def agreement_assemble(report_id: int, attempt: str, plan: dict) -> str:
    return agreement.agreement_assemble_run(report_id=report_id, attempt=attempt, plan=plan).status


@shared_task
def agreement_report_sweep() -> dict:
    """Started by Celery beat (CELERY_BEAT_SCHEDULE): reports whose run went silent."""
    return agreement.agreement_report_sweep()


@shared_task
def quality_checks_sweep() -> int:
    """Started by Celery beat (CELERY_BEAT_SCHEDULE); returns at once while another runs."""
    return checks.quality_checks_sweep()


@shared_task
def quality_checks_missing() -> int:
    """Started by Celery beat (CELERY_BEAT_SCHEDULE): submissions older than the sweep's
    window that have no check."""
    return checks.quality_checks_missing()


@shared_task(acks_late=True)
def worker_import_execute(job_id: int) -> str:
    return worker_import_run(job_id=job_id).status


@shared_task
def item_summaries_refresh_all() -> int:
    """Started by Celery beat (CELERY_BEAT_SCHEDULE): every live project's item summaries,
    so that the data manager opens fast even when nobody opened it for a while."""
    return item_summaries.item_summaries_refresh_projects()


@shared_task
def deleted_data_purge() -> dict:
    """Beat's hourly sweep: deleted data past its restore period removed for good."""
    summary = lifecycle.deleted_data_purge()
    return {"projects": summary.projects, "imports": summary.imports, "items": summary.items}
