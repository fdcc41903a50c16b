"""Hostile imports: unsafe archive entries, byte-order marks, broken CSV rows, undecodable
bytes, NUL characters and the uploads left behind. Each is named by file, line and field,
and nothing is written."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.models import Document, ImportJob, Item, TaskType
from annotate.services import dataset_import
from tests.annotate.test_apis import zipped_dataset
from tests.annotate.test_import_bad_input import instance, problems_of, write_dataset
from tests.annotate.test_import_benchmark import SENTIMENT_EN, project_of, write_lines
from tests.conftest import client_for
from tests.factories import ProjectFactory


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


BOM = b"\xef\xbb\xbf"


def _prefix_bom(path):
    path.write_bytes(BOM + path.read_bytes())


@pytest.mark.parametrize(
    ("layout", "with_bom"),
    [
        ("docs", "docs/d1"),
        ("docs.jsonl", "docs.jsonl"),
        ("docs", "train.jsonl"),
        ("docs", "val.jsonl"),
    ],
)
def test_an_eraser_file_may_start_with_a_byte_order_mark(db, project, tmp_path, layout, with_bom):
    root = write_dataset(
        tmp_path / "d",
        {"train": [json.dumps(instance("a1"))], "val": [json.dumps(instance("a2", "d2"))]},
        layout=layout,
    )
    _prefix_bom(root / with_bom)

    summary = dataset_import(project=project, path=root)

    assert summary.items_created == 2
    document = Document.objects.get(project=project, docid="d1")
    assert document.text.startswith("The film")
    assert document.token_texts()[0] == "The"


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("t.jsonl", '{"id": "r1", "text": "Fine film.", "label": "pos"}\n'),
        ("t.csv", "id,text,label\nr1,Fine film.,pos\n"),
    ],
)
def test_a_raw_text_file_may_start_with_a_byte_order_mark(db, project, tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(BOM + content.encode())

    summary = dataset_import(project=project, path=path)

    assert summary.items_created == 1
    assert Item.objects.get(project=project).annotation_id == "r1"
    assert Document.objects.get(project=project).text == "Fine film."


def test_a_benchmark_file_may_start_with_a_byte_order_mark(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    path = tmp_path / "senti_en.txt"
    write_lines(path, SENTIMENT_EN)
    _prefix_bom(path)

    summary = dataset_import(project=project, path=path)

    assert summary.items_created == 3
    assert Item.objects.filter(project=project, annotation_id="1").exists()


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        # The quote opened on line 2 closes on line 4: three rows read as one, silently.
        (
            'id,text,label\nr1,"Fine film.,pos\nr2,Bad.,neg\nr3,"Ok",pos\n',
            2,
            ["quote", "line 4"],
        ),
        # Never closed: the rest of the file was one text.
        ('id,text,label\nr1,"Fine film.,pos\nr2,Bad.,neg\n', 2, ["quote", "never closed"]),
        ("id,text,label,split\nr1,Fine film.,pos\nr2,Bad.,neg,test\n", 2, ["3 fields", "has 4"]),
        ("id,text,label\nr1,Fine film.,pos,train\n", 2, ["4 fields", "has 3"]),
    ],
    ids=["quote-closed-later", "quote-never-closed", "too-few-fields", "too-many-fields"],
)
def test_a_broken_csv_row_is_named_by_its_line(db, project, tmp_path, content, line, words):
    path = tmp_path / "t.csv"
    path.write_text(content)

    problems = problems_of(project, path)

    assert [(p.file, p.line, p.field) for p in problems] == [("t.csv", line, None)]
    assert all(word in problems[0].message for word in words), problems[0].message


def test_a_quoted_field_across_lines_is_one_row_named_by_its_first_line(db, project, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('id,text,label\nr1,"Fine\nfilm.",pos\nr2,"Bad\nfilm.",\n')

    [problem] = problems_of(project, path)

    assert (problem.line, problem.field) == (4, "label")


LATIN_1 = "café".encode("latin-1")  # byte 4 is 0xE9, which starts no UTF-8 character
# A UTF-16 surrogate written as UTF-8 bytes: not UTF-8, though Python's json takes it.
SURROGATE = b"x\xed\xb2\x80"


@pytest.mark.parametrize(
    ("name", "content", "line", "byte"),
    [
        ("t.csv", b"id,text,label\nr1,ok,a\nr2," + LATIN_1 + b",a\n", 3, 7),
        (
            "t.jsonl",
            b'{"text": "ok", "label": "a"}\n{"text": "' + LATIN_1 + b'", "label": "a"}\n',
            2,
            14,
        ),
        (
            "t.jsonl",
            b'{"text": "ok", "label": "a"}\n{"text": "' + SURROGATE + b'", "label": "a"}\n',
            2,
            12,
        ),
    ],
    ids=["csv", "jsonl", "jsonl-surrogate"],
)
def test_a_raw_text_file_that_is_not_utf8_is_named_by_line_and_byte(
    db, project, tmp_path, name, content, line, byte
):
    path = tmp_path / name
    path.write_bytes(content)

    [problem] = problems_of(project, path)

    assert (problem.file, problem.line, problem.field) == (name, line, None)
    assert problem.message.startswith(f"not valid UTF-8: byte {byte} of the line is 0x")
    assert "surrogates not allowed" not in problem.message


@pytest.mark.parametrize(
    ("layout", "file", "before", "line"),
    [
        ("docs", "docs/d1", b"I loved", 2),
        ("docs.jsonl", "docs.jsonl", b"The film", 1),
        ("docs", "train.jsonl", b"a1", 1),
    ],
)
def test_an_eraser_file_that_is_not_utf8_is_named_by_line_and_byte(
    db, project, tmp_path, layout, file, before, line
):
    root = write_dataset(tmp_path / "d", layout=layout)
    path = root / file
    text = path.read_bytes()
    at = text.index(before)
    path.write_bytes(text[:at] + b"\xe9" + text[at:])
    byte = at - (text.rfind(b"\n", 0, at) + 1) + 1

    problems = problems_of(project, root)

    assert (problems[0].file, problems[0].line) == (file, line)
    assert problems[0].message.startswith(f"not valid UTF-8: byte {byte} of the line is 0xE9")
    assert "surrogates not allowed" not in problems[0].message


def test_a_benchmark_file_that_is_not_utf8_is_named_by_line_and_byte(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    path = tmp_path / "senti_en.txt"
    write_lines(path, SENTIMENT_EN)
    text = path.read_bytes()
    second = text.index(b"\n") + 1
    at = text.index(b"movie", second)
    path.write_bytes(text[:at] + b"\xe9" + text[at:])

    [problem] = problems_of(project, path)

    assert (problem.file, problem.line) == ("senti_en.txt", 2)
    assert problem.message.startswith("not valid UTF-8: byte")


def test_the_command_names_the_undecodable_line_without_a_traceback(db, project, tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"id,text,label\nr1,ok,a\nr2," + LATIN_1 + b",a\n")

    with pytest.raises(CommandError) as caught:
        call_command("import_eraser", project.name, str(path))

    assert "t.csv:3: not valid UTF-8: byte 7 of the line is 0xE9" in str(caught.value)


def test_the_api_job_names_the_undecodable_line(
    db, project, role_users, django_capture_on_commit_callbacks
):
    content = b'{"text": "ok", "label": "a"}\n{"text": "' + SURROGATE + b'", "label": "a"}\n'

    job = upload_job(
        project, role_users["admin"], "t.jsonl", content, django_capture_on_commit_callbacks
    )

    assert job.status == "failed"
    assert "internal error" not in job.error
    [problem] = job.problems
    assert (problem["file"], problem["line"], problem["field"]) == ("t.jsonl", 2, None)
    assert problem["message"].startswith("not valid UTF-8: byte 12 of the line is 0xED")


# PostgreSQL stores no NUL character in text or JSON, and nothing stores a lone surrogate
# (a JSON escape such as \udc80 with no pair): each is named before anything is written.
@pytest.mark.parametrize(
    ("name", "content", "line", "field"),
    [
        (
            "t.jsonl",
            '{"text": "ok", "label": "a"}\n{"text": "a\\u0000b", "label": "a"}\n',
            2,
            "text",
        ),
        ("t.jsonl", '{"text": "ok", "label": "a", "query": "q\\u0000"}\n', 1, "query"),
        ("t.jsonl", '{"text": "x\\udc80", "label": "a"}\n', 1, "text"),
        ("t.csv", "id,text,label\nr1,ok,a\nr2,a\x00b,a\n", 3, "text"),
        ("t.csv", "id,text,label\nr1,ok,a\x00\n", 2, "label"),
    ],
    ids=["jsonl-text", "jsonl-query", "jsonl-lone-surrogate", "csv-text", "csv-label"],
)
def test_a_raw_text_character_the_database_cannot_store_is_named(
    db, project, tmp_path, name, content, line, field
):
    path = tmp_path / name
    path.write_text(content)

    [problem] = problems_of(project, path)

    assert (problem.file, problem.line, problem.field) == (name, line, field)
    assert "NUL character" in problem.message or "lone surrogate" in problem.message


@pytest.mark.parametrize(
    ("layout", "file", "edit", "line", "field"),
    [
        ("docs", "docs/d1", lambda t: t.replace("loved", "lo\x00ved"), 2, None),
        (
            "docs.jsonl",
            "docs.jsonl",
            lambda t: t.replace("loved", "lo\\u0000ved"),
            1,
            "document",
        ),
        (
            "docs",
            "train.jsonl",
            lambda t: t.replace('"x"', '"x\\u0000"'),
            2,
            "evidences[0][0].text",
        ),
        (
            "docs",
            "train.jsonl",
            lambda t: t.replace('"query": null', '"query": "\\u0000"'),
            1,
            "query",
        ),
        (
            "docs",
            "train.jsonl",
            lambda t: t.replace('"query": null', '"note": ["\\u0000"]'),
            1,
            "note[0]",
        ),
    ],
    ids=["docs-folder", "docs.jsonl", "evidence-text", "query", "extra-key"],
)
def test_an_eraser_nul_character_is_named(db, project, tmp_path, layout, file, edit, line, field):
    root = write_dataset(tmp_path / "d", layout=layout)
    path = root / file
    if file.startswith("docs/"):
        path.write_text(edit(path.read_text()))
    else:
        lines = path.read_text().splitlines(keepends=True)
        lines[line - 1] = edit(lines[line - 1])
        path.write_text("".join(lines))

    problems = problems_of(project, root)

    assert [(p.file, p.line, p.field) for p in problems] == [(file, line, field)]
    assert "NUL character" in problems[0].message


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_nul_characters_are_named_on_postgresql(postgres_only, tmp_path):
    """Where they matter: PostgreSQL refuses them with an error of its own mid-import."""
    project = ProjectFactory(labels=[])
    raw = tmp_path / "t.jsonl"
    raw.write_text('{"text": "ok", "label": "a"}\n{"text": "a\\u0000b", "label": "a"}\n')
    eraser = write_dataset(tmp_path / "d", layout="docs")
    (eraser / "docs" / "d2").write_text("Bad\x00 plot .")

    assert [(p.file, p.line, p.field) for p in problems_of(project, raw)] == [
        ("t.jsonl", 2, "text")
    ]
    assert [(p.file, p.line, p.field) for p in problems_of(project, eraser)] == [
        ("docs/d2", 1, None)
    ]
