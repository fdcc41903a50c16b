"""A Celery worker killed in the middle of a job: the job ends failed, nothing partial shows."""

import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Document, ImportJob, Item
from annotate.services import dataset_import
from config.celery import app
from exports.models import Export
from tests.conftest import client_for, start_celery_worker
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def own_worker(celery_worker_process, settings, tmp_path):
    """A worker of this test's own, on a private queue, that the test may kill."""
    queue = f"rw-kill-{uuid.uuid4().hex[:8]}"
    media = Path(celery_worker_process["media_root"])
    settings.MEDIA_ROOT = str(media)
    # Exports in four chunks of the rows below: a kill after the first lands before the end.
    worker = start_celery_worker(
        queue=queue,
        media_root=media,
        log=tmp_path / "worker.log",
        extra_env={"EXPORT_CHUNK_ITEMS": "1000"},
    )
    previous = app.conf.task_always_eager, app.conf.task_default_queue
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    yield worker
    app.conf.task_always_eager, app.conf.task_default_queue = previous
    if worker.poll() is None:
        worker.kill()
    worker.wait(timeout=30)


def big_jsonl(rows: int) -> bytes:
    words = [
        "a",
        "quiet",
        "and",
        "honest",
        "film",
        "about",
        "loss",
        "with",
        "sharp",
        "dialogue",
        "and",
        "slow",
        "pacing",
    ]
    return "".join(
        json.dumps(
            {
                "id": f"r{n}",
                "text": " ".join(words[(n + k) % len(words)] for k in range(60)) + " .",
                "label": "pos",
            }
        )
        + "\n"
        for n in range(rows)
    ).encode()


def wait_until(condition, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def test_killed_during_an_import_nothing_is_written_and_the_job_fails(
    own_worker, worker_silence_outlasts_timeout
):
    from annotate.services.imports import import_job_progress

    project = ProjectFactory(labels=[])
    admin = UserFactory(username="killer-admin")
    MembershipFactory(project=project, user=admin, role="admin")
    client = client_for(admin)
    response = client.post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile("big.jsonl", big_jsonl(10000))},
        format="multipart",
    )
    job_id = response.data["id"]

    def writing():
        job = ImportJob.objects.get(pk=job_id)
        return job.status == "running" and import_job_progress(job).get("phase") == "writing"

    wait_until(writing)
    os.kill(own_worker.pid, signal.SIGKILL)
    own_worker.wait(timeout=30)

    assert Item.objects.filter(project=project).count() == 0, (
        "the write transaction died with the worker"
    )
    assert Document.objects.filter(project=project).count() == 0
    worker_silence_outlasts_timeout()
    job = client.get(reverse("annotate:import-detail", args=[project.id, job_id])).data
    assert job["status"] == "failed" and "worker running this import stopped" in job["error"]


def test_killed_during_an_export_no_file_is_published(
    own_worker, settings, worker_silence_outlasts_timeout, tmp_path
):
    project = ProjectFactory(labels=[])
    path = tmp_path / "big.jsonl"
    path.write_bytes(
        big_jsonl(4000).replace(b'"label": "pos"}', b'"label": "pos", "split": "train"}')
    )
    dataset_import(project=project, path=path)
    researcher = UserFactory(username="killer-researcher")
    MembershipFactory(project=project, user=researcher, role="researcher")
    client = client_for(researcher)
    response = client.post(
        reverse("exports:export-list", args=[project.id]),
        {"selection": "reference", "aggregation": "reference"},
        format="json",
    )
    export_id = response.data["id"]

    wait_until(lambda: Export.objects.get(pk=export_id).progress_done > 0)
    os.kill(own_worker.pid, signal.SIGKILL)
    own_worker.wait(timeout=30)

    export = Export.objects.get(pk=export_id)
    assert export.status == "running" and export.file_path == ""
    published = Path(settings.MEDIA_ROOT) / "exports" / str(export_id)
    assert not [p for p in published.rglob("*") if p.is_file() and "parts" not in p.parts]
    worker_silence_outlasts_timeout()
    detail = client.get(reverse("exports:export-detail", args=[project.id, export_id])).data
    assert detail["status"] == "failed" and detail["download_url"] is None
    assert "worker running this export stopped" in detail["error"]
    from exports.services import export_work_sweep

    export_work_sweep()  # as beat runs it
    assert not [p for p in published.rglob("*") if p.is_file()], "its parts are removed"
