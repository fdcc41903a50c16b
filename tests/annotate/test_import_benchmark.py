"""Importing the fine-grained benchmark's format: each task in English and Chinese, through
the service, the command and the upload API; bad input named by file, line and field with
nothing written; a second import of the same file creates nothing."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.benchmark_mapping import SOURCE_KEY
from annotate.models import (
    Document,
    ImportJob,
    InstructionVariant,
    Item,
    ItemDocument,
    ItemVariantFill,
    RationaleSet,
    RationaleSpan,
    TaskType,
)
from annotate.services import dataset_import
from annotate.services.imports import detect_import_format
from rationale_metrics.problems import DataValidationError
from tests.conftest import client_for
from tests.factories import ProjectFactory


def write_lines(path, lines) -> str:
    path.write_text(
        "".join(
            (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
            for line in lines
        ),
        encoding="utf-8",
    )
    return str(path)


def project_of(task_type, language="en", **fields):
    project = ProjectFactory(
        task_type=task_type, language=language, labels=fields.pop("labels", []), **fields
    )
    InstructionVariant.objects.create(project=project, name="plain", text="Mark the words.")
    return project


def documents_of(item):
    return [
        (link.position, link.role, link.document.docid, link.document.text, link.document.tokenizer)
        for link in ItemDocument.objects.filter(item=item).select_related("document")
    ]


def reference_sets(item):
    return [
        [(s.document.docid, s.start_token, s.end_token) for s in rset.spans.order_by("position")]
        for rset in RationaleSet.objects.filter(reference_item=item).order_by("position")
    ]


def refused(project, path, **kw):
    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path, **kw)
    assert not Item.objects.filter(project=project).exists(), "nothing is written"
    assert not Document.objects.filter(project=project).exists(), "nothing is written"
    return [(p.file, p.line, p.field) for p in caught.value.problems], caught.value.problems


SENTIMENT_EN = [
    {
        "sent_id": 1,
        "context": "The film is not good at all.",
        "sent_token": ["The", "film", "is", "not", "good", "at", "all", "."],
        "sent_label": 0,
        "rationales": [[3, 4], [3, 4, 5, 6]],
        "sample_type": "ori",
        "rel_ids": [2],
    },
    {
        "sent_id": 2,
        "context": "The movie is not good at all.",
        "sent_token": ["The", "movie", "is", "not", "good", "at", "all", "."],
        "sent_label": 0,
        "rationales": [[3, 4]],
        "sample_type": "disturb",
        "perturbation_types": ["dispensable_words"],
    },
    {
        "sent_id": "s3",
        "sent_token": ["Great", "!"],
        "sent_label": 1,
        "rationales": [],
        "sample_type": "ori",
        "rel_ids": [],
        "source": "extra key",
    },
]


def test_sentiment_lines_become_items_with_their_tokens_sets_and_links(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    path = write_lines(tmp_path / "senti_en.txt", SENTIMENT_EN)

    summary = dataset_import(project=project, path=path)

    assert (summary.items_created, summary.documents_created) == (3, 3)
    assert summary.reference_sets_created == 3
    original = Item.objects.get(project=project, annotation_id="1")
    perturbed = Item.objects.get(project=project, annotation_id="2")
    other = Item.objects.get(project=project, annotation_id="s3")
    assert (original.annotation_id_is_int, other.annotation_id_is_int) == (True, False)
    assert documents_of(original) == [(0, "text", "1", "The film is not good at all .", "given")]
    document = Document.objects.get(project=project, docid="1")
    assert document.token_texts() == SENTIMENT_EN[0]["sent_token"]
    assert document.sentences.tolist() == [[0, 8]]
    assert reference_sets(original) == [[("1", 3, 5)], [("1", 3, 7)]]
    assert reference_sets(other) == []
    assert original.label == "0" and original.source_extra[SOURCE_KEY]["int_label"] is True
    assert original.source_extra[SOURCE_KEY]["texts"] == {"context": SENTIMENT_EN[0]["context"]}
    assert other.source_extra[SOURCE_KEY]["extra"] == {"source": "extra key"}
    assert (perturbed.perturbation_of, perturbed.perturbation_types) == (
        original,
        ["dispensable_words"],
    )
    assert original.perturbation_of is None
    project.refresh_from_db()
    assert project.labels == ["0", "1"]
    assert ItemVariantFill.objects.filter(item__project=project).count() == 3, "items are queued"


def test_importing_the_same_file_twice_creates_nothing_new(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    path = write_lines(tmp_path / "senti.jsonl", SENTIMENT_EN)
    dataset_import(project=project, path=path)
    counts = [
        model.objects.count()
        for model in (Item, Document, ItemDocument, RationaleSet, RationaleSpan, ItemVariantFill)
    ]

    again = dataset_import(project=project, path=path)

    assert (again.items_created, again.items_unchanged) == (0, 3)
    assert (again.documents_created, again.documents_unchanged) == (0, 3)
    assert counts == [
        model.objects.count()
        for model in (Item, Document, ItemDocument, RationaleSet, RationaleSpan, ItemVariantFill)
    ]


def test_chinese_similarity_makes_two_texts_without_spaces_and_one_set_over_both(db, tmp_path):
    project = project_of(TaskType.SENTENCE_PAIR, "zh")
    line = {
        "sent_id": 10,
        "query": "地瓜是红薯吗",
        "title": "红薯就是地瓜",
        "text_q_seg": list("地瓜是红薯吗"),
        "text_t_seg": list("红薯就是地瓜"),
        "sent_label": 1,
        "rationale_q_idx": ["0", "1", "3", "4"],
        "rationale_t_idx": [0, 1, 4, 5],
        "sample_type": "ori",
        "rel_ids": [],
    }
    path = write_lines(tmp_path / "sim_zh.jsonl", [line])

    dataset_import(project=project, path=path)

    item = Item.objects.get(project=project)
    assert documents_of(item) == [
        (0, "text", "10:a", "地瓜是红薯吗", "given"),
        (1, "text", "10:b", "红薯就是地瓜", "given"),
    ]
    assert reference_sets(item) == [
        [("10:a", 0, 2), ("10:a", 3, 5), ("10:b", 0, 2), ("10:b", 4, 6)]
    ]
    assert item.source_extra[SOURCE_KEY]["texts"] == {
        "query": "地瓜是红薯吗",
        "title": "红薯就是地瓜",
    }
    assert item.query is None


def test_reading_comprehension_asks_its_question_and_marks_its_answer(db, tmp_path):
    project = project_of(TaskType.READING_COMPREHENSION)
    line = {
        "sent_id": "r1",
        "title": "Potatoes",
        "question": "What is a sweet potato?",
        "sent_token": ["A", "sweet", "potato", "is", "a", "root", "."],
        "sent_label": "a root",
        "rationales": [3, 4, 5],
        "sample_type": "ori",
        "rel_ids": [],
    }
    path = write_lines(tmp_path / "mrc_en.jsonl", [line])

    dataset_import(project=project, path=path)

    item = Item.objects.get(project=project)
    (question, passage) = documents_of(item)
    assert question[:4] == (0, "question", "r1:question", "What is a sweet potato?")
    assert question[4].startswith("spacy-"), "a question has no given tokens: tokenized as text"
    assert passage == (1, "text", "r1:passage", "A sweet potato is a root .", "given")
    assert item.query == "What is a sweet potato?"
    assert item.label is None
    assert item.answer == {
        "docid": "r1:passage",
        "start_char": 18,
        "end_char": 24,
        "text": "a root",
    }
    assert reference_sets(item) == [[("r1:passage", 3, 6)]]
    project.refresh_from_db()
    assert project.labels == [], "answers are not labels"


def test_a_benchmark_file_is_told_by_its_first_line_whatever_its_name(db, tmp_path):
    path = write_lines(tmp_path / "senti_ch.txt", SENTIMENT_EN[2:])
    with open(path, "rb") as handle:
        assert detect_import_format("senti_ch.txt", handle.read()) == "benchmark"
    assert detect_import_format("rows.jsonl", b'{"text": "a", "label": "b"}\n') == "jsonl"
    project = project_of(TaskType.CLASSIFICATION)

    assert dataset_import(project=project, path=path).source_format == "benchmark"


def test_the_import_command_takes_a_benchmark_file(db, tmp_path, capsys):
    project = project_of(TaskType.CLASSIFICATION)
    path = write_lines(tmp_path / "senti.jsonl", SENTIMENT_EN)

    call_command("import_eraser", project.name, path, "--format", "benchmark")

    assert "3 items (0 already present)" in capsys.readouterr().out
    bad = write_lines(tmp_path / "bad.txt", ['{"sent_id": 1, "sample_type": "ori"'])
    with pytest.raises(CommandError, match=r"(?s)nothing was imported.*bad\.txt:1: malformed JSON"):
        call_command("import_eraser", project.name, bad, "--format", "benchmark")


def test_the_upload_api_runs_a_benchmark_import_job(
    db, project, role_users, django_capture_on_commit_callbacks
):
    content = "".join(json.dumps(line) + "\n" for line in SENTIMENT_EN).encode()

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(role_users["admin"]).post(
            reverse("annotate:import-list", args=[project.id]),
            {"file": SimpleUploadedFile("senti.txt", content)},
            format="multipart",
        )

    assert response.status_code == 202, response.content
    job = ImportJob.objects.get(pk=response.data["id"])
    assert (job.source_format, job.status) == ("benchmark", "succeeded"), job.problems
    assert job.summary["items_created"] == 3
    assert (job.progress_done, job.progress_total) == (3, 3)


@pytest.mark.parametrize(
    ("who", "status"),
    [("researcher", 403), ("reviewer", 403), ("annotator", 403), ("outsider", 404)],
)
def test_only_project_admins_may_upload_a_benchmark_file(db, project, role_users, who, status):
    content = json.dumps(SENTIMENT_EN[2]).encode() + b"\n"

    response = client_for(role_users[who]).post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile("senti.txt", content), "source_format": "benchmark"},
        format="multipart",
    )

    assert response.status_code == status
    assert not ImportJob.objects.exists()


# ------------------------------------------------------------------ bad input


def test_a_rel_id_pointing_nowhere_is_named(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    lines = [SENTIMENT_EN[0], {**SENTIMENT_EN[2], "rel_ids": ["gone"]}]
    path = write_lines(tmp_path / "f.jsonl", lines)

    found, problems = refused(project, path, source_format="benchmark")

    assert ("f.jsonl", 1, "rel_ids[0]") in found, "2 is not in the file either"
    assert ("f.jsonl", 2, "rel_ids[0]") in found
    assert "'gone' is not a sent_id in this file" in str(problems)


def test_a_perturbed_line_without_its_original_is_named(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    path = write_lines(tmp_path / "f.jsonl", SENTIMENT_EN[1:])

    found, problems = refused(project, path)

    assert found == [("f.jsonl", 1, "sent_id")]
    assert "perturbed line 2 has no original in this file" in problems[0].message


def test_a_token_index_past_the_end_is_named(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    line = {**SENTIMENT_EN[2], "rationales": [[0], [1, 2]]}
    path = write_lines(tmp_path / "f.jsonl", [SENTIMENT_EN[0], SENTIMENT_EN[1], line])

    found, problems = refused(project, path)

    assert found == [("f.jsonl", 3, "rationales[1][1]")]
    assert "past the end of its sentence (2 tokens)" in problems[0].message


def test_malformed_json_is_named_by_its_line(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    path = write_lines(tmp_path / "f.txt", [SENTIMENT_EN[2], '{"sent_id": 9, "sample_type": "or'])

    found, problems = refused(project, path, source_format="benchmark")

    assert found == [("f.txt", 2, None)]
    assert "malformed JSON" in problems[0].message


def test_a_file_of_another_task_is_named_once(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    pair = {
        "sent_id": 1,
        "text_q_seg": ["a"],
        "text_t_seg": ["b"],
        "sent_label": 1,
        "rationale_q_idx": [],
        "rationale_t_idx": [],
        "sample_type": "ori",
        "rel_ids": [],
    }
    path = write_lines(tmp_path / "sim.jsonl", [pair, {**pair, "sent_id": 2}])

    found, problems = refused(project, path)

    assert found == [("sim.jsonl", 1, "text_q_seg")]
    assert "laid out for the benchmark's similarity task" in problems[0].message
    assert "takes the sentiment task" in problems[0].message


def test_a_multiple_choice_project_has_no_benchmark_task(db, tmp_path):
    project = project_of(TaskType.MULTIPLE_CHOICE)
    path = write_lines(tmp_path / "f.jsonl", SENTIMENT_EN)

    found, problems = refused(project, path)

    assert found == [("f.jsonl", None, None)]
    assert "has no benchmark task" in problems[0].message


def test_a_label_outside_the_projects_labels_is_named(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION, labels=["0"])
    path = write_lines(tmp_path / "f.jsonl", SENTIMENT_EN)

    found, _ = refused(project, path)

    assert found == [("f.jsonl", 3, "sent_label")]


def test_a_changed_line_under_a_known_id_is_a_conflict_and_writes_nothing(db, tmp_path):
    project = project_of(TaskType.CLASSIFICATION)
    dataset_import(project=project, path=write_lines(tmp_path / "a.jsonl", SENTIMENT_EN[2:]))
    changed = {**SENTIMENT_EN[2], "sent_label": 0}
    path = write_lines(tmp_path / "b.jsonl", [SENTIMENT_EN[0], SENTIMENT_EN[1], changed])

    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)

    assert [(p.file, p.line, p.field) for p in caught.value.problems] == [("b.jsonl", 3, "sent_id")]
    assert list(Item.objects.filter(project=project).values_list("annotation_id", flat=True)) == [
        "s3"
    ]
