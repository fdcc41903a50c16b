"""A failed import's error and problems name the upload by the name it was sent under,
never by where the server stored it."""

from unittest import mock

from django.conf import settings

from annotate.models import JobStatus
from tests.annotate.test_import_hostile_input import upload_job


def _shown(job) -> str:
    return job.error + "".join(p["message"] + (p["file"] or "") for p in job.problems)


def test_an_upload_that_is_no_archive_is_named_by_its_upload_name(
    db, project, role_users, django_capture_on_commit_callbacks
):
    job = upload_job(
        project, role_users["admin"], "broken.zip", b"not a zip", django_capture_on_commit_callbacks
    )
    job.refresh_from_db()

    assert job.status == JobStatus.FAILED
    assert "broken.zip: not a dataset directory or a .zip archive" in _shown(job)
    assert str(settings.MEDIA_ROOT) not in _shown(job)


def test_a_crash_that_names_the_stored_file_shows_the_upload_name(
    db, project, role_users, django_capture_on_commit_callbacks
):
    def crash(job, path, progress):
        raise OSError(f"[Errno 5] Input/output error: '{path}'")

    with mock.patch("annotate.services.imports.split.upload_check", side_effect=crash):
        job = upload_job(
            project,
            role_users["admin"],
            "texts.jsonl",
            b'{"text": "A film .", "label": "pos"}\n',
            django_capture_on_commit_callbacks,
        )
    job.refresh_from_db()

    assert job.status == JobStatus.FAILED
    assert "Input/output error: 'texts.jsonl'" in job.error
    assert str(settings.MEDIA_ROOT) not in _shown(job)
