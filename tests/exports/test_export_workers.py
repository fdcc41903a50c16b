"""Exports split over real Celery workers (PostgreSQL, Redis): a chord of chunks and one
assembly, the same bytes as one worker, and a worker killed in the middle of a chunk."""

import hashlib
import os
import signal
import uuid
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import dataset_import
from config.celery import app
from exports import services
from exports import storage as export_storage
from exports.models import Export
from tests.annotate.test_worker_killed import big_jsonl, wait_until
from tests.conftest import client_for, start_celery_worker
from tests.exports.test_export_chunks import make_study
from tests.factories import UserFactory

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workers(celery_worker_process, settings, tmp_path):
    """Workers of this test's own on a private queue, started with the environment given;
    the test may kill them."""
    queue = f"rw-chunks-{uuid.uuid4().hex[:8]}"
    media = Path(celery_worker_process["media_root"])
    settings.MEDIA_ROOT = str(media)
    started = []

    def start(name: str, **env):
        log = tmp_path / f"{name}.log"
        worker = start_celery_worker(
            queue=queue,
            media_root=media,
            log=log,
            extra_env={
                "CELERY_TRACE_LOG_LEVEL": "INFO",  # a line per task, counted below
                "EXPORT_WORK_DIR": str(tmp_path / f"{name}-work"),
                **env,
            },
            name=f"{queue}-{name}",
        )
        started.append(worker)
        return worker, log

    previous = app.conf.task_always_eager, app.conf.task_default_queue
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    yield start
    app.conf.task_always_eager, app.conf.task_default_queue = previous
    for worker in started:
        if worker.poll() is None:
            worker.terminate()
        worker.wait(timeout=30)


def researcher(project):
    user = UserFactory(username=f"r-{uuid.uuid4().hex[:6]}")
    ProjectMembership.objects.create(project=project, user=user, role=Role.RESEARCHER)
    return client_for(user)


def export_and_wait(client, project, **params) -> Export:
    created = client.post(
        reverse("exports:export-list", args=[project.id]), params, format="json"
    ).data
    done = wait_until(
        lambda: (
            Export.objects.exclude(status__in=["pending", "running"])
            .filter(pk=created["id"])
            .first()
        )
    )
    assert done.status == "succeeded", done.error
    return done


def stored(export: Export) -> bytes:
    with default_storage.open(export.file_path, "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("layout", ["docs", "docs.jsonl"])
def test_chunks_on_two_workers_give_the_bytes_of_one(workers, layout):
    project = make_study(items=30)
    client = researcher(project)
    first, first_log = workers("split-a", EXPORT_CHUNK_ITEMS="7")
    second, second_log = workers("split-b", EXPORT_CHUNK_ITEMS="7")

    split = export_and_wait(client, project, layout=layout)

    chunk_lines = sum(
        log.read_text().count("exports.tasks.export_chunk[") for log in (first_log, second_log)
    )
    assert chunk_lines >= 2 * 10, "5 item and 5 document chunks, each received and finished"
    assert not list(export_storage._walk(export_storage.parts_folder(split.pk)))
    for worker in (first, second):
        worker.terminate()
        worker.wait(timeout=30)

    # One worker, one task: the chunks are not sent anywhere.
    _, single_log = workers("single", EXPORT_CHUNKED="false")
    whole = export_and_wait(client, project, layout=layout)

    assert "exports.tasks.export_execute[" in single_log.read_text()
    assert "exports.tasks.export_chunk[" not in single_log.read_text()
    assert stored(whole) == stored(split)
    assert whole.sha256 == split.sha256 == hashlib.sha256(stored(split)).hexdigest()


def test_a_worker_killed_in_the_middle_of_a_chunk_publishes_nothing(
    workers, worker_silence_outlasts_timeout, tmp_path
):
    project_rows = tmp_path / "rows.jsonl"
    project_rows.write_bytes(
        big_jsonl(2400).replace(b'"label": "pos"}', b'"label": "pos", "split": "train"}')
    )
    from tests.factories import ProjectFactory

    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=project_rows)
    client = researcher(project)
    # Twelve chunks: the kill lands after the first and before the last.
    worker, _ = workers("doomed", EXPORT_CHUNK_ITEMS="200")
    created = client.post(
        reverse("exports:export-list", args=[project.id]),
        {"selection": "reference", "aggregation": "reference"},
        format="json",
    ).data

    # At least one chunk is written and the worker is in the middle of another.
    wait_until(lambda: 0 < Export.objects.get(pk=created["id"]).progress_done < 2400)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    export = Export.objects.get(pk=created["id"])
    assert export.status == "running" and export.file_path == ""
    assert not [
        n
        for n in export_storage._walk(export_storage.export_folder(export.pk))
        if "/parts/" not in n
    ], "nothing but parts in the storage"
    worker_silence_outlasts_timeout()
    detail = client.get(reverse("exports:export-detail", args=[project.id, export.pk])).data
    assert detail["status"] == "failed" and detail["download_url"] is None
    assert "worker running this export stopped" in detail["error"]

    # The chunks still queued go to a new worker: they find the export failed and stop.
    _, log = workers("after", EXPORT_CHUNK_ITEMS="200")
    wait_until(lambda: "exports.tasks.export_chunk[" in log.read_text(), timeout=60)
    services.export_work_sweep()
    export.refresh_from_db()
    assert export.status == "failed" and export.file_path == ""
    assert not list(export_storage._walk(export_storage.export_folder(export.pk)))
