from django.db.models import QuerySet

from annotate.models import Project
from config.exceptions import NotFoundError
from exports.models import Export


def export_list(*, project: Project) -> QuerySet[Export]:
    from exports.services import export_fail_if_worker_lost

    for export in Export.objects.filter(project=project, status="running"):
        export_fail_if_worker_lost(export)
    return Export.objects.filter(project=project).select_related("created_by")


def export_get(*, project: Project, export_id: int) -> Export:
    from exports.services import export_fail_if_worker_lost

    export = Export.objects.filter(project=project, pk=export_id).first()
    if export is None:
        raise NotFoundError("export not found")
    return export_fail_if_worker_lost(export)
