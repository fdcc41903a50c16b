"""Hugging Face datasets into reading-comprehension projects: SQuAD's layout (context,
question, answers by character offset) and the `hf` export's own, whose round trip
(export, `load_dataset`, import) keeps the question, the roles and the answer."""

import uuid

import datasets
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.models import DocumentRole, Item, ItemDocument, TaskType
from annotate.services import dataset_import
from rationale_metrics.problems import DataValidationError
from tests.annotate.test_import_hf import (
    _document,
    export_hf,
    item_contents,
    texts,
    write_parquet,
)
from tests.conftest import client_for
from tests.factories import ProjectFactory
from tests.hypothesis_budget import examples

PASSAGES = [
    "Paris is the capital of France. It lies on the Seine.",
    "The Nile flows north into the Mediterranean.",
]
SQUAD_FEATURES = {
    "id": datasets.Value("string"),
    "context": datasets.Value("string"),
    "question": datasets.Value("string"),
    "answers": datasets.Sequence(
        {"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}
    ),
}


def squad(tmp_path, answers, name="validation-00000-of-00001.parquet"):
    return write_parquet(
        tmp_path / name,
        {
            "id": ["q1", "q2"],
            "context": PASSAGES,
            "question": ["What is the capital of France?", "Where does the Nile flow?"],
            "answers": answers,
        },
        SQUAD_FEATURES,
    )


def reading_project():
    return ProjectFactory(task_type=TaskType.READING_COMPREHENSION, labels=[])


def test_a_squad_file_imports_with_its_questions_and_answers(db, tmp_path):
    path = squad(
        tmp_path,
        [
            {"text": ["Paris", "Paris"], "answer_start": [0, 0]},
            {"text": [], "answer_start": []},
        ],
    )
    project = reading_project()

    summary = dataset_import(project=project, path=path)

    assert summary.items_created == 2
    first, second = Item.objects.filter(project=project).order_by("annotation_id")
    assert (first.query, first.split) == ("What is the capital of France?", "val")
    assert first.answer == {
        "docid": "q1:passage",
        "start_char": 0,
        "end_char": 5,
        "text": "Paris",
    }
    assert second.answer == {"none": True}
    links = ItemDocument.objects.filter(item=first).order_by("position")
    assert [(link.document.docid, link.role) for link in links] == [
        ("q1:question", DocumentRole.QUESTION),
        ("q1:passage", DocumentRole.TEXT),
    ]
    assert links[1].document.text == PASSAGES[0]


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (
            {"text": ["Paris"], "answer_start": [400]},
            "answer 1 starts at character 400, outside the passage 'q2:passage' of 44 characters",
        ),
        (
            {"text": ["Seine"], "answer_start": [4]},
            "answer 1 'Seine' is not the passage's text at character 4, which is 'Nile '",
        ),
    ],
)
def test_a_bad_answer_fails_the_import_naming_file_row_and_field(db, tmp_path, answers, message):
    path = squad(tmp_path, [{"text": ["Paris"], "answer_start": [0]}, answers])
    project = reading_project()

    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)

    [problem] = [p.as_dict() for p in caught.value.problems]
    assert (problem["file"], problem["line"], problem["field"]) == (path.name, 1, "answers")
    assert message in problem["message"]
    assert not Item.objects.filter(project=project).exists()


def test_answers_in_a_single_text_project_are_refused_by_the_mapping(db, tmp_path):
    path = squad(tmp_path, [{"text": [], "answer_start": []}] * 2)
    project = ProjectFactory(labels=[])

    with pytest.raises(DataValidationError) as caught:
        dataset_import(
            project=project, path=path, mapping={"text": "context", "answers": "answers"}
        )

    assert [p.as_dict()["field"] for p in caught.value.problems] == ["mapping.answers"]


def test_the_preview_of_a_reading_project_shows_the_question_and_answer_roles(
    db, role_users, project, tmp_path
):
    project.task_type = TaskType.READING_COMPREHENSION
    project.save(update_fields=["task_type"])
    body = squad(
        tmp_path,
        [{"text": ["Paris"], "answer_start": [0]}, {"text": [], "answer_start": []}],
    ).read_bytes()

    response = client_for(role_users["admin"]).post(
        reverse("annotate:import-hf-mapping", args=[project.id]),
        {"file": SimpleUploadedFile("validation.parquet", body)},
        format="multipart",
    )

    assert response.status_code == 200, response.content
    assert {"question", "answers"} <= set(response.data["roles"])
    assert response.data["mapping"] == {
        "id": "id",
        "text": "context",
        "question": "question",
        "answers": "answers",
    }
    assert response.data["problems"] == []
    assert [(s["question"], s["answer"]) for s in response.data["sample"]] == [
        ("What is the capital of France?", "Paris"),
        ("Where does the Nile flow?", ""),
    ]
    assert not Item.objects.filter(project=project).exists()


def test_the_preview_of_another_project_has_no_reading_roles(db, role_users, project, tmp_path):
    body = squad(tmp_path, [{"text": [], "answer_start": []}] * 2).read_bytes()

    response = client_for(role_users["admin"]).post(
        reverse("annotate:import-hf-mapping", args=[project.id]),
        {"file": SimpleUploadedFile("validation.parquet", body)},
        format="multipart",
    )

    assert response.status_code == 200
    assert not {"question", "answers"} & set(response.data["roles"])
    assert response.data["mapping"]["query"] == "question"


# ---------------------------------------------------------------- the round trip


@st.composite
def reading_items(draw):
    """Reading-comprehension items as plain data: a question, a passage, a label, a split,
    reference sets in the passage (fractions of its tokens), and the answer: a run of the
    passage's tokens (fractions), none, or not known."""
    count = draw(st.integers(1, 4))
    return [
        {
            "question": draw(texts()),
            "passage": draw(texts()),
            "label": draw(st.sampled_from([None, "yes", "no"])),
            "split": draw(st.sampled_from(["train", "val", "test"])),
            "sets": draw(st.lists(st.tuples(st.floats(0, 0.99), st.floats(0.01, 1)), max_size=2)),
            "answer": draw(
                st.sampled_from([None, "none"]) | st.tuples(st.floats(0, 0.99), st.floats(0, 1))
            ),
        }
        for _ in range(count)
    ]


def reading_project_with(drawn):
    from annotate.models import RationaleSet, RationaleSpan

    project = ProjectFactory(task_type=TaskType.READING_COMPREHENSION, labels=[])
    for index, spec in enumerate(drawn):
        key = f"r{index}"
        question = _document(project, f"{key}:question", spec["question"])
        passage = _document(project, f"{key}:passage", spec["passage"])
        n = passage.token_count
        answer = spec["answer"]
        if answer == "none":
            answer = {"none": True}
        elif answer is not None:
            first = min(int(answer[0] * n), n - 1)
            last = max(first, min(n - 1, int(answer[1] * n)))
            start, end = int(passage.tokens[first][0]), int(passage.tokens[last][1])
            answer = {
                "docid": passage.docid,
                "start_char": start,
                "end_char": end,
                "text": passage.text[start:end],
            }
        item = Item.objects.create(
            project=project,
            annotation_id=key,
            declared_docids=[question.docid, passage.docid],
            label=spec["label"],
            split=spec["split"],
            query=spec["question"],
            answer=answer,
        )
        ItemDocument.objects.create(
            item=item, document=question, position=0, role=DocumentRole.QUESTION
        )
        ItemDocument.objects.create(item=item, document=passage, position=1, role=DocumentRole.TEXT)
        for g, (low, high) in enumerate(spec["sets"]):
            rset = RationaleSet.objects.create(reference_item=item, position=g)
            start = min(int(low * n), n - 1)
            RationaleSpan.objects.create(
                rationale_set=rset,
                document=passage,
                start_token=start,
                end_token=max(start + 1, min(n, int(high * n) + 1)),
                position=0,
            )
    return project


def reading_contents(project) -> dict:
    found = item_contents(project)
    for item in Item.objects.filter(project=project):
        found[item.annotation_id].update(
            query=item.query,
            answer=item.answer,
            roles=list(item.item_documents.order_by("position").values_list("role", flat=True)),
        )
    return found


@settings(
    max_examples=examples(16),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_export_load_dataset_import_keeps_questions_roles_and_answers(db, tmp_path, data):
    drawn = data.draw(reading_items())
    source = reading_project_with(drawn)
    run = tmp_path / uuid.uuid4().hex
    export_hf(source, run / "hf")

    loaded = datasets.load_dataset(str(run / "hf"), cache_dir=str(run / "cache"))
    target = reading_project()
    dataset_import(project=target, path=run / "hf")

    rows = [row for split in loaded.values() for row in split]
    assert len(rows) == len(drawn)
    for row in rows:
        answer = Item.objects.get(project=source, annotation_id=row["annotation_id"]).answer
        if answer and not answer.get("none"):
            passage = next(d["text"] for d in row["documents"] if d["docid"] == answer["docid"])
            start = row["answers"]["answer_start"][0]
            assert passage[start : start + len(row["answers"]["text"][0])] == answer["text"]
    assert reading_contents(target) == reading_contents(source)
