"""Progress of exports and explainer runs, in the shape every long job shares
(annotate/job_progress.py)."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from annotate.job_progress import JobProgress
from annotate.job_progress_apis import JobProgressOutputSerializer, job_progress_response
from annotate.job_progress_selectors import job_progress_build
from config.api_schema import errors
from config.exceptions import NotFoundError
from exports.apis import _export
from exports.models import ExplainerRun, Export, ExportStatus
from exports.runs import explainer_run_fail_if_worker_lost


def export_progress_get(*, export: Export) -> JobProgress:
    succeeded = export.status == ExportStatus.SUCCEEDED and bool(export.file_path)
    return job_progress_build(
        kind="export",
        job_id=export.pk,
        status=export.status,
        phase=export.phase,
        done=export.progress_done,
        total=export.progress_total,
        unit="records",
        started_at=export.started_at,
        finished_at=export.finished_at,
        error=export.error,
        result_url=reverse(
            "exports:export-download",
            kwargs={"project_id": export.project_id, "export_id": export.pk},
        )
        if succeeded
        else None,
    )


def explainer_run_progress_get(*, run: ExplainerRun) -> JobProgress:
    return job_progress_build(
        kind="explainer_run",
        job_id=run.pk,
        status=run.status,
        phase="",
        # Counted by runs explained in chunks; a run scored from an upload has no counts.
        done=run.progress_done,
        total=run.progress_total,
        unit="instances",
        started_at=None,
        finished_at=run.finished_at,
        error=run.error,
        result_url=None,
    )


class ExportProgressApi(APIView):
    @extend_schema(responses={200: JobProgressOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, export_id: int):
        export = _export(request, project_id, export_id)
        return job_progress_response(export_progress_get(export=export))


class ExplainerRunProgressApi(APIView):
    @extend_schema(responses={200: JobProgressOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, export_id: int, run_id: int):
        export = _export(request, project_id, export_id)
        run = ExplainerRun.objects.filter(export=export, pk=run_id).first()
        if run is None:
            raise NotFoundError("explainer run not found")
        # A run whose worker stopped reporting ends here as failed, in plain words.
        run = explainer_run_fail_if_worker_lost(run)
        return job_progress_response(explainer_run_progress_get(run=run))
