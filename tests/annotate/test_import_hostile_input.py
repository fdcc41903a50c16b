"""Hostile imports: unsafe archive entries, byte-order marks, broken CSV rows, undecodable
bytes, NUL characters and the uploads left behind. Each is named by file, line and field,
and nothing is written."""

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import ImportJob, Item
from tests.annotate.test_apis import zipped_dataset
from tests.annotate.test_import_bad_input import problems_of
from tests.conftest import client_for


def _with_entry(dataset: bytes, name: str, content: bytes = b"x") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(dataset)) as source, zipfile.ZipFile(buffer, "w") as out:
        for info in source.infolist():
            out.writestr(info, source.read(info))
        out.writestr(zipfile.ZipInfo(name), content)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "entry", ["ds/../evil.txt", "ds/docs/../../evil", "/etc/evil", "C:/evil", "ds\\..\\evil"]
)
def test_a_zip_with_an_unsafe_entry_is_refused_whole(db, project, tmp_path, entry):
    archive = tmp_path / "ds.zip"
    archive.write_bytes(_with_entry(zipped_dataset(), entry))

    [problem] = problems_of(project, archive)

    assert (problem.file, problem.line, problem.field) == ("ds.zip", None, entry)
    assert "refused whole" in problem.message


def upload_job(project, user, name: str, content: bytes, on_commit) -> ImportJob:
    with on_commit(execute=True):
        response = client_for(user).post(
            reverse("annotate:import-list", args=[project.id]),
            {"file": SimpleUploadedFile(name, content)},
            format="multipart",
        )
    assert response.status_code == 202, response.content
    return ImportJob.objects.get(pk=response.data["id"])


def test_the_upload_api_refuses_a_zip_with_an_unsafe_entry(
    db, project, role_users, django_capture_on_commit_callbacks
):
    bad = _with_entry(zipped_dataset(), "ds/../../evil")

    job = upload_job(
        project, role_users["admin"], "ds.zip", bad, django_capture_on_commit_callbacks
    )

    assert job.status == "failed"
    assert [(p["file"], p["field"]) for p in job.problems] == [("ds.zip", "ds/../../evil")]
    assert not Item.objects.filter(project=project).exists()
