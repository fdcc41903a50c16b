from celery import shared_task

from exports.services import export_run


@shared_task(acks_late=True)
def export_execute(export_id: int) -> str:
    return export_run(export_id=export_id).status
