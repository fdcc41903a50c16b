"""ERASER and benchmark imports split over real Celery workers (PostgreSQL, Redis): chunks on
two workers write the rows of one worker, and of the one-step import; a worker killed in
the middle of a chunk writes nothing, and the chunks redelivered stop."""

import io
import json
import os
import signal
import zipfile

import pytest

from annotate.models import Document, ImportJob, ImportPart, Item, Project
from annotate.services import dataset_import, imports
from config.storage import stored_names
from tests.annotate.test_import_chunks_prepared import benchmark_lines, project_dump, zipped
from tests.annotate.test_import_workers import admin_client, finished
from tests.annotate.test_worker_killed import wait_until
from tests.exports.test_export_workers import workers  # noqa: F401 - fixture
from tests.factories import ProjectFactory

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def start_import(content: bytes, name: str, **project_fields) -> tuple[Project, int]:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    project = ProjectFactory(labels=[], **project_fields)
    response = admin_client(project).post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile(name, content)},
        format="multipart",
    )
    assert response.status_code == 202, response.content
    return project, response.data["id"]


def chunk_lines(*logs) -> list[int]:
    return [log.read_text().count("annotate.tasks.import_chunk[") for log in logs]


UPLOADS = {
    "eraser": ("ds.zip", {}),
    "benchmark": ("gold.jsonl", {"task_type": "reading_comprehension", "language": "zh"}),
}


@pytest.mark.parametrize("kind", UPLOADS)
def test_chunks_on_two_workers_write_the_rows_of_one_worker_and_of_one_step(
    workers,  # noqa: F811
    eraser_reference,
    tmp_path,
    kind,
):
    name, fields = UPLOADS[kind]
    if kind == "eraser":
        content = zipped(eraser_reference / "multirc" / "data")
    else:
        content = benchmark_lines("reading_comprehension", 40)
    first, first_log = workers(f"{kind}-a", IMPORT_CHUNK_ROWS="20")
    second, second_log = workers(f"{kind}-b", IMPORT_CHUNK_ROWS="20")

    split_project, split_id = start_import(content, name, **fields)
    split = wait_until(lambda: finished(ImportJob, split_id))

    assert split.status == "succeeded", (split.error, split.problems[:3])
    assert all(chunk_lines(first_log, second_log)), "both workers took chunks"
    assert sum(chunk_lines(first_log, second_log)) >= 2 * 4, "4 chunks or more, each finished"
    assert split.progress_done == split.progress_total > 0
    assert not ImportPart.objects.filter(job=split).exists()
    assert not list(stored_names(imports.parts_folder(split_id)))
    for worker in (first, second):
        worker.terminate()
        worker.wait(timeout=30)

    _, single_log = workers(f"{kind}-single", IMPORT_CHUNKED="false", IMPORT_CHUNK_ROWS="20")
    whole_project, whole_id = start_import(content, name, **fields)
    whole = wait_until(lambda: finished(ImportJob, whole_id))

    assert whole.status == "succeeded", whole.error
    assert chunk_lines(single_log) == [0]
    assert project_dump(whole_project) == project_dump(split_project)
    assert whole.summary == split.summary

    one_step_project = ProjectFactory(labels=[], **fields)
    (tmp_path / name).write_bytes(content)
    summary = dataset_import(project=one_step_project, path=tmp_path / name)
    assert project_dump(one_step_project) == project_dump(split_project)
    assert summary.as_dict() == split.summary


def big_eraser_zip(documents: int) -> bytes:
    words = ["a", "quiet", "and", "honest", "film", "about", "loss", "with", "sharp", "dialogue"]
    docs, instances = [], []
    for n in range(documents):
        sentences = [" ".join(words[(n + s + k) % len(words)] for k in range(12)) for s in range(5)]
        docs.append(json.dumps({"docid": f"d{n}", "document": "\n".join(sentences)}))
        evidence = {
            "docid": f"d{n}",
            "start_token": 2,
            "end_token": 5,
            "start_sentence": 0,
            "end_sentence": 1,
            "text": " ".join(words[(n + k) % len(words)] for k in range(2, 5)),
        }
        instances.append(
            json.dumps(
                {
                    "annotation_id": f"d{n}",
                    "classification": "POS",
                    "docids": None,
                    "evidences": [[evidence]],
                    "query": "What is the sentiment?",
                    "query_type": None,
                }
            )
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/docs.jsonl", "\n".join(docs) + "\n")
        archive.writestr("data/train.jsonl", "\n".join(instances) + "\n")
        archive.writestr("data/val.jsonl", "")
        archive.writestr("data/test.jsonl", "")
    return buffer.getvalue()


def test_a_worker_killed_in_the_middle_of_an_eraser_chunk_writes_nothing(
    workers,  # noqa: F811
    worker_silence_outlasts_timeout,
):
    # Fifteen chunks: the kill lands after the first and before the last.
    worker, _ = workers("eraser-doomed", IMPORT_CHUNK_ROWS="200")
    project, job_id = start_import(big_eraser_zip(3000), "big.zip")
    total = 2 * 3000

    # At least one chunk is staged and the worker is in the middle of another.
    wait_until(lambda: 0 < ImportJob.objects.get(pk=job_id).progress_done < total)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    job = ImportJob.objects.get(pk=job_id)
    assert job.status == "running" and job.phase == "preparing"
    assert not Item.objects.filter(project=project).exists(), "chunks stage outside the project"
    assert not Document.objects.filter(project=project).exists()
    worker_silence_outlasts_timeout()
    from django.urls import reverse

    detail = admin_client(project).get(reverse("annotate:import-detail", args=[project.id, job_id]))
    assert detail.data["status"] == "failed"
    assert "worker running this import stopped" in detail.data["error"]

    # The chunk that was running, and those still queued, go to a new worker: they find
    # the job failed and stop.
    _, log = workers("eraser-after", IMPORT_CHUNK_ROWS="200")
    wait_until(lambda: "annotate.tasks.import_chunk[" in log.read_text(), timeout=60)
    imports.import_parts_sweep()
    assert ImportJob.objects.get(pk=job_id).status == "failed"
    assert not Item.objects.filter(project=project).exists()
    assert not Document.objects.filter(project=project).exists()
    assert not ImportPart.objects.filter(job_id=job_id).exists()
    assert not list(stored_names(imports.parts_folder(job_id)))
