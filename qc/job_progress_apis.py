"""Progress of the agreement report's computation, in the shape every long job shares
(annotate/job_progress.py)."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from annotate.job_progress import FAILED, PENDING, RUNNING, SUCCEEDED, JobProgress
from annotate.job_progress_apis import JobProgressOutputSerializer, job_progress_response
from annotate.job_progress_selectors import job_progress_build
from annotate.models import Project, Role
from annotate.selectors import project_get_for_user
from config.api_schema import errors
from qc.models import AgreementReport, ReportStatus

_STATUS = {
    ReportStatus.NONE: PENDING,
    ReportStatus.RUNNING: RUNNING,
    ReportStatus.READY: SUCCEEDED,
    ReportStatus.FAILED: FAILED,
}


def agreement_progress_get(*, project: Project) -> JobProgress:
    report = AgreementReport.objects.filter(project=project).first() or AgreementReport(
        project=project
    )
    total = getattr(report, "progress_total", 0)
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
        phase=getattr(report, "phase", ""),
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
