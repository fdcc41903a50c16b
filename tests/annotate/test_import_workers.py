"""Imports split over real Celery workers (PostgreSQL, Redis): chunks on two workers write
the rows one worker writes; a worker killed in the middle of a chunk writes nothing."""

import os
import signal
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Document, ImportJob, ImportPart, Item, Project
from annotate.services import imports
from config.storage import stored_names
from tests.annotate.test_import_chunks import project_rows, rows_jsonl
from tests.annotate.test_worker_killed import big_jsonl, wait_until
from tests.conftest import client_for
from tests.exports.test_export_workers import workers  # noqa: F401 - fixture
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def admin_client(project):
    user = UserFactory(username=f"a-{uuid.uuid4().hex[:6]}")
    MembershipFactory(project=project, user=user, role="admin")
    return client_for(user)


def start_import(content: bytes, name="rows.jsonl") -> tuple[Project, int]:
    project = ProjectFactory(labels=[])
    response = admin_client(project).post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile(name, content)},
        format="multipart",
    )
    assert response.status_code == 202, response.content
    return project, response.data["id"]


def finished(model, pk):
    return model.objects.exclude(status__in=["pending", "running"]).filter(pk=pk).first()


def test_import_chunks_on_two_workers_write_the_rows_of_one(workers):  # noqa: F811
    first, first_log = workers("import-a", IMPORT_CHUNK_ROWS="25")
    second, second_log = workers("import-b", IMPORT_CHUNK_ROWS="25")

    split_project, split_id = start_import(rows_jsonl(200))
    split = wait_until(lambda: finished(ImportJob, split_id))

    assert split.status == "succeeded", (split.error, split.problems[:3])
    chunk_lines = sum(
        log.read_text().count("annotate.tasks.import_chunk[") for log in (first_log, second_log)
    )
    assert chunk_lines >= 2 * 8, "8 chunks, each received and finished"
    assert all(
        "annotate.tasks.import_chunk[" in log.read_text() for log in (first_log, second_log)
    ), "both workers took chunks"
    assert (split.progress_done, split.progress_total) == (200, 200)
    assert not ImportPart.objects.filter(job=split).exists()
    assert not list(stored_names(imports.parts_folder(split_id)))
    for worker in (first, second):
        worker.terminate()
        worker.wait(timeout=30)

    _, single_log = workers("import-single", IMPORT_CHUNKED="false", IMPORT_CHUNK_ROWS="25")
    whole_project, whole_id = start_import(rows_jsonl(200))
    whole = wait_until(lambda: finished(ImportJob, whole_id))

    assert whole.status == "succeeded", whole.error
    assert "annotate.tasks.import_chunk[" not in single_log.read_text()
    assert project_rows(whole_project) == project_rows(split_project)
    assert whole.summary == split.summary


def test_a_worker_killed_in_the_middle_of_an_import_chunk_writes_nothing(
    workers,  # noqa: F811
    worker_silence_outlasts_timeout,
):
    # Twenty chunks: the kill lands after the first and before the last.
    worker, _ = workers("import-doomed", IMPORT_CHUNK_ROWS="250")
    project, job_id = start_import(big_jsonl(5000), name="big.jsonl")

    # At least one chunk is staged and the worker is in the middle of another.
    wait_until(lambda: 0 < ImportJob.objects.get(pk=job_id).progress_done < 5000)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    job = ImportJob.objects.get(pk=job_id)
    assert job.status == "running"
    assert not Item.objects.filter(project=project).exists(), "chunks stage outside the project"
    assert not Document.objects.filter(project=project).exists()
    worker_silence_outlasts_timeout()
    detail = admin_client(project).get(reverse("annotate:import-detail", args=[project.id, job_id]))
    assert detail.data["status"] == "failed"
    assert "worker running this import stopped" in detail.data["error"]

    # The chunks still queued go to a new worker: they find the job failed and stop.
    _, log = workers("import-after", IMPORT_CHUNK_ROWS="250")
    wait_until(lambda: "annotate.tasks.import_chunk[" in log.read_text(), timeout=60)
    imports.import_parts_sweep()
    assert not Item.objects.filter(project=project).exists()
    assert not ImportPart.objects.filter(job_id=job_id).exists()
    assert not list(stored_names(imports.parts_folder(job_id)))
