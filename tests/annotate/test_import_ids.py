"""An imported id that no column can hold or no export can write as a file name is refused
while the upload is checked, naming the file, line and field, and nothing is written; the
export applies the same rule (rationale_metrics/file_names.py) before it writes."""

import json

import numpy as np
import pytest

from rationale_metrics.eraser_writer import DocumentNotExportable, ExportDocument
from rationale_metrics.file_names import file_name_problem
from tests.annotate.test_import_bad_input import GOOD_DOCS, instance, problems_of, write_dataset
from tests.factories import ProjectFactory

UNWRITABLE = [
    "../x",
    "C:/x",
    "C:\\x",
    "/x",
    "a\\b",
    "x\x00y",
    "CON",
    "nul.txt",
    "lpt1",
    "x.",
    "x ",
    "..",
    "what?",
    "é" * 128,  # 128 characters, 256 bytes
]
WRITABLE = [
    "d1",
    "negR_000.txt",
    "12:a",
    "p:a",
    "Fiction-stories.txt:0:0",
    "x" * 255,
    "connect",
    "é",
]


@pytest.mark.parametrize("name", UNWRITABLE)
def test_the_rule_refuses_names_some_system_cannot_write(name):
    assert file_name_problem(name) is not None


@pytest.mark.parametrize("name", WRITABLE)
def test_the_rule_takes_the_names_real_datasets_use(name):
    assert file_name_problem(name) is None


def test_the_export_refuses_by_the_same_rule():
    document = ExportDocument("../x", ["a"], np.array([[0, 1]]))

    with pytest.raises(DocumentNotExportable, match="cannot be a file name"):
        document.check()


def _raw_file(tmp_path, ids) -> str:
    path = tmp_path / "texts.jsonl"
    path.write_text(
        "".join(json.dumps({"id": i, "text": "A good film .", "label": "pos"}) + "\n" for i in ids)
    )
    return path


def test_a_raw_text_id_of_100000_characters_is_refused_on_its_line(db, project, tmp_path):
    found = problems_of(project, _raw_file(tmp_path, ["ok", "x" * 100_000]))

    assert [(p.file, p.line, p.field) for p in found] == [("texts.jsonl", 2, "id")]
    assert "100000 characters long, over the limit of 255" in found[0].message


@pytest.mark.parametrize("item_id", ["../x", "C:/x", "/x", "CON", "é" * 128])
def test_a_raw_text_id_no_export_can_write_is_refused_with_the_reason(
    db, project, tmp_path, item_id
):
    found = problems_of(project, _raw_file(tmp_path, [item_id]))

    assert [(p.file, p.line, p.field) for p in found] == [("texts.jsonl", 1, "id")]
    assert "cannot name its document" in found[0].message


def test_an_eraser_docid_no_export_can_write_is_refused_on_its_line(db, project, tmp_path):
    docs = {**GOOD_DOCS, "../evil": "Some words ."}
    found = problems_of(project, write_dataset(tmp_path / "ds", docs=docs))

    assert [(p.line, p.field) for p in found if p.file.endswith("docs.jsonl")] == [
        (len(docs), "docid")
    ]


def test_an_eraser_annotation_id_too_long_for_its_column_is_refused(db, project, tmp_path):
    lines = {"train": [json.dumps(instance("a" * 256))], "val": [], "test": []}
    found = problems_of(project, write_dataset(tmp_path / "ds", lines_by_split=lines))

    assert [(p.line, p.field) for p in found] == [(1, "annotation_id")]
    assert "over the limit of 255" in found[0].message


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"text": "A film .", "label": "x" * 256}, "label"),
        ({"text": "A film .", "label": "pos", "query_type": "q" * 65}, "query_type"),
    ],
)
def test_raw_text_too_long_for_its_column_is_refused_on_its_line(db, tmp_path, row, field):
    project = ProjectFactory(labels=[])
    path = tmp_path / "texts.jsonl"
    path.write_text(json.dumps(row) + "\n")

    found = problems_of(project, path)

    assert [(p.file, p.line, p.field) for p in found] == [("texts.jsonl", 1, field)]
    assert "over the limit of" in found[0].message


def test_an_eraser_label_too_long_for_its_column_is_refused(db, tmp_path):
    project = ProjectFactory(labels=[])
    lines = {"train": [json.dumps(instance("a1", classification="x" * 256))], "val": [], "test": []}

    found = problems_of(project, write_dataset(tmp_path / "ds", lines_by_split=lines))

    assert [(p.line, p.field) for p in found] == [(1, "classification")]
