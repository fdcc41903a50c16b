"""Projects with original items of each task type, and their people, for the
perturbation tests."""

import uuid

from annotate.models import (
    Document,
    DocumentRole,
    Item,
    ItemDocument,
    Project,
    ProjectMembership,
    Role,
    TaskType,
)
from annotate.services import variant_create
from annotate.tokenization import tokenize_text
from tests.factories import UserFactory

REVIEW = "The pacing drags , but the final act is superb and moving ."
PAIR = ("How do I learn to cook ?", "What is the best way to learn cooking ?")
PASSAGE = "The Eiffel Tower was completed in 1889 . It stands in Paris ."
QUESTION = "When was the Eiffel Tower completed ?"


def _document(project, docid: str, text: str) -> Document:
    tokens = tokenize_text(text, language=project.language)
    return Document.objects.create(
        project=project,
        docid=docid,
        text=text,
        tokens=tokens.token_offsets,
        sentences=tokens.sentence_ranges,
        token_count=len(tokens.token_offsets),
        text_sha256=uuid.uuid4().hex,
        tokenizer="given",
    )


def original_item(project, annotation_id: str, texts, *, roles=None, **fields) -> Item:
    docids = [f"{annotation_id}-d{position}" for position in range(len(texts))]
    item = Item.objects.create(
        project=project, annotation_id=annotation_id, declared_docids=docids, **fields
    )
    for position, text in enumerate(texts):
        document = _document(project, docids[position], text)
        role = roles[position] if roles else DocumentRole.TEXT
        ItemDocument.objects.create(item=item, document=document, position=position, role=role)
    return item


def perturbation_project(task_type: str = TaskType.CLASSIFICATION, *, items: int = 2) -> Project:
    """A project of `task_type` with `items` originals and one active variant."""
    labels = {
        TaskType.CLASSIFICATION: ["negative", "positive"],
        TaskType.SENTENCE_PAIR: ["similar", "dissimilar"],
        TaskType.READING_COMPREHENSION: [],
    }[task_type]
    project = Project.objects.create(
        name=f"perturb {uuid.uuid4().hex[:6]}",
        task_type=task_type,
        labels=labels,
        annotators_per_item=1,
        text_names=["Question 1", "Question 2"] if task_type == TaskType.SENTENCE_PAIR else [],
    )
    for n in range(items):
        if task_type == TaskType.CLASSIFICATION:
            original_item(project, f"o{n}", [REVIEW], label="positive", split="val")
        elif task_type == TaskType.SENTENCE_PAIR:
            original_item(project, f"o{n}", list(PAIR), label="similar", split="test")
        else:
            # As a raw-text import lays it out: the question first, a document of its
            # own and the query; then the passage holding the answer.
            original_item(
                project,
                f"o{n}",
                [QUESTION, PASSAGE],
                roles=[DocumentRole.QUESTION, DocumentRole.TEXT],
                query=QUESTION,
                split="train",
                answer={"docid": f"o{n}-d1", "start_char": 34, "end_char": 38, "text": "1889"},
            )
    variant_create(project=project, name="plain", text="Highlight the words that decide.")
    return project


def people(project, *names_and_roles) -> dict:
    users = {}
    for name, role in names_and_roles:
        users[name] = UserFactory(username=f"{name}-{project.pk}")
        ProjectMembership.objects.create(project=project, user=users[name], role=role)
    return users


EVERYONE = (
    ("admin", Role.ADMIN),
    ("researcher", Role.RESEARCHER),
    ("reviewer", Role.REVIEWER),
    ("annotator", Role.ANNOTATOR),
    ("author", Role.AUTHOR),
    ("author2", Role.AUTHOR),
    ("checker", Role.CHECKER),
    ("checker2", Role.CHECKER),
)
