"""Progress of the agreement report's computation and of worker CSV imports, in the shape
every long job shares (annotate/job_progress.py)."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.job_progress import FAILED, PENDING, RUNNING, SUCCEEDED, JobProgress
from annotate.job_progress_apis import JobProgressOutputSerializer, job_progress_response
from annotate.job_progress_selectors import job_progress_build
from annotate.models import Project, Role
from annotate.selectors import project_get_for_user
from config.api_schema import errors
from config.exceptions import NotFoundError
from qc.agreement import agreement_report_get
from qc.models import ReportStatus, WorkerImportJob
from qc.serializers import WorkerCsvInputSerializer
from qc.services.worker_import_jobs import (
    worker_import_fail_if_worker_lost,
    worker_import_progress,
    worker_import_start,
)

_STATUS = {
    ReportStatus.NONE: PENDING,
    ReportStatus.RUNNING: RUNNING,
    ReportStatus.READY: SUCCEEDED,
    ReportStatus.FAILED: FAILED,
}


def agreement_progress_get(*, project: Project) -> JobProgress:
    # Read as the page reads it: a run whose workers stopped reporting is failed here.
    report, _ = agreement_report_get(project=project)
    total = report.progress_total
    if total:
        done, unit = report.progress_done, "chunks"
    else:
        # A report counted only as a fraction: shown as percent.
        done, total, unit = round((report.progress or 0) * 100), 100, "percent"
    status = _STATUS.get(report.status, report.status)
    return job_progress_build(
        kind="agreement",
        job_id=report.pk or 0,
        status=status,
        phase=report.phase,
        done=total if status == SUCCEEDED else done,
        total=total,
        unit=unit,
        started_at=None,
        finished_at=report.computed_at if status == SUCCEEDED else None,
        error=report.error,
        result_url=reverse("agreement-page", kwargs={"project_id": project.pk})
        if status == SUCCEEDED
        else None,
    )


class AgreementProgressApi(APIView):
    @extend_schema(responses={200: JobProgressOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.RESEARCHER)
        )
        return job_progress_response(agreement_progress_get(project=project))


# ---------------------------------------------------------------- worker CSV import jobs


class WorkerImportJobOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = WorkerImportJob
        fields = [
            "id",
            "source_name",
            "platform",
            "status",
            "summary",
            "problems",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]


def worker_import_progress_get(*, job: WorkerImportJob) -> JobProgress:
    live = worker_import_progress(job)
    return job_progress_build(
        kind="worker_import",
        job_id=job.pk,
        status=job.status,
        phase=live.get("phase") or "",
        done=int(live.get("done") or 0),
        total=int(live.get("total") or 0),
        unit="rows",
        started_at=job.started_at,
        finished_at=job.finished_at,
        error=job.error,
        result_url=None,
    )


class WorkerImportJobCreateApi(APIView):
    """A worker CSV imported in the background: answered at once with the job, whose
    progress the page follows (the synchronous workers/import/ stays for scripts)."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        request=WorkerCsvInputSerializer,
        responses={202: WorkerImportJobOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        data = WorkerCsvInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = worker_import_start(
            project=project,
            acting_user=request.user,
            upload=data.validated_data["file"],
            platform=data.validated_data["platform"],
        )
        return Response(WorkerImportJobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _worker_import_job(request, project_id: int, job_id: int) -> WorkerImportJob:
    project = project_get_for_user(project_id=project_id, user=request.user, roles=(Role.ADMIN,))
    job = WorkerImportJob.objects.filter(project=project, pk=job_id).first()
    if job is None:
        raise NotFoundError("worker import not found")
    return worker_import_fail_if_worker_lost(job)


class WorkerImportJobDetailApi(APIView):
    @extend_schema(responses={200: WorkerImportJobOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, job_id: int):
        job = _worker_import_job(request, project_id, job_id)
        return Response(WorkerImportJobOutputSerializer(job).data)


class WorkerImportProgressApi(APIView):
    @extend_schema(responses={200: JobProgressOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, job_id: int):
        job = _worker_import_job(request, project_id, job_id)
        return job_progress_response(worker_import_progress_get(job=job))
