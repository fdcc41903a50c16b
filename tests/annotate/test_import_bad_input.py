"""Each bad input: a named error (file, line, field) and an unchanged database."""

import json
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.services import dataset_import
from rationale_metrics.problems import DataValidationError

GOOD_DOCS = {"d1": "The film was great .\nI loved it .", "d2": "Bad plot .\nWorse acting ."}


def instance(aid, docid="d1", start=0, end=2, **overrides):
    record = {
        "annotation_id": aid,
        "classification": "POS",
        "docids": None,
        "evidences": [
            [
                {
                    "docid": docid,
                    "start_token": start,
                    "end_token": end,
                    "start_sentence": 0,
                    "end_sentence": 1,
                    "text": "x",
                }
            ]
        ],
        "query": None,
        "query_type": None,
    }
    record.update(overrides)
    return record


def write_dataset(root: Path, lines_by_split=None, docs=GOOD_DOCS, layout="docs.jsonl") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if layout == "docs.jsonl":
        (root / "docs.jsonl").write_text(
            "".join(json.dumps({"docid": k, "document": v}) + "\n" for k, v in docs.items())
        )
    else:
        (root / "docs").mkdir()
        for docid, text in docs.items():
            (root / "docs" / docid).write_text(text)
    lines_by_split = lines_by_split or {
        "train": [json.dumps(instance("a1")), json.dumps(instance("a2", "d2"))],
        "val": [],
        "test": [],
    }
    for split, lines in lines_by_split.items():
        (root / f"{split}.jsonl").write_text("".join(line + "\n" for line in lines))
    return root


def table_counts() -> dict[str, int]:
    return {
        model._meta.label: model.objects.count()
        for model in apps.get_app_config("annotate").get_models()
    }


def problems_of(project, path) -> list:
    before = table_counts()
    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)
    assert table_counts() == before, "a failed import must write nothing"
    return caught.value.problems


def test_the_good_dataset_imports(db, project, tmp_path):
    summary = dataset_import(project=project, path=write_dataset(tmp_path / "ok"))

    assert summary.items_created == 2


def test_malformed_json_line(db, project, tmp_path):
    root = write_dataset(
        tmp_path / "d", {"train": [json.dumps(instance("a1")), '{"annotation_id": "a2", ']}
    )

    [problem] = problems_of(project, root)

    assert (problem.file, problem.line) == ("train.jsonl", 2)
    assert "malformed JSON" in problem.message


def test_span_past_the_end_of_its_document(db, project, tmp_path):
    root = write_dataset(tmp_path / "d", {"val": [json.dumps(instance("a1", end=99))]})

    [problem] = problems_of(project, root)

    assert (problem.file, problem.line, problem.field) == (
        "val.jsonl",
        1,
        "evidences[0][0].end_token",
    )
    assert "past the end of document 'd1', which has 9 tokens" in problem.message


def test_unknown_docid(db, project, tmp_path):
    root = write_dataset(
        tmp_path / "d", {"test": [json.dumps(instance("a1", docids=["nope"], docid="d1"))]}
    )

    [problem] = problems_of(project, root)

    assert (problem.file, problem.line, problem.field) == ("test.jsonl", 1, "docids[0]")
    assert "unknown docid 'nope'" in problem.message


def test_duplicate_annotation_id_across_splits(db, project, tmp_path):
    root = write_dataset(
        tmp_path / "d",
        {"train": [json.dumps(instance("a1"))], "val": ["", json.dumps(instance("a1", "d2"))]},
    )

    [problem] = problems_of(project, root)

    assert (problem.file, problem.line, problem.field) == ("val.jsonl", 2, "annotation_id")
    assert "first at train.jsonl:1" in problem.message


def test_both_docs_folder_and_docs_jsonl(db, project, tmp_path):
    root = write_dataset(tmp_path / "d", layout="docs")
    (root / "docs.jsonl").write_text(json.dumps({"docid": "d1", "document": "x"}) + "\n")

    [problem] = problems_of(project, root)

    assert problem.field == "docs"
    assert "both docs/ and docs.jsonl" in problem.message


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"annotation_id": 1.5}, "annotation_id"),
        ({"annotation_id": True}, "annotation_id"),
        ({"classification": 3}, "classification"),
        ({"query": ["q"]}, "query"),
        ({"docids": "d1"}, "docids"),
        ({"evidences": {"docid": "d1"}}, "evidences"),
        (
            {"evidences": [[{"docid": "d1", "start_token": "0", "end_token": 1}]]},
            "evidences[0][0].start_token",
        ),
    ],
)
def test_wrongly_typed_field(db, project, tmp_path, overrides, field):
    root = write_dataset(tmp_path / "d", {"train": [json.dumps(instance("a1", **overrides))]})

    problems = problems_of(project, root)

    assert [(p.file, p.line, p.field) for p in problems] == [("train.jsonl", 1, field)]


def test_every_problem_is_reported_in_one_pass(db, project, tmp_path):
    root = write_dataset(
        tmp_path / "d",
        {
            "train": ["[1, 2]", json.dumps(instance("a1", end=50))],
            "val": [json.dumps(instance("a2", docid="zz"))],
        },
    )

    problems = problems_of(project, root)

    assert [(p.file, p.line) for p in problems] == [
        ("train.jsonl", 1),
        ("train.jsonl", 2),
        ("val.jsonl", 1),
    ]


def test_empty_dataset(db, project, tmp_path):
    root = write_dataset(tmp_path / "d", {"train": [], "val": [], "test": []})

    [problem] = problems_of(project, root)

    assert "the dataset is empty" in problem.message


def test_empty_document_file(db, project, tmp_path):
    root = write_dataset(tmp_path / "d", docs={**GOOD_DOCS, "blank": "\n  \n"}, layout="docs")

    [problem] = problems_of(project, root)

    assert problem.file == "docs/blank"
    assert "no tokens" in problem.message


def test_empty_docs_jsonl(db, project, tmp_path):
    root = write_dataset(tmp_path / "d", docs={})

    problems = problems_of(project, root)

    assert ("docs.jsonl", "file is empty: it lists no documents") in [
        (p.file, p.message) for p in problems
    ]


def test_empty_raw_text_file(db, project, tmp_path):
    path = tmp_path / "texts.jsonl"
    path.write_text("")

    [problem] = problems_of(project, path)

    assert (problem.file, problem.message) == ("texts.jsonl", "file is empty: it has no rows")


def test_a_50_mb_line_is_reported_without_loading_it(db, project, tmp_path, settings):
    settings.IMPORT_MAX_LINE_BYTES = 16 * 1024 * 1024
    root = write_dataset(tmp_path / "d")
    huge = json.dumps(instance("a3", query="q" * (50 * 1024 * 1024)))
    with open(root / "train.jsonl", "a") as handle:
        handle.write(huge + "\n")
        handle.write(json.dumps(instance("a4")) + "\n")

    [problem] = problems_of(project, root)

    assert (problem.file, problem.line) == ("train.jsonl", 3)
    assert "over the limit of 16777216 bytes" in problem.message


def test_not_a_dataset(db, project, tmp_path):
    path = tmp_path / "notes.zip"
    path.write_text("not a zip")

    [problem] = problems_of(project, path)

    assert "not a dataset directory or a .zip archive" in problem.message


def test_reimport_with_changed_content_is_refused(db, project, tmp_path):
    dataset_import(project=project, path=write_dataset(tmp_path / "first"))
    changed = write_dataset(
        tmp_path / "second",
        {"train": [json.dumps(instance("a1", classification="NEG"))], "val": [], "test": []},
    )

    [problem] = problems_of(project, changed)

    assert (problem.file, problem.line, problem.field) == ("train.jsonl", 1, "annotation_id")
    assert "already exists in this project with other content" in problem.message


def test_label_outside_the_project_label_set(db, project, tmp_path):
    project.labels = ["NEG"]
    project.save()

    problems = problems_of(project, write_dataset(tmp_path / "d"))

    assert {(p.file, p.field) for p in problems} == {("train.jsonl", "classification")}


def test_command_prints_the_report_and_fails(db, project, tmp_path):
    root = write_dataset(tmp_path / "d", {"val": [json.dumps(instance("a1", end=99))]})

    with pytest.raises(CommandError) as caught:
        call_command("import_eraser", project.name, str(root))

    assert "nothing was imported" in str(caught.value)
    assert "val.jsonl:1: evidences[0][0].end_token" in str(caught.value)


def test_command_imports(db, project, tmp_path, capsys):
    call_command("import_eraser", project.name, str(write_dataset(tmp_path / "d")))

    assert "2 items (0 already present)" in capsys.readouterr().out


def test_command_unknown_project(db, tmp_path):
    with pytest.raises(CommandError, match="no project named 'ghost'"):
        call_command("import_eraser", "ghost", str(tmp_path))


def test_corrupt_zip_member_is_reported(db, project, tmp_path):
    import zipfile

    archive = tmp_path / "ds.zip"
    root = write_dataset(tmp_path / "d")
    with zipfile.ZipFile(archive, "w") as zf:
        for path in root.iterdir():
            zf.write(path, path.name)
    data = archive.read_bytes().replace(b'"a2"', b'"zz"')
    archive.write_bytes(data)

    [problem] = problems_of(project, archive)

    assert problem.file == "ds.zip"
    assert "the archive is corrupt" in problem.message
