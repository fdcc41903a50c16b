"""The perturbation step's services: authoring rules, the check, the items it makes, the
audit trail, project types and the progress figures."""

import uuid

import pytest
from django.db import IntegrityError, transaction

from annotate.models import (
    Document,
    DocumentRole,
    Item,
    ItemVariantFill,
    Perturbation,
    PerturbationEvent,
    Role,
    TaskType,
)
from annotate.selectors import (
    perturbation_check_figures,
    perturbation_original_list,
    perturbation_progress,
)
from annotate.services import (
    annotation_submit,
    assignment_next,
    perturbation_check,
    perturbation_create,
    perturbation_settings_update,
)
from annotate.tokenization import tokenize_text, tokenizer_name
from config.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from tests.annotate.perturbation_helpers import (
    PAIR,
    PASSAGE,
    QUESTION,
    REVIEW,
    original_item,
    people,
    perturbation_project,
)

EDITED = REVIEW.replace("superb", "fine")


@pytest.fixture
def project(db):
    return perturbation_project()


@pytest.fixture
def users(project):
    return people(
        project,
        ("author", Role.AUTHOR),
        ("checker", Role.CHECKER),
        ("annotator", Role.ANNOTATOR),
    )


def create(project, author, **fields):
    original = fields.pop("original", None) or project.items.get(annotation_id="o0")
    draft = {"types": ["dispensable_words"], "texts": [EDITED], "label": "positive", **fields}
    return perturbation_create(
        project=project, original_id=original.pk, acting_user=author, **draft
    )


# ---------------------------------------------------------------- authoring


def test_an_author_creates_a_pending_perturbation_with_an_audit_row(project, users):
    perturbation = create(project, users["author"], types=["syntax", "important_words"])

    assert perturbation.status == "pending"
    assert perturbation.types == ["syntax", "important_words"]
    assert perturbation.texts == [EDITED] and perturbation.label == "positive"
    assert perturbation.item is None
    event = PerturbationEvent.objects.get(perturbation=perturbation)
    assert (event.action, event.actor, event.project) == ("created", users["author"], project)
    assert not Item.objects.filter(perturbation_of__isnull=False).exists()


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"types": []}, "types", "at least one"),
        ({"types": ["made_up"]}, "types", "'made_up'"),
        ({"texts": []}, "texts", "expected 1 text(s)"),
        ({"texts": [EDITED, EDITED]}, "texts", "got 2"),
        ({"texts": ["   "]}, "texts[0]", "the text is empty"),
        ({"texts": [REVIEW]}, "texts", "same words"),
        ({"texts": ["  " + REVIEW.replace(" ", "\n")]}, "texts", "same words"),
        ({"label": None}, "label", "gold label"),
        ({"label": "neutral"}, "label", "'neutral' is not one of the labels"),
        ({"query": "Is it good?"}, "query", "no query"),
        ({"answer": {"text": "superb"}}, "answer", "only reading-comprehension"),
    ],
)
def test_bad_drafts_are_refused_naming_the_field(project, users, fields, field, words):
    with pytest.raises(ApplicationError) as error:
        create(project, users["author"], **fields)

    assert error.value.extra["field"] == field
    assert error.value.message.startswith(f"{field}: ")
    assert words in error.value.message
    assert not Perturbation.objects.exists() and not PerturbationEvent.objects.exists()


def test_perturbations_of_perturbations_and_other_projects_items_are_refused(project, users):
    other = perturbation_project()
    accepted = perturbation_check(
        project=project,
        perturbation_id=create(project, users["author"]).pk,
        acting_user=users["checker"],
        decision="accept",
    )

    with pytest.raises(ApplicationError, match="is a perturbation itself"):
        create(project, users["author"], original=accepted.item)
    with pytest.raises(NotFoundError):
        create(project, users["author"], original=other.items.first())


def test_a_project_type_can_be_picked_once_an_admin_adds_it(project, users):
    with pytest.raises(ApplicationError, match="unknown type"):
        create(project, users["author"], types=["negation"])

    perturbation_settings_update(
        project=project,
        perturbation_types=[{"key": "negation", "name": "Negation", "description": "Negate."}],
    )
    project.refresh_from_db()

    assert create(project, users["author"], types=["negation", "syntax"]).types == [
        "negation",
        "syntax",
    ]


# ---------------------------------------------------------------- the check


def test_accepting_makes_a_linked_item_tokenized_like_a_raw_import(project, users):
    original = project.items.get(annotation_id="o0")
    perturbation = create(project, users["author"], types=["important_words"], label="negative")

    checked = perturbation_check(
        project=project,
        perturbation_id=perturbation.pk,
        acting_user=users["checker"],
        decision="accept",
        comment="Good.",
    )

    item = checked.item
    assert checked.status == "accepted" and checked.checker == users["checker"]
    assert checked.edited_in_check is False and checked.checked_at is not None
    assert item.annotation_id == f"o0-p{perturbation.pk}"
    assert item.perturbation_of == original and item.perturbation_types == ["important_words"]
    assert (item.label, item.split, item.query) == ("negative", "val", None)
    document = item.documents.get()
    expected = tokenize_text(EDITED, language="en")
    assert document.text == EDITED and document.docid == f"o0-d0-p{perturbation.pk}"
    assert document.tokens.tolist() == expected.token_offsets.tolist()
    assert document.sentences.tolist() == expected.sentence_ranges.tolist()
    assert document.tokenizer == tokenizer_name("en")
    assert item.declared_docids == [document.docid]
    assert ItemVariantFill.objects.filter(item=item, live=0).count() == 1
    event = checked.events.get(action="accepted")
    assert (event.actor, event.comment, event.changes) == (users["checker"], "Good.", {})


def test_an_edit_in_the_check_is_recorded_with_the_authors_version(project, users):
    perturbation = create(project, users["author"])
    better = REVIEW.replace("superb and moving", "superb , moving")

    checked = perturbation_check(
        project=project,
        perturbation_id=perturbation.pk,
        acting_user=users["checker"],
        decision="accept",
        edits={"texts": [better], "types": ["syntax"]},
    )

    assert checked.edited_in_check is True
    assert checked.item.documents.get().text == better
    assert checked.item.perturbation_types == ["syntax"]
    changes = checked.events.get(action="accepted").changes
    assert changes == {"texts": [[EDITED], [better]], "types": [["dispensable_words"], ["syntax"]]}


def test_edits_are_checked_as_drafts_are(project, users):
    perturbation = create(project, users["author"])

    with pytest.raises(ApplicationError, match=r"^texts: the perturbed example has the same"):
        perturbation_check(
            project=project,
            perturbation_id=perturbation.pk,
            acting_user=users["checker"],
            decision="accept",
            edits={"texts": [REVIEW]},
        )
    perturbation.refresh_from_db()
    assert perturbation.status == "pending" and not Item.objects.filter(
        perturbation_of__isnull=False
    )


def test_rejecting_needs_a_comment_and_makes_no_item(project, users):
    perturbation = create(project, users["author"])
    check = {
        "project": project,
        "perturbation_id": perturbation.pk,
        "acting_user": users["checker"],
        "decision": "reject",
    }

    with pytest.raises(ApplicationError, match=r"^comment: "):
        perturbation_check(**check, comment="  ")
    with pytest.raises(ApplicationError, match=r"^edits: "):
        perturbation_check(**check, comment="No.", edits={"label": "negative"})
    rejected = perturbation_check(**check, comment="Changes the meaning.")

    assert rejected.status == "rejected" and rejected.item is None
    assert rejected.check_comment == "Changes the meaning."
    assert rejected.events.get(action="rejected").comment == "Changes the meaning."
    assert not Item.objects.filter(perturbation_of__isnull=False).exists()


def test_the_author_can_never_check_their_own(project, users):
    admin = people(project, ("boss", Role.ADMIN))["boss"]
    perturbation = create(project, admin)

    with pytest.raises(PermissionDeniedError, match="another checker"):
        perturbation_check(
            project=project, perturbation_id=perturbation.pk, acting_user=admin, decision="accept"
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Perturbation.objects.filter(pk=perturbation.pk).update(checker=admin)


def test_a_decided_perturbation_cannot_be_decided_again(project, users):
    other_checker = people(project, ("checker2", Role.CHECKER))["checker2"]
    perturbation = create(project, users["author"])
    perturbation_check(
        project=project,
        perturbation_id=perturbation.pk,
        acting_user=users["checker"],
        decision="accept",
    )

    with pytest.raises(ConflictError, match="accepted already"):
        perturbation_check(
            project=project,
            perturbation_id=perturbation.pk,
            acting_user=other_checker,
            decision="reject",
            comment="Late.",
        )
    assert Item.objects.filter(perturbation_of__isnull=False).count() == 1


def test_perturbations_of_another_project_are_not_found(project, users):
    perturbation = create(project, users["author"])
    other = perturbation_project()

    with pytest.raises(NotFoundError):
        perturbation_check(
            project=other,
            perturbation_id=perturbation.pk,
            acting_user=users["checker"],
            decision="accept",
        )


def test_the_accepted_item_is_served_to_annotators(project, users):
    annotator = users["annotator"]
    for _ in range(2):  # the two originals first
        lease = assignment_next(project=project, worker=annotator)
        annotation_submit(
            assignment_id=lease.pk,
            worker=annotator,
            client_uuid=uuid.uuid4(),
            rationale_sets=[
                [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 1}]
            ],
            time_spent_ms=20_000,
        )
    assert assignment_next(project=project, worker=annotator) is None
    rejected = create(project, users["author"], texts=[REVIEW.replace("drags", "crawls")])
    perturbation_check(
        project=project,
        perturbation_id=rejected.pk,
        acting_user=users["checker"],
        decision="reject",
        comment="No.",
    )
    assert assignment_next(project=project, worker=annotator) is None

    accepted = create(project, users["author"])
    perturbation_check(
        project=project,
        perturbation_id=accepted.pk,
        acting_user=users["checker"],
        decision="accept",
    )
    lease = assignment_next(project=project, worker=annotator)

    assert lease.item.annotation_id == f"o0-p{accepted.pk}"
    assert lease.item.documents.get().text == EDITED


# ---------------------------------------------------------------- task types


def test_a_text_pair_shares_its_unchanged_text_with_the_original(db):
    project = perturbation_project(TaskType.SENTENCE_PAIR, items=1)
    users = people(project, ("author", Role.AUTHOR), ("checker", Role.CHECKER))
    original = project.items.get()
    changed = "What is the easiest way to learn cooking ?"

    perturbation = perturbation_create(
        project=project,
        original_id=original.pk,
        acting_user=users["author"],
        types=["dispensable_words"],
        texts=[PAIR[0], changed],
        label="similar",
    )
    item = perturbation_check(
        project=project,
        perturbation_id=perturbation.pk,
        acting_user=users["checker"],
        decision="accept",
    ).item

    links = list(item.item_documents.select_related("document").order_by("position"))
    originals = list(original.item_documents.select_related("document").order_by("position"))
    assert [link.position for link in links] == [0, 1]
    assert links[0].document == originals[0].document
    assert links[1].document.text == changed and links[1].document != originals[1].document
    assert Document.objects.filter(project=project).count() == 3


def reading_project():
    project = perturbation_project(TaskType.READING_COMPREHENSION, items=1)
    return project, people(project, ("author", Role.AUTHOR), ("checker", Role.CHECKER))


def test_reading_comprehension_answers_are_found_in_the_perturbed_passage(db):
    project, users = reading_project()
    original = project.items.get()
    passage = PASSAGE.replace("The Eiffel Tower", "Paris's tower")

    perturbation = perturbation_create(
        project=project,
        original_id=original.pk,
        acting_user=users["author"],
        types=["dispensable_words"],
        texts=[QUESTION, passage],
        answer={"text": "1889"},
    )
    item = perturbation_check(
        project=project,
        perturbation_id=perturbation.pk,
        acting_user=users["checker"],
        decision="accept",
    ).item

    start = passage.index("1889")
    assert perturbation.answer == {
        "document": 1,
        "start_char": start,
        "end_char": start + 4,
        "text": "1889",
    }
    question_link, passage_link = item.item_documents.order_by("position")
    assert item.answer == {
        "docid": passage_link.document.docid,
        "start_char": start,
        "end_char": start + 4,
        "text": "1889",
    }
    assert (question_link.role, passage_link.role) == (DocumentRole.QUESTION, DocumentRole.TEXT)
    assert question_link.document == original.item_documents.get(position=0).document
    assert item.query == QUESTION and item.label is None


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (None, "give the answer text"),
        ({"text": "1890"}, "'1890' does not occur in the perturbed passage"),
        ({"text": "It"}, "occurs 2 times"),
        ({"text": "1889", "start_char": 3}, "'1889' is not the perturbed passage text at [3, 7)"),
        ({"text": "Eiffel", "document": 0, "start_char": 4}, "text 0 is not a passage"),
        ({"text": "1889", "document": "1"}, "must be integers"),
    ],
)
def test_reading_comprehension_answers_must_be_in_a_passage(db, answer, words):
    project, users = reading_project()

    with pytest.raises(ApplicationError, match=r"^answer: ") as error:
        perturbation_create(
            project=project,
            original_id=project.items.get().pk,
            acting_user=users["author"],
            types=["syntax"],
            texts=[QUESTION, PASSAGE.replace("stands", "is") + " It is tall ."],
            answer=answer,
        )
    assert words in error.value.message


def test_the_query_follows_an_edited_question(db):
    project, users = reading_project()
    question = "When was the Louvre completed ?"

    perturbation = perturbation_create(
        project=project,
        original_id=project.items.get().pk,
        acting_user=users["author"],
        types=["important_words"],
        texts=[question, PASSAGE],
        query="ignored: the question document decides",
        answer={"none": True},
    )

    assert perturbation.answer == {"none": True} and perturbation.query == question


def test_multiple_choice_labels_name_an_option_and_the_options_stay(db):
    project = perturbation_project(items=0)
    project.task_type = TaskType.MULTIPLE_CHOICE
    project.labels = []
    project.save()
    original = original_item(
        project,
        "mc",
        ["Where would you keep milk ?"],
        query="fridge [sep] oven [sep] shelf",
        options=["fridge", "oven", "shelf"],
        label="fridge",
    )
    author = people(project, ("author", Role.AUTHOR))["author"]
    draft = {
        "project": project,
        "original_id": original.pk,
        "acting_user": author,
        "types": ["syntax"],
        "texts": ["Milk would be kept where ?"],
    }

    with pytest.raises(ApplicationError, match="'positive' is not one of the labels 'fridge'"):
        perturbation_create(**draft, label="positive")
    with pytest.raises(ApplicationError, match="options of a multiple-choice item"):
        perturbation_create(**draft, label="oven", query="fridge [sep] stove")
    perturbation = perturbation_create(**draft, label="oven")

    assert perturbation.query == "fridge [sep] oven [sep] shelf"


# ---------------------------------------------------------------- settings and progress


@pytest.mark.parametrize(
    ("types", "words"),
    [
        ([{"key": "Bad Key"}], "perturbation_types[0].key: 'Bad Key' must start"),
        ([{"key": "syntax"}], "is one of the built-in types"),
        ([{"key": "neg"}, {"key": "neg"}], "perturbation_types[1].key: 'neg' is given twice"),
        ([{"key": f"t{n}"} for n in range(21)], "at most 20 project types"),
    ],
)
def test_project_types_are_validated(project, types, words):
    with pytest.raises(ApplicationError) as error:
        perturbation_settings_update(project=project, perturbation_types=types)

    assert words in error.value.message
    project.refresh_from_db()
    assert project.perturbation_types == []


def test_a_type_in_use_cannot_be_removed(project, users):
    perturbation_settings_update(
        project=project, perturbation_types=[{"key": "negation"}, {"key": "typos"}]
    )
    project.refresh_from_db()
    create(project, users["author"], types=["negation"])

    with pytest.raises(ApplicationError, match="'negation' is the type of 1 perturbation"):
        perturbation_settings_update(project=project, perturbation_types=[{"key": "typos"}])
    updated = perturbation_settings_update(
        project=project, perturbation_types=[{"key": "negation", "name": "Negation"}]
    )

    assert updated.perturbation_types == [
        {"key": "negation", "name": "Negation", "description": ""}
    ]


def test_progress_counts_per_type_quota_and_check_figures(project, users):
    perturbation_settings_update(project=project, perturbations_per_type=2)
    project.refresh_from_db()
    checker = users["checker"]
    a = create(project, users["author"], types=["syntax", "dispensable_words"])
    b = create(project, users["author"], types=["syntax"], texts=[EDITED.replace("act", "scene")])
    c = create(project, users["author"], types=["important_words"], label="negative")
    create(project, users["author"], types=["syntax"], texts=[EDITED.replace("pacing", "pace")])
    perturbation_check(
        project=project, perturbation_id=a.pk, acting_user=checker, decision="accept"
    )
    perturbation_check(
        project=project,
        perturbation_id=b.pk,
        acting_user=checker,
        decision="accept",
        edits={"label": "negative"},
    )
    perturbation_check(
        project=project, perturbation_id=c.pk, acting_user=checker, decision="reject", comment="x"
    )

    progress = perturbation_progress(project=project)

    by_type = {row["key"]: row for row in progress["types"]}
    assert {
        k: (r["pending"], r["accepted"], r["rejected"], r["remaining"]) for k, r in by_type.items()
    } == {
        "dispensable_words": (0, 1, 0, 1),
        "important_words": (0, 0, 1, 2),
        "syntax": (1, 2, 0, 0),
    }
    assert progress["originals"] == {
        "total": 2,
        "below_quota": 1,
        "per_original_target": 1,
        "with_perturbations": 1,
    }
    assert progress["check"] == perturbation_check_figures(project=project)
    assert progress["check"] == {
        "pending": 1,
        "accepted": 2,
        "accepted_unchanged": 1,
        "accepted_edited": 1,
        "rejected": 1,
        "decided": 3,
        "accepted_unchanged_share": pytest.approx(1 / 3),
    }


def test_perturbed_items_a_benchmark_file_brought_count_as_accepted(project, users):
    """Copies imported with their links were checked where they were made: they count
    toward the quotas as accepted, beside the drafts accepted here."""
    perturbation_settings_update(project=project, perturbations_per_type=2)
    project.refresh_from_db()
    original = project.items.get(annotation_id="o0")
    Item.objects.create(
        project=project,
        annotation_id="o0-imported",
        perturbation_of=original,
        perturbation_types=["syntax"],
        label="positive",
    )
    create(project, users["author"], types=["syntax"])

    progress = perturbation_progress(project=project)

    syntax = next(row for row in progress["types"] if row["key"] == "syntax")
    assert (syntax["pending"], syntax["accepted"], syntax["remaining"]) == (1, 1, 1)
    assert progress["originals"]["below_quota"] == 1  # o0 has its copy; o1 has none
    assert progress["originals"]["with_perturbations"] == 1


def test_an_original_with_its_own_labels_list_accepts_any_label_when_the_project_has_none(db):
    project = perturbation_project(items=0)
    project.labels = []
    project.save()
    original = original_item(project, "x", ["Some words here ."], label="anything")
    author = people(project, ("author", Role.AUTHOR))["author"]

    perturbation = perturbation_create(
        project=project,
        original_id=original.pk,
        acting_user=author,
        types=["syntax"],
        texts=["Here are some words ."],
        label="whatever",
    )

    assert perturbation.label == "whatever"


def test_the_originals_table_and_its_filter_count_accepted_copies_as_the_progress_does(
    project, users
):
    """One definition of an original's accepted perturbations for the whole page: an
    imported copy counts in the table's Accepted column, keeps its original out of the
    "below quota" filter, and the filter lists exactly as many originals as the progress's
    figure says are below quota."""
    original = project.items.get(annotation_id="o0")
    Item.objects.create(
        project=project,
        annotation_id="o0-imported",
        perturbation_of=original,
        perturbation_types=["syntax"],
        label="positive",
    )
    create(project, users["author"], types=["syntax"])  # a pending draft on o0

    rows = {item.annotation_id: item for item in perturbation_original_list(project=project)}
    below = perturbation_original_list(project=project, below_quota=True)

    assert (rows["o0"].perturbations_accepted, rows["o0"].perturbations_pending) == (1, 1)
    assert rows["o1"].perturbations_accepted == 0
    assert [item.annotation_id for item in below] == ["o1"]
    assert below.count() == perturbation_progress(project=project)["originals"]["below_quota"]
