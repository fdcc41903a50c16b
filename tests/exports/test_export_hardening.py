"""An export's failures (docs/design/architecture.md#when-things-fail): numbers out of range, a
heartbeat that stops, killed exports, bad targets."""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from config.exceptions import ApplicationError
from exports import selectors
from exports.models import Export, ExportStatus
from exports.params import ExportParams, export_params_from
from exports.services import export_fail_if_worker_lost, export_run
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[2]


def annotated_project(items=6):
    project = make_project(items=items, quota=1)
    worker = UserFactory()
    while (lease := assignment_next(project=project, worker=worker)) is not None:
        annotation_submit(
            assignment_id=lease.pk,
            worker=worker,
            client_uuid=uuid.uuid4(),
            rationale_sets=[
                [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 2}]
            ],
            time_spent_ms=20_000,
        )
    return project


@pytest.fixture
def researcher_client(db):
    project = annotated_project(items=2)
    user = UserFactory(username="numbers")
    ProjectMembership.objects.create(project=project, user=user, role=Role.RESEARCHER)
    return project, client_for(user)


# ---------------------------------------------------------------- bad numbers


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"seed": "1" + "0" * 26}, "seed"),
        ({"seed": "-1"}, "seed"),
        ({"splits": "ratios", "ratios": ["1e26", "0", "0"]}, "ratios"),
    ],
)
def test_a_form_post_with_a_number_out_of_range_is_a_400_that_stores_nothing(
    researcher_client, body, field
):
    """`seed=1e26` posted as a form used to be a 500 that stored the export."""
    project, client = researcher_client
    url = reverse("exports:export-list", args=[project.id])

    response = client.post(url, body, format="multipart")

    assert response.status_code in (400, 415), response.status_code
    if response.status_code == 400:
        assert field in str(response.data)
    assert Export.objects.count() == 0
    assert client.get(url).status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"seed": 2**40}, "seed"),
        ({"seed": 2**63 - 1}, "seed"),
        ({"splits": "ratios", "ratios": [1.5, -0.25, -0.25]}, "ratios"),
        ({"splits": "ratios", "ratios": [1e300, 0, 0]}, "ratios"),
        # A name longer than any variant's or user's could be is refused, not stored.
        ({"variant": "v" * 10_000}, "variant"),
        ({"annotator": "a" * 10_000}, "annotator"),
    ],
)
def test_a_json_number_out_of_range_is_a_400_that_stores_nothing(researcher_client, body, field):
    project, client = researcher_client

    response = client.post(reverse("exports:export-list", args=[project.id]), body, format="json")

    assert response.status_code == 400 and field in str(response.data)
    assert Export.objects.count() == 0


def test_the_datasheet_preview_refuses_a_seed_out_of_range(researcher_client):
    project, client = researcher_client

    response = client.get(
        reverse("exports:datasheet-preview", args=[project.id]), {"seed": "1" + "0" * 26}
    )

    assert response.status_code == 400 and "seed" in str(response.data)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"seed": 10**26}, "seed: an integer from 0 to 4294967295"),
        ({"seed": -1}, "seed: an integer from 0 to 4294967295"),
        ({"splits": "ratios", "ratios": [float("nan"), 0.5, 0.5]}, "ratios:"),
        ({"splits": "ratios", "ratios": [float("inf"), 0, 0]}, "ratios:"),
    ],
)
def test_the_service_refuses_numbers_out_of_range_too(raw, message):
    """The command and the preview reach the service without the API's serializer."""
    with pytest.raises(ApplicationError, match=message):
        export_params_from(raw)


def test_the_command_refuses_a_seed_out_of_range(db, tmp_path):
    project = annotated_project(items=2)

    with pytest.raises(CommandError, match="seed: an integer from 0 to 4294967295"):
        call_command(
            "export_eraser",
            project.name,
            str(tmp_path / "out.zip"),
            "--new-splits",
            "0.8",
            "0.1",
            "0.1",
            "--seed",
            str(10**26),
        )
    assert not list(tmp_path.iterdir())


def test_a_list_holding_an_old_bad_row_still_lists(researcher_client):
    """Rows stored before the check keep their numbers; the list and the row still answer."""
    project, client = researcher_client
    bad = Export.objects.create(
        project=project,
        params={**ExportParams().as_dict(), "seed": 10**26, "splits": "ratios"},
        status="failed",
    )

    listed = client.get(reverse("exports:export-list", args=[project.id]))
    detail = client.get(reverse("exports:export-detail", args=[project.id, bad.pk]))

    assert listed.status_code == 200 and listed.data["results"][0]["id"] == bad.pk
    assert detail.status_code == 200
    assert listed.data["results"][0]["params"]["seed"] == str(10**26)


# ---------------------------------------------------------------- heartbeat


def test_a_running_export_keeps_its_heartbeat_so_a_viewer_leaves_it_running(
    db, settings, monkeypatch
):
    """The heartbeat used to be written once, at the start: a viewer who opened the export
    after the timeout marked a healthy export failed and removed its folder."""
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 1
    project = annotated_project(items=6)
    export = Export.objects.create(project=project, params=ExportParams().as_dict())
    monkeypatch.setattr("exports.build.CHUNK", 1)  # six batches of one item
    from exports import build

    real = build._submitted_chunk
    seen = []

    def slow_batch(*args, **kwargs):
        time.sleep(0.35)  # six of them: 2.1 s of work, twice the timeout
        # A researcher opens the export page meanwhile.
        opened = selectors.export_get(project=project, export_id=export.pk)
        seen.append(export_fail_if_worker_lost(opened).status)
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "_submitted_chunk", slow_batch)

    finished = export_run(export_id=export.pk)

    assert seen == ["running"] * 6
    assert finished.status == ExportStatus.SUCCEEDED, finished.error
    assert finished.file_path


# ---------------------------------------------------------------- bad targets


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder this process cannot write in: a read-only folder, or, for root (whom
    permissions do not stop), a kernel file system that refuses new entries."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate in (folder, Path("/sys"), Path("/proc/sys")):
        try:
            probe = candidate / f"probe-{uuid.uuid4().hex}"
            probe.mkdir()
        except OSError:
            return candidate
        probe.rmdir()
    pytest.skip("no read-only folder found")


@pytest.mark.parametrize("case", ["missing parent", "parent is a file", "read-only", "tar.gz"])
def test_a_bad_target_is_refused_before_any_work(db, tmp_path, monkeypatch, case):
    project = annotated_project(items=2)
    if case == "missing parent":
        target, message = tmp_path / "nowhere" / "out.zip", "does not exist"
    elif case == "parent is a file":
        (tmp_path / "a-file").write_text("x")
        target, message = tmp_path / "a-file" / "out.zip", "is a file, not a folder"
    elif case == "read-only":
        target, message = _read_only_folder(tmp_path) / "out.zip", "cannot write in"
    else:
        target, message = tmp_path / "out.tar.gz", "ends in '.tar.gz', which is neither"
    work = []
    monkeypatch.setattr(
        "exports.services.export_build", lambda **kwargs: work.append(kwargs) or 1 / 0
    )
    before = sorted(p.name for p in tmp_path.iterdir())

    with pytest.raises(CommandError, match=message):
        call_command("export_eraser", project.name, str(target))

    assert work == []
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not target.exists()


def test_a_directory_name_with_a_dot_is_a_folder_when_it_ends_with_a_slash(db, tmp_path):
    project = annotated_project(items=2)

    call_command("export_eraser", project.name, str(tmp_path / "movies.v2") + "/")

    assert (tmp_path / "movies.v2" / "train.jsonl").is_file()


# ---------------------------------------------------------------- killed exports


def _work_folders(parent: Path) -> list[Path]:
    return [p for p in parent.iterdir() if p.is_dir()]


def test_a_killed_command_leaves_a_folder_that_the_next_start_removes(
    postgres_only, transactional_db, tmp_path
):
    """A killed `export_eraser` used to leave its temporary folder beside the target."""
    from tests.conftest import _database_url_for_worker

    project = annotated_project(items=400)
    out = tmp_path / "out"
    out.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _database_url_for_worker(),
    }
    command = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import django, time; django.setup();"
            "import exports.build as b;"
            "real = b._submitted_chunk;"
            "b.CHUNK = 1;"
            "b._submitted_chunk = lambda *a, **k: (time.sleep(0.05), real(*a, **k))[1];"
            "from django.core.management import call_command;"
            f"call_command('export_eraser', {project.name!r}, {str(out / 'first.zip')!r})",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not _work_folders(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # well into the work
    os.kill(command.pid, signal.SIGKILL)
    command.wait(timeout=30)
    assert _work_folders(out), "the killed command left its work folder"
    assert not (out / "first.zip").exists()

    call_command("export_eraser", project.name, str(out / "second.zip"))

    assert sorted(p.name for p in out.iterdir()) == ["second.zip"]
