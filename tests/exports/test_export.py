"""ERASER export: round trip, both readers, every option, bad input, cancellation, permissions."""

import hashlib
import json
import uuid
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.models import Document, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next, dataset_import
from config.exceptions import ApplicationError
from exports.models import Export
from exports.params import ExportParams, export_params_from
from exports.services import export_build, export_cancel, export_run, export_start
from rationale_metrics.eraser import read_eraser_dataset
from rationale_metrics.eraser_writer import DirectorySink
from rationale_metrics.sources import DirectorySource
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory

SPLITS = ("train", "val", "test")


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize(
    ("slice_dir", "layout"),
    [("movies/data", "docs"), ("multirc/data", "docs"), ("movies_docsjsonl", "docs.jsonl")],
)
def test_round_trip_reproduces_the_dataset(db, eraser_reference, tmp_path, slice_dir, layout):
    source = eraser_reference / slice_dir
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=source)

    params = ExportParams(
        selection="reference", aggregation="reference", layout=layout, archive="directory"
    )
    export_build(project=project, params=params, sink=DirectorySink(tmp_path / "out"))

    for split in SPLITS:
        assert lines(tmp_path / "out" / f"{split}.jsonl") == lines(source / f"{split}.jsonl"), split
    original = read_eraser_dataset(DirectorySource(source))
    exported = read_eraser_dataset(DirectorySource(tmp_path / "out"))
    assert set(exported.documents) == set(original.documents)
    for docid, doc in original.documents.items():
        assert exported.documents[docid].sentences == doc.sentences, docid
    for split in SPLITS:
        for a, b in zip(original.splits[split], exported.splits[split], strict=True):
            assert type(a.annotation_id) is type(b.annotation_id)


def test_both_readers_load_the_output_identically(db, eraser_reference, tmp_path):
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=eraser_reference / "movies" / "data")

    for layout in ("docs", "docs.jsonl"):
        params = ExportParams(
            selection="reference", aggregation="reference", layout=layout, archive="directory"
        )
        export_build(project=project, params=params, sink=DirectorySink(tmp_path / layout))
    folder = read_eraser_dataset(DirectorySource(tmp_path / "docs"))
    jsonl = read_eraser_dataset(DirectorySource(tmp_path / "docs.jsonl"))

    assert {d: doc.sentences for d, doc in folder.documents.items()} == {
        d: doc.sentences for d, doc in jsonl.documents.items()
    }
    text = (tmp_path / "docs.jsonl" / "docs.jsonl").read_text()
    for line in text.splitlines():
        document = json.loads(line)["document"]
        assert "\n\n" not in document and "  " not in document
        assert not document.startswith((" ", "\n")) and not document.endswith((" ", "\n"))


@pytest.fixture
def annotated(db):
    """Three annotators under variant 'a' and one under 'b' on two items, known highlights."""
    project = make_project(
        items=2, variants=("a", "b"), quota=3, text="w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ."
    )
    highlights = {"u1": [(0, 3)], "u2": [(1, 4)], "u3": [(2, 3), (6, 8)], "u4": [(9, 10)]}
    workers = {}
    for name in ("u1", "u2", "u3", "u4"):
        workers[name] = UserFactory(username=name)
    from annotate.models import InstructionVariant, WorkerVariantBinding

    variants = {v.name: v for v in InstructionVariant.objects.filter(project=project)}
    for name, variant in (("u1", "a"), ("u2", "a"), ("u3", "a"), ("u4", "b")):
        WorkerVariantBinding.objects.create(
            project=project, worker=workers[name], variant=variants[variant], seed=0
        )
    for name, spans in highlights.items():
        while (lease := assignment_next(project=project, worker=workers[name])) is not None:
            docid = lease.item.documents.get().docid
            sets = [[{"docid": docid, "start_token": s, "end_token": e} for s, e in spans]]
            if name == "u3":
                sets = [
                    [{"docid": docid, "start_token": 2, "end_token": 3}],
                    [{"docid": docid, "start_token": 6, "end_token": 8}],
                ]
            annotation_submit(
                assignment_id=lease.pk,
                worker=workers[name],
                client_uuid=uuid.uuid4(),
                rationale_sets=sets,
                time_spent_ms=1000,
            )
    return project


def evidence_sets(out: Path) -> list:
    line = lines(out / "train.jsonl")[0]
    return [[(e["start_token"], e["end_token"]) for e in group] for group in line["evidences"]]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"aggregation": "majority", "variant": "a"}, [[(1, 3)]]),  # tokens 1, 2 chosen by 2 of 3
        ({"aggregation": "union", "variant": "a"}, [[(0, 4), (6, 8)]]),
        ({"aggregation": "annotator", "annotator": "u3"}, [[(2, 3)], [(6, 8)]]),
        ({"aggregation": "all_sets", "variant": "b"}, [[(9, 10)]]),
        (
            {"aggregation": "majority"},
            [[(1, 3)]],
        ),  # 4 annotators: tokens need 3 votes -> only token 2
    ],
)
def test_each_aggregation(annotated, tmp_path, raw, expected):
    params = export_params_from({"archive": "directory", **raw})

    export_build(project=annotated, params=params, sink=DirectorySink(tmp_path / "out"))

    got = evidence_sets(tmp_path / "out")
    if raw == {"aggregation": "majority"}:
        expected = [[(2, 3)]]
    assert got == expected
    record = lines(tmp_path / "out" / "train.jsonl")[0]
    ev = record["evidences"][0][0]
    assert ev["text"] == " ".join(f"w{t}" for t in range(ev["start_token"], ev["end_token"]))
    assert (ev["start_sentence"], ev["end_sentence"]) == (0, 1)
    assert list(record) == sorted(record)


def test_new_splits_are_seeded_and_disjoint_by_document(db, eraser_reference, tmp_path):
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=eraser_reference / "multirc" / "data")
    raw = {
        "selection": "reference",
        "aggregation": "reference",
        "splits": "ratios",
        "ratios": [0.6, 0.2, 0.2],
        "seed": 3,
        "archive": "directory",
    }

    export_build(
        project=project, params=export_params_from(raw), sink=DirectorySink(tmp_path / "a")
    )
    export_build(
        project=project, params=export_params_from(raw), sink=DirectorySink(tmp_path / "b")
    )

    docs_by_split = {}
    for split in SPLITS:
        assert lines(tmp_path / "a" / f"{split}.jsonl") == lines(tmp_path / "b" / f"{split}.jsonl")
        docs_by_split[split] = {
            e["docid"]
            for line in lines(tmp_path / "a" / f"{split}.jsonl")
            for g in line["evidences"]
            for e in g
        }
    assert not (docs_by_split["train"] & docs_by_split["val"]) and not (
        docs_by_split["train"] & docs_by_split["test"]
    )
    assert not (docs_by_split["val"] & docs_by_split["test"])
    assert sum(len(lines(tmp_path / "a" / f"{s}.jsonl")) for s in SPLITS) == 200


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"aggregation": "mode"}, "aggregation: 'mode' is not one of"),
        ({"ratios": [0.5, 0.5, 0.5], "splits": "ratios"}, "sum to 1"),
        ({"aggregation": "annotator"}, "annotator: name the annotator"),
        ({"aggregation": "reference"}, "use selection 'reference'"),
        ({"colour": "red"}, "unknown parameter(s): colour"),
    ],
)
def test_bad_parameters_are_named(raw, message):
    with pytest.raises(ApplicationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        export_params_from(raw)


def test_unknown_variant_annotator_and_empty_selection(annotated, tmp_path):
    for raw, message in (
        ({"variant": "zz"}, "no variant named 'zz'"),
        ({"aggregation": "annotator", "annotator": "ghost"}, "no user named 'ghost'"),
    ):
        with pytest.raises(ApplicationError, match=message):
            export_build(
                project=annotated,
                params=export_params_from(raw),
                sink=DirectorySink(tmp_path / "x"),
            )
    with pytest.raises(ApplicationError, match="nothing to export"):
        export_build(
            project=make_project(items=1), params=ExportParams(), sink=DirectorySink(tmp_path / "y")
        )


def test_items_without_a_split_need_new_splits(db, tmp_path):
    project = make_project(items=1, quota=1)
    project.items.update(split="")
    worker = UserFactory()
    lease = assignment_next(project=project, worker=worker)
    annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": "d0", "start_token": 0, "end_token": 1}]],
    )

    with pytest.raises(ApplicationError, match="have no split; choose new splits"):
        export_build(project=project, params=ExportParams(), sink=DirectorySink(tmp_path / "x"))


def test_the_job_publishes_a_zip_with_its_checksum_and_datasheet(
    annotated, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=annotated, acting_user=None, raw_params={"variant": "a"})
    export.refresh_from_db()

    assert export.status == "succeeded", export.error
    path = Path(settings.MEDIA_ROOT) / export.file_path
    assert hashlib.sha256(path.read_bytes()).hexdigest() == export.sha256
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        sheet = json.loads(archive.read(next(n for n in names if n.endswith("datasheet.json"))))
        markdown = archive.read(next(n for n in names if n.endswith("datasheet.md"))).decode()
    assert {n.split("/", 1)[1] for n in names} >= {
        "train.jsonl",
        "val.jsonl",
        "test.jsonl",
        "datasheet.md",
        "datasheet.json",
        "docs/d0",
    }
    assert sheet["instructions"][0]["text"] == "Highlight words (a)."
    assert sheet["workers"]["per_variant"] == {"a": 3}
    assert sheet["annotation"]["time_spent_ms"]["median"] == 1000
    assert sheet["agreement"]["per_variant"]["a"]["items"] == 2
    assert sheet["processing"]["export_parameters"]["variant"] == "a"
    assert "Highlight words (a)." in markdown and "## Agreement" in markdown
    assert not list((Path(settings.MEDIA_ROOT) / "exports" / "tmp").glob("*"))


def test_a_failed_job_leaves_no_file(db, settings, django_capture_on_commit_callbacks):
    project = make_project(items=1, quota=1, text="fine text here .")
    worker = UserFactory()
    lease = assignment_next(project=project, worker=worker)
    annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": "d0", "start_token": 0, "end_token": 1}]],
    )
    doc = Document.objects.get(project=project)
    doc.text = "fine te t here ."  # a token now contains a space: not exportable
    doc.save()

    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=project, acting_user=None, raw_params={})
    export.refresh_from_db()

    assert export.status == "failed" and "contains whitespace" in export.error
    assert export.file_path == ""
    assert not [p for p in (Path(settings.MEDIA_ROOT) / "exports").rglob("*") if p.is_file()]


def test_cancelling_a_running_export_removes_its_work(annotated, settings, monkeypatch):
    monkeypatch.setattr("exports.services.CHUNK", 1)
    export = Export.objects.create(
        project=annotated, params=ExportParams().as_dict(), status="running", cancel_requested=True
    )

    export = export_run(export_id=export.pk)

    assert export.status == "cancelled" and export.file_path == ""
    assert not [p for p in (Path(settings.MEDIA_ROOT) / "exports").rglob("*") if p.is_file()]


def test_cancelling_a_pending_export_and_a_finished_one(annotated):
    pending = Export.objects.create(project=annotated, params=ExportParams().as_dict())
    assert export_cancel(export=pending).status == "cancelled"
    assert export_run(export_id=pending.pk).status == "cancelled"
    with pytest.raises(ApplicationError, match="only pending or running"):
        export_cancel(export=pending)


def test_query_count_stays_flat_as_items_grow(db, tmp_path, django_assert_max_num_queries):
    for n_items in (4, 24):
        project = make_project(items=n_items, quota=1)
        worker = UserFactory()
        while (lease := assignment_next(project=project, worker=worker)) is not None:
            annotation_submit(
                assignment_id=lease.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=[
                    [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 2}]
                ],
            )
        with django_assert_max_num_queries(20):
            export_build(
                project=project,
                params=ExportParams(archive="directory"),
                sink=DirectorySink(tmp_path / f"n{n_items}"),
            )


def test_command_writes_a_zip_and_reports_bad_input(annotated, tmp_path, capsys):
    call_command("export_eraser", annotated.name, str(tmp_path / "out.zip"), "--variant", "a")

    assert zipfile.is_zipfile(tmp_path / "out.zip")
    assert "exported train 2, val 0, test 0 instances" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no variant named 'zz'"):
        call_command("export_eraser", annotated.name, str(tmp_path / "bad"), "--variant", "zz")
    assert not (tmp_path / "bad").exists()
    with pytest.raises(CommandError, match="already exists"):
        call_command("export_eraser", annotated.name, str(tmp_path / "out.zip"))


@pytest.mark.parametrize(
    ("role", "code"),
    [
        (Role.ADMIN, 202),
        (Role.RESEARCHER, 202),
        (Role.REVIEWER, 403),
        (Role.ANNOTATOR, 403),
        (None, 404),
    ],
)
def test_export_api_permissions(annotated, role, code):
    user = UserFactory(username=f"api-{role}")
    if role:
        ProjectMembership.objects.create(project=annotated, user=user, role=role)
    client = client_for(user)

    response = client.post(
        reverse("exports:export-list", args=[annotated.id]), {"variant": "a"}, format="json"
    )

    assert response.status_code == code
    assert client.get(reverse("exports:export-list", args=[annotated.id])).status_code == (
        200 if code == 202 else code
    )


def test_download_returns_the_file_with_its_checksum(annotated, django_capture_on_commit_callbacks):
    user = UserFactory(username="res")
    ProjectMembership.objects.create(project=annotated, user=user, role=Role.RESEARCHER)
    client = client_for(user)
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            reverse("exports:export-list", args=[annotated.id]), {"variant": "a"}, format="json"
        ).data
    detail = client.get(reverse("exports:export-detail", args=[annotated.id, created["id"]])).data

    assert detail["status"] == "succeeded", detail
    response = client.get(detail["download_url"])

    body = b"".join(response.streaming_content)
    assert (
        response.status_code == 200
        and hashlib.sha256(body).hexdigest() == detail["sha256"] == response["X-Checksum-SHA256"]
    )
    outsider = client_for(UserFactory(username="nosy"))
    assert outsider.get(detail["download_url"]).status_code == 404


def test_bad_api_parameters_are_a_400(annotated):
    user = UserFactory(username="res2")
    ProjectMembership.objects.create(project=annotated, user=user, role=Role.RESEARCHER)

    response = client_for(user).post(
        reverse("exports:export-list", args=[annotated.id]),
        {"aggregation": "annotator"},
        format="json",
    )

    assert (
        response.status_code == 400 and "annotator: name the annotator" in response.data["detail"]
    )
    assert Export.objects.count() == 0
