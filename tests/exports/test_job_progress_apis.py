"""Every long job's progress in one shape, each endpoint open to the roles that may see
the job and to no one else."""

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from annotate.models import ImportJob, JobStatus
from exports.models import ExplainerRun, Export, ExportStatus
from exports.params import ExportParams
from qc.models import AgreementReport, ReportStatus
from tests.conftest import client_for

SHAPE = {
    "kind",
    "id",
    "status",
    "final",
    "phase",
    "done",
    "total",
    "unit",
    "started_at",
    "finished_at",
    "seconds_left",
    "error",
    "result_url",
}


@pytest.fixture
def jobs(project):
    now = timezone.now()
    imported = ImportJob.objects.create(
        project=project,
        source_format="jsonl",
        source_name="texts.jsonl",
        upload=ContentFile(b"", name="texts.jsonl"),
        status=JobStatus.RUNNING,
        phase="writing",
        progress_done=200,
        progress_total=800,
        started_at=now,
    )
    export = Export.objects.create(
        project=project,
        params=ExportParams().as_dict(),
        status=ExportStatus.FAILED,
        phase="done",
        error="nothing to export: no item matches these parameters",
        started_at=now,
        finished_at=now,
    )
    run = ExplainerRun.objects.create(export=export, name="occlusion", status=JobStatus.PENDING)
    AgreementReport.objects.create(project=project, status=ReportStatus.RUNNING, progress=0.25)
    return {
        "import": f"/api/projects/{project.pk}/imports/{imported.pk}/progress/",
        "export": f"/api/projects/{project.pk}/exports/{export.pk}/progress/",
        "explainer_run": f"/api/projects/{project.pk}/exports/{export.pk}/runs/{run.pk}/progress/",
        "agreement": f"/api/projects/{project.pk}/agreement/progress/",
    }


ALLOWED = {
    "import": {"admin"},
    "export": {"admin", "researcher"},
    "explainer_run": {"admin", "researcher"},
    "agreement": {"admin", "researcher"},
}


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(ALLOWED))
def test_progress_is_one_shape_for_every_job(kind, jobs, role_users):
    response = client_for(role_users["admin"]).get(jobs[kind])
    assert response.status_code == 200
    assert set(response.json()) == SHAPE
    assert response.json()["kind"] == kind


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(ALLOWED))
def test_only_the_roles_that_see_the_job_see_its_progress(kind, jobs, role_users, api_client):
    for role, user in role_users.items():
        code = client_for(user).get(jobs[kind]).status_code
        if role in ALLOWED[kind]:
            assert code == 200, role
        else:
            assert code == (404 if role == "outsider" else 403), role
    assert api_client.get(jobs[kind]).status_code == 401


@pytest.mark.django_db
def test_counts_and_states(jobs, role_users):
    admin = client_for(role_users["admin"])
    running = admin.get(jobs["import"]).json()
    assert (running["status"], running["final"], running["done"], running["total"]) == (
        "running",
        False,
        200,
        800,
    )
    failed = admin.get(jobs["export"]).json()
    assert failed["final"] and failed["error"].startswith("nothing to export")
    assert failed["result_url"] is None
    agreement = admin.get(jobs["agreement"]).json()
    assert agreement["status"] == "running" and agreement["done"] < agreement["total"]


@pytest.mark.django_db
def test_a_job_of_another_project_is_not_found(jobs, role_users, project):
    from tests.factories import MembershipFactory, ProjectFactory

    other = ProjectFactory()
    MembershipFactory(project=other, user=role_users["admin"], role="admin")
    url = jobs["export"].replace(f"/projects/{project.pk}/", f"/projects/{other.pk}/")
    assert client_for(role_users["admin"]).get(url).status_code == 404


@pytest.mark.django_db
def test_a_run_whose_worker_stopped_reporting_ends_failed_in_plain_words(
    jobs, role_users, settings
):
    from datetime import timedelta

    run = ExplainerRun.objects.get()
    ExplainerRun.objects.filter(pk=run.pk).update(
        status=JobStatus.RUNNING,
        heartbeat_at=timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS + 5),
    )
    body = client_for(role_users["admin"]).get(jobs["explainer_run"]).json()
    assert (body["status"], body["final"]) == ("failed", True)
    assert "stopped" in body["error"] and "start it again" in body["error"]
