"""What the annotator's workspace receives per task type, what stays hidden when the labels
come from the annotators, and who may set the task-type options."""

import json

import pytest
from django.urls import reverse

from annotate.models import Project, ProjectMembership, Role, TaskType
from annotate.serializers import AssignmentOutputSerializer
from annotate.services import dataset_import, variant_create
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory

PASSAGE = "The Nile flows north and ends in the Mediterranean."


def imported(tmp_path, task_type, rows, **fields) -> Project:
    project = ProjectFactory(task_type=task_type, labels=fields.pop("labels", []), **fields)
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dataset_import(project=project, path=path)
    variant_create(project=project, name="plain", text="Highlight what supports the answer.")
    return project


def leased(project) -> dict:
    worker = UserFactory()
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    response = client_for(worker).post(reverse("annotate:assignment-next", args=[project.id]))
    assert response.status_code == 200, response.data
    # The page opened again (a reload) reads the same assignment through the general path.
    again = client_for(worker).get(
        reverse("annotate:assignment-detail", args=[response.data["id"]])
    )
    assert again.data["item"] == response.data["item"]
    assert again.data["project"] == response.data["project"]
    return response.data


def test_single_text_payload_is_as_before_with_roles(db, tmp_path):
    project = imported(
        tmp_path, TaskType.CLASSIFICATION, [{"id": "s", "text": "Fine film.", "label": "pos"}]
    )

    data = leased(project)

    assert data["project"]["task_type"] == "classification"
    assert data["project"]["text_names"] == []
    assert data["project"]["language"] == "en"
    item = data["item"]
    assert item["label"] == "pos"
    assert (item["answer"], item["options"]) == (None, [])
    assert [(d["docid"], d["role"]) for d in item["documents"]] == [("s", "text")]


def test_text_pair_payload_names_both_texts(db, tmp_path):
    row = {"id": "p", "text_a": "A man sings.", "text_b": "Someone sings.", "label": "entail"}
    project = imported(
        tmp_path, TaskType.SENTENCE_PAIR, [row], text_names=["Premise", "Hypothesis"]
    )

    data = leased(project)

    assert data["project"]["text_names"] == ["Premise", "Hypothesis"]
    assert [(d["docid"], d["role"], d["text"]) for d in data["item"]["documents"]] == [
        ("p:a", "text", "A man sings."),
        ("p:b", "text", "Someone sings."),
    ]
    assert data["item"]["label"] == "entail"


def test_text_pair_names_default(db, tmp_path):
    row = {"text_a": "One.", "text_b": "Two.", "label": "x"}
    project = imported(tmp_path, TaskType.SENTENCE_PAIR, [row])

    assert leased(project)["project"]["text_names"] == ["Text 1", "Text 2"]


def test_reading_comprehension_payload_has_the_question_document_and_the_answer(db, tmp_path):
    row = {"id": "r", "question": "Which way?", "passage": PASSAGE, "answer": "north"}
    project = imported(tmp_path, TaskType.READING_COMPREHENSION, [row], question_rationales=True)

    data = leased(project)

    assert data["project"]["question_rationales"] is True
    assert data["project"]["no_answer_label"] == "(no answer)"
    item = data["item"]
    assert [(d["docid"], d["role"]) for d in item["documents"]] == [
        ("r:question", "question"),
        ("r:passage", "text"),
    ]
    start = PASSAGE.index("north")
    assert item["answer"] == {
        "docid": "r:passage",
        "start_char": start,
        "end_char": start + 5,
        "text": "north",
    }
    assert item["query"] == "Which way?"


def test_no_answer_is_sent_as_such(db, tmp_path):
    row = {"question": "Who?", "passage": PASSAGE, "answer": None}
    project = imported(tmp_path, TaskType.READING_COMPREHENSION, [row])

    assert leased(project)["item"]["answer"] == {"none": True}


def test_multiple_choice_payload_has_the_options(db, tmp_path):
    row = {"question": "Cold place?", "options": ["oven", "fridge"], "label": "fridge"}
    project = imported(tmp_path, TaskType.MULTIPLE_CHOICE, [row])

    item = leased(project)["item"]

    assert item["options"] == ["oven", "fridge"]
    assert item["label"] == "fridge"


@pytest.mark.parametrize(
    ("task_type", "row"),
    [
        (TaskType.CLASSIFICATION, {"text": "Fine.", "label": "pos"}),
        (
            TaskType.READING_COMPREHENSION,
            {"question": "Which way?", "passage": PASSAGE, "answer": "north", "label": "yes"},
        ),
        (
            TaskType.READING_COMPREHENSION,
            {"question": "Who?", "passage": PASSAGE, "answer": None},
        ),
        (
            TaskType.MULTIPLE_CHOICE,
            {"question": "Cold?", "options": ["oven", "fridge"], "label": "fridge"},
        ),
    ],
)
def test_labels_from_annotators_hide_the_gold_label_and_answer(db, tmp_path, task_type, row):
    project = imported(tmp_path, task_type, [row], labels_from_annotators=True)

    data = leased(project)

    assert data["project"]["labels_from_annotators"] is True
    assert data["item"]["label"] is None
    assert data["item"]["answer"] is None
    raw = json.dumps(data)
    assert "north" not in raw.replace(PASSAGE, ""), "the answer appears only in its passage"
    if task_type == TaskType.MULTIPLE_CHOICE:
        assert data["item"]["options"] == ["oven", "fridge"], "the choices stay"


def test_gold_rationales_never_reach_the_annotator(db, tmp_path, eraser_reference):
    project = ProjectFactory(task_type=TaskType.READING_COMPREHENSION, labels=[])
    dataset_import(project=project, path=eraser_reference / "multirc/data")
    variant_create(project=project, name="plain", text="Highlight.")

    data = leased(project)

    assert set(data["item"]) == {
        "annotation_id",
        "query",
        "query_type",
        "label",
        "answer",
        "options",
        "documents",
    }
    assert "evidence" not in json.dumps(data)
    assert all(
        set(d) == {"docid", "role", "text", "tokens", "sentences"}
        for d in data["item"]["documents"]
    )


def test_the_declared_fields_give_the_same_payload(db, tmp_path):
    from rest_framework import serializers

    from annotate.services import assignment_next

    row = {"question": "Which way?", "passage": PASSAGE, "answer": "north"}
    project = imported(tmp_path, TaskType.READING_COMPREHENSION, [row])
    lease = assignment_next(project=project, worker=UserFactory())

    built = AssignmentOutputSerializer(lease).data

    through = serializers.Serializer.to_representation(AssignmentOutputSerializer(lease), lease)
    assert built == dict(through)


# ------------------------------------------------------------------ settings


def staff_client():
    return client_for(UserFactory(username="staff", is_staff=True))


def test_a_project_is_created_with_its_task_type_and_options(db):
    response = staff_client().post(
        reverse("annotate:project-list"),
        {
            "name": "NLI",
            "task_type": "sentence_pair",
            "labels": ["entailment", "neutral", "contradiction"],
            "text_names": ["Premise", "Hypothesis"],
            "labels_from_annotators": True,
        },
        format="json",
    )

    assert response.status_code == 201, response.data
    assert response.data["task_type"] == "sentence_pair"
    assert response.data["text_names"] == ["Premise", "Hypothesis"]
    assert response.data["labels_from_annotators"] is True
    project = Project.objects.get(name="NLI")
    assert (project.text_names, project.question_rationales) == (["Premise", "Hypothesis"], False)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"task_type": "classification", "text_names": ["A", "B"]}, "text_names"),
        ({"task_type": "sentence_pair", "text_names": ["A"]}, "text_names"),
        ({"task_type": "sentence_pair", "text_names": ["A", "B", "C"]}, "text_names"),
        ({"task_type": "sentence_pair", "text_names": ["A", "  "]}, "text_names"),
        ({"task_type": "sentence_pair", "question_rationales": True}, "question_rationales"),
        (
            {"task_type": "reading_comprehension", "question_rationales": "maybe"},
            "question_rationales",
        ),
        ({"task_type": "essay"}, "task_type"),
    ],
)
def test_bad_task_options_at_creation_name_the_field(db, body, field):
    response = staff_client().post(
        reverse("annotate:project-list"), {"name": "X", **body}, format="json"
    )

    assert response.status_code == 400
    assert field in response.data or response.data.get("field") == field
    assert not Project.objects.filter(name="X").exists()


def policy(client, project, body):
    return client.patch(reverse("annotate:project-policy", args=[project.id]), body, format="json")


def test_an_admin_sets_the_task_options_through_the_policy(db, role_users, project):
    Project.objects.filter(pk=project.pk).update(task_type=TaskType.SENTENCE_PAIR)
    admin = client_for(role_users["admin"])

    response = policy(
        admin, project, {"text_names": ["Claim", "Evidence"], "labels_from_annotators": True}
    )

    assert response.status_code == 200, response.data
    project.refresh_from_db()
    assert project.text_names == ["Claim", "Evidence"]
    assert project.labels_from_annotators is True
    assert policy(admin, project, {"question_rationales": True}).data["field"] == (
        "question_rationales"
    )
    bad = policy(admin, project, {"text_names": ["Only one"]})
    assert bad.status_code == 400
    assert bad.data["field"] == "text_names"
    assert "text_names" in bad.data["detail"]
    project.refresh_from_db()
    assert project.text_names == ["Claim", "Evidence"], "a refused change leaves the project"


def test_question_rationales_are_a_reading_comprehension_option(db, role_users, project):
    Project.objects.filter(pk=project.pk).update(task_type=TaskType.READING_COMPREHENSION)

    response = policy(client_for(role_users["admin"]), project, {"question_rationales": True})

    assert response.status_code == 200
    assert response.data["question_rationales"] is True


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("researcher", 403),
        ("reviewer", 403),
        ("annotator", 403),
        ("author", 403),
        ("checker", 403),
        ("outsider", 404),
    ],
)
def test_only_admins_set_the_task_options(db, role_users, project, who, status):
    response = policy(client_for(role_users[who]), project, {"labels_from_annotators": True})

    assert response.status_code == status
    project.refresh_from_db()
    assert project.labels_from_annotators is False


def test_an_allocation_seed_past_the_column_is_refused_naming_it(db, role_users, project):
    """Schemathesis found a seed past PostgreSQL's integer answered 500."""
    admin = client_for(role_users["admin"])

    refused = policy(admin, project, {"allocation_seed": 2**31})
    accepted = policy(admin, project, {"allocation_seed": 2**31 - 1})

    assert refused.status_code == 400 and "allocation_seed" in refused.data
    assert accepted.status_code == 200
    project.refresh_from_db()
    assert project.allocation_seed == 2**31 - 1
