"""A project's import jobs as the import page lists them: the running ones whose worker
was lost are failed first (annotate/services/background_jobs.py has the rule), so the
list shows what really runs."""

from annotate.models import ImportJob, JobStatus, Project
from annotate.services.imports import import_job_fail_if_worker_lost


def project_import_jobs_fail_if_worker_lost(*, project: Project) -> int:
    """How many of the project's running import jobs were failed as lost."""
    running = ImportJob.objects.filter(project=project, status=JobStatus.RUNNING)
    return sum(import_job_fail_if_worker_lost(job).status == JobStatus.FAILED for job in running)
