"""The Python client against a live server (pytest-django's live_server) and a real Celery
worker: every call, the errors it raises with the server's message, and progress while
it waits."""

from __future__ import annotations

import io
import zipfile

import pytest

from annotate.models import Role
from annotate.services.api_tokens import api_token_create, api_token_revoke
from tests.factories import MembershipFactory, UserFactory

rationale_workbench = pytest.importorskip("rationale_workbench")
Client = rationale_workbench.Client
ApiError = rationale_workbench.ApiError
JobFailed = rationale_workbench.JobFailed

RAW_ROWS = [
    {"id": "r1", "text": "A warm and funny film .", "label": "POS", "split": "train"},
    {"id": "r2", "text": "A dull , tired story .", "label": "NEG", "split": "test"},
    {"id": "r3", "text": "Sharp writing throughout .", "label": "POS", "split": "test"},
]


@pytest.fixture
def staff(transactional_db):
    return UserFactory(username="client-staff", is_staff=True)


@pytest.fixture
def client(live_server, live_celery, staff):
    token = api_token_create(owner=staff, name="client tests").token
    return Client(live_server.url, token, poll_interval=0.05)


def _zipped_folder(folder) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder.parent))
    return buffer.getvalue()


def test_projects_create_list_and_get(client):
    created = client.projects.create("Client project", labels=["NEG", "POS"])

    assert created["name"] == "Client project" and created["labels"] == ["NEG", "POS"]
    assert [p["id"] for p in client.projects.list()] == [created["id"]]
    assert client.projects.get(created)["id"] == created["id"]
    assert client.projects.get(created["id"])["name"] == "Client project"


def test_rows_in_memory_are_imported_and_items_listed_with_filters(client, tmp_path):
    pandas = pytest.importorskip("pandas")
    project = client.projects.create("Raw texts", labels=["NEG", "POS"])
    seen = []

    job = client.imports.upload(
        project, RAW_ROWS[:1], progress=lambda done, total, unit: seen.append((done, total, unit))
    )
    client.imports.upload(project, pandas.DataFrame(RAW_ROWS[1:2]))
    path = tmp_path / "third.jsonl"
    path.write_text(
        '{"id": "r3", "text": "Sharp writing throughout .", "label": "POS", "split": "test"}\n'
    )
    client.imports.upload(project, path)

    assert job["status"] == "succeeded" and job["source_format"] == "jsonl"
    assert seen and seen[-1][0] == seen[-1][1]  # the last report: everything done
    assert len(client.imports.list(project)) == 3
    assert {item["annotation_id"] for item in client.items.list(project)} == {"r1", "r2", "r3"}
    tests = client.items.list(project, split="test")
    assert {item["annotation_id"] for item in tests} == {"r2", "r3"}
    assert [i["annotation_id"] for i in client.items.list(project, split="test", label="NEG")] == [
        "r2"
    ]


def test_one_import_one_item_and_one_export_are_read_by_id(client):
    project = client.projects.create("Read by id", labels=["NEG", "POS"])
    job = client.imports.upload(project, RAW_ROWS, wait=False)

    finished = client.imports.wait(project, job)
    first = next(client.items.iter(project, ordering="annotation_id"))
    export = client.exports.start(project, selection="reference", aggregation="reference")

    assert client.imports.get(project, job)["status"] == finished["status"] == "succeeded"
    assert first["annotation_id"] == "r1"
    item = client.items.get(project, first)
    assert (item["item"]["id"], item["item"]["annotation_id"]) == (first["id"], "r1")
    assert item["item"]["texts"] and item["annotations"] == []
    assert client.exports.get(project, export)["id"] == export["id"]
    assert client.exports.wait(project, export)["status"] == "succeeded"


def test_a_datasets_dataset_is_imported(client):
    datasets = pytest.importorskip("datasets")
    project = client.projects.create("From a dataset", labels=["NEG", "POS"])

    job = client.imports.upload(project, datasets.Dataset.from_list(RAW_ROWS))

    assert job["status"] == "succeeded"
    assert len(client.items.list(project)) == 3


def test_a_progress_bar_is_drawn_while_waiting(client, capsys):
    pytest.importorskip("tqdm")
    project = client.projects.create("With a bar", labels=["NEG", "POS"])

    client.imports.upload(project, RAW_ROWS, progress=True)

    assert "import" in capsys.readouterr().err


def test_eraser_data_is_exported_downloaded_and_an_explainer_scored(
    client, eraser_reference, tmp_path
):
    project = client.projects.create("Movies", labels=[])
    archive = tmp_path / "movies.zip"
    archive.write_bytes(_zipped_folder(eraser_reference / "movies" / "data"))
    reports = []

    job = client.imports.upload(project, archive, progress=lambda *report: reports.append(report))
    export = client.exports.start(project, selection="reference", aggregation="reference")
    finished = client.exports.wait(project, export, progress=lambda *r: reports.append(r))
    saved = client.exports.download(project, export, tmp_path / "export.zip")
    run = client.runs.start(project, export, "random baseline", explainer="random")
    scored = client.runs.wait(project, export, run)

    assert job["summary"] and reports
    assert finished["status"] == "succeeded" and finished["download_url"]
    with zipfile.ZipFile(saved) as downloaded:
        assert any(name.endswith("test.jsonl") for name in downloaded.namelist())
    assert scored["status"] == "succeeded"
    assert 0 <= scored["scores"]["classification_scores"]["accuracy"] <= 1
    assert client.runs.results(project, export, run)["id"] == run["id"]
    assert [r["id"] for r in client.runs.list(project, export)] == [run["id"]]
    assert [e["id"] for e in client.exports.list(project)] == [export["id"]]


def test_the_agreement_report_is_refreshed_and_read(client):
    project = client.projects.create("Agreement", labels=["NEG", "POS"])
    client.imports.upload(project, RAW_ROWS)

    report = client.agreement.refresh(project, progress=lambda *r: None)

    assert report == client.agreement.get(project)
    assert isinstance(report, dict) and report


# ---------------------------------------------------------------- errors


def test_a_refusal_raises_with_the_servers_status_and_message(client, live_server):
    with pytest.raises(ApiError) as missing:
        client.projects.get(999_999)
    with pytest.raises(ApiError) as invalid:
        client.projects.create("")

    assert missing.value.status == 404
    assert missing.value.message == "project not found"
    assert invalid.value.status == 400
    assert "name" in invalid.value.message


def test_a_failed_import_raises_with_its_problems(client):
    project = client.projects.create("Bad rows", labels=["NEG", "POS"])

    with pytest.raises(JobFailed) as failed:
        client.imports.upload(project, [{"id": "x1", "label": "POS"}])

    assert failed.value.job["status"] == "failed"
    assert failed.value.job["problems"]


def test_a_revoked_token_and_a_read_only_one_are_refused_by_name(live_server, live_celery, staff):
    issued = api_token_create(owner=staff, name="soon revoked")
    reader = Client(live_server.url, api_token_create(owner=staff, name="r", read_only=True).token)
    revoked = Client(live_server.url, issued.token)
    api_token_revoke(owner=staff, token_id=issued.api_token.pk)

    with pytest.raises(ApiError) as unauthorised:
        revoked.projects.list()
    with pytest.raises(ApiError) as read_only:
        reader.projects.create("Not from a reader")

    assert unauthorised.value.status == 401
    assert unauthorised.value.message == "this API token was revoked"
    assert read_only.value.status == 403
    assert read_only.value.message == "this token is read-only"
    assert reader.projects.list() == []


def test_a_project_limited_token_lists_only_its_projects(live_server, live_celery, staff):
    mine = MembershipFactory(user=staff, role=Role.ADMIN).project
    other = MembershipFactory(user=staff, role=Role.ADMIN).project
    limited = Client(
        live_server.url, api_token_create(owner=staff, name="l", project_ids=[mine.pk]).token
    )

    assert [p["id"] for p in limited.projects.list()] == [mine.pk]
    with pytest.raises(ApiError) as hidden:
        limited.projects.get(other.pk)
    assert hidden.value.status == 404
