"""A worker CSV imported as a background job: answered at once, its progress in the shape
every job shares, ending with its summary, or with every problem and nothing written."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from qc.models import WorkerImportJob, WorkerRecord
from qc.services.workers import PROGRESS_EVERY, worker_profiles_import_csv
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def csv_file(rows: int, bad_line: int | None = None) -> SimpleUploadedFile:
    lines = ["Worker ID,Lifetime Approval Rate,Country"]
    for n in range(rows):
        rate = "lots" if bad_line is not None and n + 2 == bad_line else "97% (97/100)"
        lines.append(f"W{n},{rate},US")
    return SimpleUploadedFile("workers.csv", ("\n".join(lines) + "\n").encode(), "text/csv")


def start(client, project, upload):
    return client.post(
        f"/api/projects/{project.pk}/workers/import-jobs/", {"file": upload}, format="multipart"
    )


def test_an_import_job_ends_with_its_summary_and_its_rows_counted(
    project, role_users, django_capture_on_commit_callbacks
):
    admin = client_for(role_users["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = start(admin, project, csv_file(450))
    assert response.status_code == 202
    assert response.json()["status"] == "pending"
    job_id = response.json()["id"]
    progress = admin.get(f"/api/projects/{project.pk}/workers/import-jobs/{job_id}/progress/")
    assert progress.status_code == 200
    body = progress.json()
    assert (body["kind"], body["status"], body["final"]) == ("worker_import", "succeeded", True)
    assert body["done"] == body["total"] == 450 and body["unit"] == "rows"
    detail = admin.get(f"/api/projects/{project.pk}/workers/import-jobs/{job_id}/").json()
    assert detail["summary"]["created"] == 450
    assert WorkerRecord.objects.filter(project=project).count() == 450


def test_a_bad_row_fails_the_job_naming_it_and_writes_nothing(
    project, role_users, django_capture_on_commit_callbacks
):
    admin = client_for(role_users["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        job_id = start(admin, project, csv_file(20, bad_line=7)).json()["id"]
    body = admin.get(f"/api/projects/{project.pk}/workers/import-jobs/{job_id}/progress/").json()
    assert body["status"] == "failed" and "nothing was imported" in body["error"]
    problems = WorkerImportJob.objects.get(pk=job_id).problems
    assert any("line 7" in p and "approval_rate" in p for p in problems)
    assert not WorkerRecord.objects.filter(project=project).exists()


def test_only_admins_start_or_follow_a_worker_import(project, role_users, api_client):
    job = WorkerImportJob.objects.create(project=project, source_name="w.csv", upload="x.csv")
    for role, user in role_users.items():
        client = client_for(user)
        started = start(client, project, csv_file(1)).status_code
        followed = client.get(
            f"/api/projects/{project.pk}/workers/import-jobs/{job.pk}/progress/"
        ).status_code
        if role == "admin":
            assert (started, followed) == (202, 200)
        else:
            refused = 404 if role == "outsider" else 403
            assert (started, followed) == (refused, refused), role
    assert (
        api_client.get(
            f"/api/projects/{project.pk}/workers/import-jobs/{job.pk}/progress/"
        ).status_code
        == 401
    )


def test_the_import_reports_rows_checked_then_rows_written(project, role_users):
    heard = []
    rows = PROGRESS_EVERY * 2 + 5
    worker_profiles_import_csv(
        project=project,
        acting_user=role_users["admin"],
        data=csv_file(rows).read(),
        progress=lambda phase, done, total: heard.append((phase, done, total)),
    )
    phases = [phase for phase, _, _ in heard]
    assert phases.index("writing") > phases.index("checking")
    assert ("checking", PROGRESS_EVERY, rows) in heard
    assert ("writing", PROGRESS_EVERY, rows) in heard


def test_an_import_whose_worker_stopped_reporting_ends_failed(project, role_users, settings):
    from datetime import timedelta

    from django.utils import timezone

    long_ago = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS + 5)
    job = WorkerImportJob.objects.create(
        project=project,
        source_name="w.csv",
        upload="x.csv",
        status="running",
        started_at=long_ago,
        heartbeat_at=long_ago,
    )
    body = (
        client_for(role_users["admin"])
        .get(f"/api/projects/{project.pk}/workers/import-jobs/{job.pk}/progress/")
        .json()
    )
    assert (body["status"], body["final"]) == ("failed", True)
    assert "nothing was imported" in body["error"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\xff\xfe,3\x1f\x00garbage", "not UTF-8 text"),
        (b"\n", "no header row"),
        (b"name,country\nW1,US\n", "no worker id column"),
    ],
)
def test_a_file_that_is_not_a_worker_csv_is_refused_at_once_and_no_job_is_made(
    project, role_users, content, problem
):
    admin = client_for(role_users["admin"])

    response = start(admin, project, SimpleUploadedFile("w.csv", content, "text/csv"))

    assert response.status_code == 400
    assert "w.csv" in str(response.json()) and problem in str(response.json())
    assert not WorkerImportJob.objects.filter(project=project).exists()
