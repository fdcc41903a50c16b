from celery import shared_task

from exports.services import export_run


@shared_task(acks_late=True)
def export_execute(export_id: int) -> str:
    return export_run(export_id=export_id).status


@shared_task(acks_late=True)
def explainer_run_execute(run_id: int) -> str:
    from exports.runs import explainer_run_execute as run

    return run(run_id=run_id).status
