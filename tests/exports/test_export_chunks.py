"""Exports written as chunks and assembled once (docs/design/architecture.md#background-jobs),
through the storage, with the same bytes however the chunks were cut and wherever they ran."""

import hashlib
import io
import json
import random
import uuid
import zipfile

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Document, Item, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from exports import services
from exports import storage as export_storage
from exports.models import ExplainerRun, Export, ExportPart
from exports.runs import explainer_run_start
from exports.services import export_start
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


def make_study(items=11):
    """Items in all three splits, two variants, four workers with varied highlights."""
    project = make_project(items=items, variants=("a", "b"), quota=2)
    for n, item in enumerate(Item.objects.filter(project=project).order_by("pk")):
        item.split = ("train", "val", "test")[n % 3]
        item.save(update_fields=["split"])
    rng = random.Random(7)
    for name in ("w1", "w2", "w3", "w4"):
        worker = UserFactory(username=f"{name}-{uuid.uuid4().hex[:4]}")
        while (lease := assignment_next(project=project, worker=worker)) is not None:
            docid = lease.item.documents.get().docid
            start = rng.randrange(0, 8)
            sets = [
                [{"docid": docid, "start_token": start, "end_token": start + rng.randrange(1, 4)}]
            ]
            if rng.random() < 0.3:
                sets.append([{"docid": docid, "start_token": 10, "end_token": 12}])
            annotation_submit(
                assignment_id=lease.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=sets,
                time_spent_ms=rng.randrange(5_000, 60_000),
            )
    return project


@pytest.fixture
def study(db):
    return make_study()


def run_export(project, capture, **params) -> Export:
    with capture(execute=True):
        export = export_start(project=project, acting_user=None, raw_params=params)
    export.refresh_from_db()
    assert export.status == "succeeded", export.error
    return export


def published(export: Export) -> bytes:
    with default_storage.open(export.file_path, "rb") as handle:
        return handle.read()


@pytest.mark.parametrize("layout", ["docs", "docs.jsonl"])
def test_chunks_of_any_size_publish_the_same_bytes(
    study, settings, django_capture_on_commit_callbacks, layout
):
    """One chunk, chunks of 4 items and chunks of one item: one zip, byte for byte."""
    exports = []
    for size in (1000, 4, 1):
        settings.EXPORT_CHUNK_ITEMS = size
        exports.append(run_export(study, django_capture_on_commit_callbacks, layout=layout))

    bodies = [published(e) for e in exports]
    assert len({hashlib.sha256(b).hexdigest() for b in bodies}) == 1
    assert {e.sha256 for e in exports} == {hashlib.sha256(bodies[0]).hexdigest()}
    with zipfile.ZipFile(io.BytesIO(bodies[0])) as archive:
        names = [n.split("/", 1)[1] for n in archive.namelist()]
        sheet = json.loads(archive.read(next(n for n in archive.namelist() if "sheet.json" in n)))
    assert names[:3] == ["train.jsonl", "val.jsonl", "test.jsonl"]
    assert names[-2:] == ["datasheet.json", "datasheet.md"]
    assert sheet["dataset"]["instances_per_split"] == {"train": 4, "val": 4, "test": 3}
    assert sheet["annotation"]["annotations"] == 44
    assert {e.summary["documents"] for e in exports} == {11}


def test_the_zip_does_not_depend_on_the_export_row_or_the_time(
    study, settings, django_capture_on_commit_callbacks
):
    """Two exports of the same data a second apart: only the file name differs."""
    first = run_export(study, django_capture_on_commit_callbacks)
    second = run_export(study, django_capture_on_commit_callbacks)

    def members(body):
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            return [(i.filename.split("/", 1)[1], i.date_time, i.CRC) for i in archive.infolist()]

    assert members(published(first)) == members(published(second))


class FakeChord:
    """Stands in for Celery's chord: records what would be sent to the workers."""

    sent: list = []

    def __init__(self, header):
        self.header = list(header)

    def __call__(self, body):
        FakeChord.sent.append((self.header, body))


@pytest.fixture
def split_over_workers(monkeypatch):
    """The job sends its chunks as a chord; the test then plays the workers' part."""
    FakeChord.sent = []
    monkeypatch.setattr(services, "_split_over_workers", lambda chunks: chunks > 1)
    monkeypatch.setattr("celery.chord", FakeChord)
    return FakeChord.sent


def run_chunk(signature) -> str:
    export_id, attempt, kind, index = signature.args
    return services.export_chunk_run(
        export_id=export_id, attempt=attempt, kind=kind, index=index, **signature.kwargs
    )


def assemble(body) -> Export:
    export_id, attempt = body.args
    return services.export_assemble_run(export_id=export_id, attempt=attempt, **body.kwargs)


def test_chunks_in_any_order_and_run_twice_give_the_one_worker_bytes(
    study, settings, split_over_workers, django_capture_on_commit_callbacks, monkeypatch
):
    settings.EXPORT_CHUNK_ITEMS = 3
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=study, acting_user=None, raw_params={})
    ((header, body),) = split_over_workers
    assert [s.args[2:] for s in header] == [
        ("items", 0),
        ("items", 1),
        ("items", 2),
        ("items", 3),
        ("docs", 0),
        ("docs", 1),
        ("docs", 2),
        ("docs", 3),
    ]
    export.refresh_from_db()
    assert export.status == "running" and export.progress_total == 22

    for signature in reversed(header):
        assert run_chunk(signature) == "written"
    # A chunk run again (a worker died after writing it, and the broker sent it again).
    assert run_chunk(header[1]) == "written"
    export.refresh_from_db()
    assert export.progress_done == 22, "a chunk run twice counts once"
    assert ExportPart.objects.filter(export=export).count() == 8
    stored = list(export_storage._walk(export_storage.parts_folder(export.pk)))
    assert sum("items-00001" in name for name in stored) == len(
        ExportPart.objects.get(export=export, kind="items", index=1).files
    ), "the first run's part was removed once the second one was recorded"

    done = assemble(body)

    assert done.status == "succeeded", done.error
    assert not list(export_storage._walk(export_storage.parts_folder(export.pk)))
    assert not ExportPart.objects.filter(export=export).exists()
    settings.EXPORT_CHUNK_ITEMS = 1000
    monkeypatch.setattr(services, "_split_over_workers", lambda chunks: False)
    one_worker = run_export(study, django_capture_on_commit_callbacks)
    assert published(one_worker) == published(done)
    assert one_worker.sha256 == done.sha256


def test_a_failed_chunk_fails_the_job_and_publishes_nothing(
    study, settings, split_over_workers, django_capture_on_commit_callbacks
):
    settings.EXPORT_CHUNK_ITEMS = 3
    broken = Document.objects.filter(project=study).order_by("pk").last()
    broken.text = broken.text.replace("film", "fi m")  # a token with a space: not exportable
    broken.save()
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=study, acting_user=None, raw_params={"layout": "docs"})
    ((header, body),) = split_over_workers

    results = [run_chunk(s) for s in header]
    done = assemble(body)

    assert results[:4] == ["written"] * 4 and "failed" in results
    assert results[results.index("failed") + 1 :] == ["stopped"] * (
        len(results) - results.index("failed") - 1
    )
    assert done.status == "failed" and "contains whitespace" in done.error
    assert done.file_path == "" and done.sha256 == ""
    assert not list(export_storage._walk(export_storage.export_folder(export.pk)))
    assert not ExportPart.objects.filter(export=export).exists()


def test_a_cancel_while_chunks_run_stops_them(
    study, settings, split_over_workers, django_capture_on_commit_callbacks
):
    settings.EXPORT_CHUNK_ITEMS = 3
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=study, acting_user=None, raw_params={})
    ((header, body),) = split_over_workers
    run_chunk(header[0])

    services.export_cancel(export=export)
    rest = [run_chunk(s) for s in header[1:]]
    done = assemble(body)

    assert rest[0] == "cancelled" and set(rest[1:]) == {"stopped"}
    assert done.status == "cancelled" and done.file_path == ""
    assert not list(export_storage._walk(export_storage.export_folder(export.pk)))


def test_an_export_started_again_supersedes_its_earlier_chunks(
    study, settings, split_over_workers, django_capture_on_commit_callbacks
):
    """The job's task delivered again (its worker died after sending the chunks): the
    first attempt's chunks and assembly then do nothing."""
    settings.EXPORT_CHUNK_ITEMS = 3
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=study, acting_user=None, raw_params={})
    services.export_run(export_id=export.pk)
    (first_header, first_body), (second_header, second_body) = split_over_workers

    assert run_chunk(first_header[0]) == "stopped"
    for signature in second_header:
        assert run_chunk(signature) == "written"
    assert assemble(first_body).status == "running"
    assert assemble(second_body).status == "succeeded"


def test_the_sweep_removes_what_killed_work_left(
    study, settings, split_over_workers, django_capture_on_commit_callbacks, tmp_path
):
    """A worker that died mid-export left parts in the storage and a work folder on its
    disk; the periodic sweep fails the silent export and removes both."""
    import subprocess
    import sys

    settings.EXPORT_WORK_DIR = str(tmp_path / "work")
    settings.EXPORT_CHUNK_ITEMS = 3
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=study, acting_user=None, raw_params={})
    ((header, _body),) = split_over_workers
    run_chunk(header[0])
    (tmp_path / "work").mkdir(exist_ok=True)
    # A process that held a work folder and was killed.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; from pathlib import Path; from exports.work import work_folder;"
            f"f = work_folder(Path({str(tmp_path / 'work')!r}), 'export-{export.pk}-');"
            "f.__enter__(); os._exit(9)",
        ],
        check=False,
    )
    assert len(list((tmp_path / "work").iterdir())) == 1

    fresh = services.export_work_sweep()

    assert fresh["lost_exports"] == 0 and fresh["work_folders"] == 1
    assert not list((tmp_path / "work").iterdir())
    assert list(export_storage._walk(export_storage.parts_folder(export.pk))), (
        "a running export keeps its parts"
    )

    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 0
    silent = services.export_work_sweep()

    export.refresh_from_db()
    assert export.status == "failed" and "stopped" in export.error
    assert silent["lost_exports"] == 1 and silent["stored_files"] >= 1
    assert not list(export_storage._walk(export_storage.export_folder(export.pk)))
    assert not ExportPart.objects.filter(export=export).exists()


def test_the_sweep_is_on_the_beat_schedule(settings):
    import exports.tasks  # noqa: F401 - registers the task
    from config.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["export-work-sweep"]
    assert entry["task"] == "exports.tasks.export_work_sweep" and entry["task"] in app.tasks


# ---------------------------------------------------------------- shared storage


IN_MEMORY = {
    "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}


def test_import_export_download_and_run_read_nothing_but_the_storage(
    db, settings, eraser_reference, tmp_path, django_capture_on_commit_callbacks
):
    """With a storage that has no local files (an object store stands in), an upload is
    imported, exported, downloaded and scored: no job reads a path of its own machine."""
    settings.STORAGES = IN_MEMORY
    from annotate.models import Project

    project = Project.objects.create(name=f"stored {uuid.uuid4().hex[:6]}", labels=[])
    user = UserFactory(username="stored")
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    client = client_for(user)
    upload = io.BytesIO()
    with zipfile.ZipFile(upload, "w") as archive:
        for path in sorted((eraser_reference / "movies" / "data").rglob("*")):
            if path.is_file():
                archive.write(
                    path, f"movies/{path.relative_to(eraser_reference / 'movies' / 'data')}"
                )
    upload.seek(0)
    upload.name = "movies.zip"
    with django_capture_on_commit_callbacks(execute=True):
        job = client.post(
            reverse("annotate:import-list", args=[project.id]), {"file": upload}, format="multipart"
        ).data
    job = client.get(reverse("annotate:import-detail", args=[project.id, job["id"]])).data
    assert job["status"] == "succeeded", (job["error"], job["problems"][:3])

    export = run_export(
        project,
        django_capture_on_commit_callbacks,
        selection="reference",
        aggregation="reference",
    )
    download = client.get(reverse("exports:export-download", args=[project.id, export.pk]))
    body = b"".join(download.streaming_content)
    assert hashlib.sha256(body).hexdigest() == export.sha256
    assert not list((tmp_path / "media").rglob("*.zip")), "nothing on the local disk"

    oracle = (eraser_reference / "movies" / "preds" / "oracle.jsonl").read_bytes()
    with django_capture_on_commit_callbacks(execute=True):
        run = explainer_run_start(
            export=export,
            acting_user=None,
            name="oracle",
            split="val",
            upload=SimpleUploadedFile("oracle.jsonl", oracle),
        )
    run = ExplainerRun.objects.get(pk=run.pk)
    reference = json.loads((eraser_reference / "movies" / "scores" / "oracle.json").read_text())
    assert run.status == "succeeded", (run.error, run.problems[:3])
    assert run.scores["token_prf"] == reference["token_prf"]


def test_the_compose_stack_shares_the_default_storage_as_a_volume():
    """web, worker and beat mount one named volume where the default storage keeps its
    files, so a part written by one worker is read by another."""
    from pathlib import Path

    import yaml

    stack = yaml.safe_load((Path(__file__).resolve().parents[2] / "docker-compose.yml").read_text())
    mounts = set()
    for name in ("web", "worker", "beat"):
        service = stack["services"][name]
        media_root = service["environment"]["DJANGO_MEDIA_ROOT"]
        (volume,) = [v for v in service["volumes"] if v.split(":")[1] == media_root]
        mounts.add(volume)
    ((volume_name, _),) = {tuple(v.split(":")[:2]) for v in mounts}
    assert volume_name in stack["volumes"]
