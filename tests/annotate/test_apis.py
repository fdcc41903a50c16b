"""API: projects and imports, with a permission test for every endpoint and role."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import ImportJob, Item, Project
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory


def zipped_dataset(label: str = "POS") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("ds/docs.jsonl", json.dumps({"docid": "d1", "document": "Fine film ."}) + "\n")
        line = {
            "annotation_id": "a1",
            "classification": label,
            "docids": ["d1"],
            "evidences": [
                [
                    {
                        "docid": "d1",
                        "start_token": 0,
                        "end_token": 1,
                        "start_sentence": 0,
                        "end_sentence": 1,
                        "text": "Fine",
                    }
                ]
            ],
            "query": None,
            "query_type": None,
        }
        zf.writestr("ds/train.jsonl", json.dumps(line) + "\n")
        zf.writestr("ds/val.jsonl", "")
        zf.writestr("ds/test.jsonl", "")
    return buffer.getvalue()


def upload(name="ds.zip", content=None):
    return SimpleUploadedFile(name, zipped_dataset() if content is None else content)


def imports_url(project):
    return reverse("annotate:import-list", args=[project.id])


def test_admin_imports_a_zip_and_sees_the_finished_job(
    db, project, role_users, django_capture_on_commit_callbacks
):
    client = client_for(role_users["admin"])

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(imports_url(project), {"file": upload()}, format="multipart")

    assert response.status_code == 202, response.content
    job = client.get(reverse("annotate:import-detail", args=[project.id, response.data["id"]])).data
    assert job["status"] == "succeeded"
    assert job["summary"]["items_created"] == 1
    assert Item.objects.filter(project=project).count() == 1


def test_failed_job_lists_every_problem_and_writes_nothing(
    db, project, role_users, django_capture_on_commit_callbacks
):
    bad = b'{"text": "ok", "label": "a"}\n{"text": 5, "label": "a"}\nnot json\n'

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(role_users["admin"]).post(
            imports_url(project), {"file": upload("t.jsonl", bad)}, format="multipart"
        )

    job = ImportJob.objects.get(pk=response.data["id"])
    assert job.status == "failed"
    assert [(p["file"], p["line"], p["field"]) for p in job.problems] == [
        ("t.jsonl", 2, "text"),
        ("t.jsonl", 3, None),
    ]
    assert Item.objects.count() == 0


def test_unknown_file_type_is_a_clear_400(db, project, role_users):
    response = client_for(role_users["admin"]).post(
        imports_url(project), {"file": upload("data.xlsx", b"x")}, format="multipart"
    )

    assert response.status_code == 400
    assert "cannot tell the format of 'data.xlsx'" in response.data["detail"]
    assert ImportJob.objects.count() == 0


def test_missing_file_is_a_400_naming_the_field(db, project, role_users):
    response = client_for(role_users["admin"]).post(imports_url(project), {}, format="multipart")

    assert response.status_code == 400
    assert "file" in response.data


@pytest.mark.parametrize(
    ("who", "status"),
    [("researcher", 403), ("reviewer", 403), ("annotator", 403), ("outsider", 404)],
)
def test_only_project_admins_may_import(db, project, role_users, who, status):
    response = client_for(role_users[who]).post(
        imports_url(project), {"file": upload()}, format="multipart"
    )

    assert response.status_code == status
    assert ImportJob.objects.count() == 0


def test_anonymous_users_may_not_import(db, project, api_client):
    response = api_client.post(imports_url(project), {"file": upload()}, format="multipart")

    assert response.status_code == 401


@pytest.mark.parametrize(
    ("who", "status"), [("admin", 200), ("researcher", 403), ("annotator", 403), ("outsider", 404)]
)
def test_import_job_list_and_detail_are_admin_only(db, project, role_users, who, status):
    job = ImportJob.objects.create(
        project=project, source_format="jsonl", source_name="x.jsonl", upload="x"
    )
    client = client_for(role_users[who])

    assert client.get(imports_url(project)).status_code == status
    assert (
        client.get(reverse("annotate:import-detail", args=[project.id, job.id])).status_code
        == status
    )


def test_import_job_of_another_project_is_not_found(db, project, role_users):
    other = ProjectFactory()
    job = ImportJob.objects.create(
        project=other, source_format="jsonl", source_name="x", upload="x"
    )

    response = client_for(role_users["admin"]).get(
        reverse("annotate:import-detail", args=[project.id, job.id])
    )

    assert response.status_code == 404


def test_project_list_shows_only_the_users_projects(db, project, role_users):
    ProjectFactory(name="someone else's")

    names = [
        p["name"]
        for p in client_for(role_users["annotator"])
        .get(reverse("annotate:project-list"))
        .data["results"]
    ]

    assert names == [project.name]


@pytest.mark.parametrize(("who", "status"), [("admin", 200), ("annotator", 200), ("outsider", 404)])
def test_project_detail_is_for_members(db, project, role_users, who, status):
    response = client_for(role_users[who]).get(
        reverse("annotate:project-detail", args=[project.id])
    )

    assert response.status_code == status


def test_staff_create_projects_and_become_their_admin(db):
    staff = UserFactory(username="staff", is_staff=True)

    response = client_for(staff).post(
        reverse("annotate:project-list"),
        {"name": "New", "labels": ["a", "b"], "language": "zh"},
        format="json",
    )

    assert response.status_code == 201
    project = Project.objects.get(name="New")
    assert project.memberships.get().user == staff


def test_non_staff_may_not_create_projects(db):
    response = client_for(UserFactory()).post(
        reverse("annotate:project-list"), {"name": "X"}, format="json"
    )

    assert response.status_code == 403


def test_bad_project_input_names_the_field(db):
    staff = UserFactory(username="staff", is_staff=True)

    response = client_for(staff).post(
        reverse("annotate:project-list"),
        {"name": "X", "language": "fr", "annotators_per_item": 0},
        format="json",
    )

    assert response.status_code == 400
    assert set(response.data) == {"language", "annotators_per_item"}


def test_duplicate_project_name_is_refused(db, project):
    staff = UserFactory(username="staff", is_staff=True)

    response = client_for(staff).post(
        reverse("annotate:project-list"), {"name": project.name}, format="json"
    )

    assert response.status_code == 400
    assert "already exists" in response.data["detail"]


def test_openapi_schema_and_docs_are_served(db, client):
    schema = client.get("/api/schema/")
    docs = client.get("/api/docs/")

    assert schema.status_code == 200
    assert b"/api/projects/{project_id}/imports/" in schema.content
    assert docs.status_code == 200


def test_a_running_job_with_a_recent_heartbeat_is_left_running(db, project, settings):
    from django.utils import timezone

    from annotate.services.imports import import_job_fail_if_worker_lost

    job = ImportJob.objects.create(
        project=project,
        source_format="jsonl",
        source_name="x",
        upload="x",
        status="running",
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 60

    assert import_job_fail_if_worker_lost(job).status == "running"
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 0
    assert import_job_fail_if_worker_lost(job).status == "failed"
