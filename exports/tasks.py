"""Export tasks: each takes ids, re-reads the rows and calls a service (exports/services.py),
and is safe to run twice."""

from celery import shared_task

from config.job_chunks import chunk_run_or_fail
from exports import runs, services


@shared_task(acks_late=True)
def export_execute(export_id: int) -> str:
    return services.export_run(export_id=export_id).status


# The chord's chunks keep their results (every other task ignores its own,
# CELERY_TASK_IGNORE_RESULT): the result backend counts them to start the assembly.
@shared_task(bind=True, acks_late=True, ignore_result=False, max_retries=3)
def export_chunk(
    self,
    export_id: int,
    attempt: str,
    kind: str,
    index: int,
    pks: list[int],
    splits: list[str] | None = None,
) -> str:
    return chunk_run_or_fail(
        self,
        lambda: services.export_chunk_run(
            export_id=export_id, attempt=attempt, kind=kind, index=index, pks=pks, splits=splits
        ),
        lambda error: services.export_fail(export_id=export_id, attempt=attempt, error=error),
        what=f"{kind} chunk {index}",
        outcome="nothing was published; start the export again",
    )


@shared_task(acks_late=True)
def export_assemble(
    export_id: int,
    attempt: str,
    item_chunks: int,
    document_chunks: int,
    documents: int,
    uncurated_left_out: int = 0,
) -> str:
    return services.export_assemble_run(
        export_id=export_id,
        attempt=attempt,
        item_chunks=item_chunks,
        document_chunks=document_chunks,
        documents=documents,
        uncurated_left_out=uncurated_left_out,
    ).status


@shared_task
def export_work_sweep() -> dict:
    return services.export_work_sweep()


@shared_task(acks_late=True)
def explainer_run_execute(run_id: int) -> str:
    return runs.explainer_run_execute(run_id=run_id).status


# A chord's chunk keeps its result, as export_chunk does.
@shared_task(bind=True, acks_late=True, ignore_result=False, max_retries=3)
def explainer_run_chunk(
    self, run_id: int, attempt: str, index: int, start: int, stop: int, k: int
) -> str:
    return chunk_run_or_fail(
        self,
        lambda: runs.explainer_run_chunk_run(
            run_id=run_id, attempt=attempt, index=index, start=start, stop=stop, k=k
        ),
        lambda error: runs.explainer_run_fail(run_id=run_id, attempt=attempt, error=error),
        what=f"chunk {index}",
        outcome="nothing was scored; start the run again",
    )


@shared_task(acks_late=True)
def explainer_run_assemble(run_id: int, attempt: str, chunks: int) -> str:
    return runs.explainer_run_assemble_run(run_id=run_id, attempt=attempt, chunks=chunks).status


# A chord's scoring chunk keeps its result, as explainer_run_chunk does.
@shared_task(bind=True, acks_late=True, ignore_result=False, max_retries=3)
def explainer_run_score_chunk(
    self, run_id: int, attempt: str, index: int, start: int, stop: int, predictions_name: str
) -> str:
    return chunk_run_or_fail(
        self,
        lambda: runs.explainer_run_score_chunk_run(
            run_id=run_id,
            attempt=attempt,
            index=index,
            start=start,
            stop=stop,
            predictions_name=predictions_name,
        ),
        lambda error: runs.explainer_run_fail(run_id=run_id, attempt=attempt, error=error),
        what=f"scoring chunk {index}",
        outcome="nothing was scored; start the run again",
    )


@shared_task(acks_late=True)
def explainer_run_score_assemble(
    run_id: int, attempt: str, first: int, chunks: int, predictions_name: str
) -> str:
    return runs.explainer_run_score_assemble_run(
        run_id=run_id,
        attempt=attempt,
        first=first,
        chunks=chunks,
        predictions_name=predictions_name,
    ).status
