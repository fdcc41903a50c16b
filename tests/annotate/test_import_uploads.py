"""Uploaded import files: deleted when the import is rejected, kept for
IMPORT_UPLOAD_RETENTION_DAYS when it is accepted, then deleted by import_uploads_expire
(a command, and a daily task on Celery beat)."""

from datetime import timedelta
from importlib import import_module
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.models import ImportJob, JobStatus
from tests.annotate.test_apis import zipped_dataset
from tests.annotate.test_import_hostile_input import upload_job


def stored(job: ImportJob) -> Path | None:
    job.refresh_from_db()
    return Path(job.upload.path) if job.upload else None


def test_a_rejected_upload_is_deleted(db, project, role_users, django_capture_on_commit_callbacks):
    bad = b'{"text": "ok", "label": "a"}\n{"text": 5, "label": "a"}\n'

    job = upload_job(
        project, role_users["admin"], "t.jsonl", bad, django_capture_on_commit_callbacks
    )

    assert job.status == "failed"
    assert stored(job) is None
    assert not list((Path(settings.MEDIA_ROOT) / "imports").rglob("*.jsonl"))


def test_an_upload_whose_import_crashed_is_deleted(
    db, project, role_users, django_capture_on_commit_callbacks, monkeypatch
):
    def crash(*args, **kwargs):
        raise RuntimeError("disk on fire")

    # The job's check of the whole dataset, before its chunks (imports/check.py).
    monkeypatch.setattr(import_module("annotate.services.imports.check"), "eraser_checked", crash)

    job = upload_job(
        project, role_users["admin"], "ds.zip", zipped_dataset(), django_capture_on_commit_callbacks
    )

    assert job.status == "failed"
    assert stored(job) is None


def test_an_accepted_upload_is_kept(db, project, role_users, django_capture_on_commit_callbacks):
    # Built once: a zip's entries carry the time they were written, so two builds a second
    # apart differ.
    upload = zipped_dataset()
    job = upload_job(
        project, role_users["admin"], "ds.zip", upload, django_capture_on_commit_callbacks
    )

    assert job.status == "succeeded"
    assert stored(job).read_bytes() == upload


def test_no_retention_deletes_an_accepted_upload_at_once(
    db, project, role_users, django_capture_on_commit_callbacks, settings
):
    settings.IMPORT_UPLOAD_RETENTION_DAYS = 0

    job = upload_job(
        project, role_users["admin"], "ds.zip", zipped_dataset(), django_capture_on_commit_callbacks
    )

    assert job.status == "succeeded"
    assert stored(job) is None


def finished_job(project, status: str, days_ago: float) -> ImportJob:
    job = ImportJob(project=project, source_format="jsonl", source_name="t.jsonl", status=status)
    job.upload.save("t.jsonl", ContentFile(b"{}\n"), save=False)
    job.finished_at = timezone.now() - timedelta(days=days_ago)
    job.save()
    return job


def test_uploads_past_their_retention_are_expired(db, project, settings, capsys):
    settings.IMPORT_UPLOAD_RETENTION_DAYS = 30
    old = finished_job(project, JobStatus.SUCCEEDED, days_ago=31)
    recent = finished_job(project, JobStatus.SUCCEEDED, days_ago=29)
    # Marked failed after its worker was lost: its upload was never deleted.
    lost = finished_job(project, JobStatus.FAILED, days_ago=0.01)
    running = finished_job(project, JobStatus.RUNNING, days_ago=40)
    paths = {job.pk: stored(job) for job in (old, recent, lost, running)}

    call_command("import_uploads_expire")

    assert "2 uploads deleted" in capsys.readouterr().out
    assert stored(old) is None and not paths[old.pk].exists()
    assert stored(lost) is None and not paths[lost.pk].exists()
    assert stored(recent) == paths[recent.pk] and paths[recent.pk].exists()
    assert stored(running) == paths[running.pk] and paths[running.pk].exists()


def test_beat_sweeps_expired_uploads_daily(db, project, settings):
    from annotate.tasks import import_uploads_sweep

    [entry] = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == import_uploads_sweep.name
    ]
    assert entry["schedule"] == 24 * 60 * 60
    settings.IMPORT_UPLOAD_RETENTION_DAYS = 30
    old = finished_job(project, JobStatus.SUCCEEDED, days_ago=31)

    assert import_uploads_sweep.delay().get() == 1
    assert stored(old) is None


def test_an_upload_over_the_limit_is_refused_naming_it_and_storing_nothing(
    db, project, role_users, settings
):
    settings.IMPORT_MAX_UPLOAD_BYTES = 64
    client = APIClient()
    client.force_authenticate(role_users["admin"])
    body = b'{"text": "a long enough line to pass the limit", "label": "a"}\n' * 2

    response = client.post(
        f"/api/projects/{project.pk}/imports/",
        {"file": SimpleUploadedFile("big.jsonl", body)},
        format="multipart",
    )

    assert response.status_code == 413
    assert response.json()["detail"] == (
        f"big.jsonl: {len(body)} bytes is over the upload limit of 64 bytes"
    )
    assert response.json()["limit_bytes"] == 64
    assert not ImportJob.objects.exists()
    assert not (Path(settings.MEDIA_ROOT) / "imports").exists()
