"""The instruction study's presets: each differs from the project's base instruction in
the factor it names and nothing else; preset sets per kind of task; the multi-set option."""

import re
from collections import Counter
from difflib import SequenceMatcher

import pytest
from django.urls import reverse

from annotate.models import InstructionVariant, ProjectMembership, Role, TaskType
from annotate.services import assignment_next, variant_presets_install
from annotate.variant_presets import (
    BASE_FACTORS,
    MULTI_SET_SENTENCE,
    PRESET_TASKS,
    base_text,
    study_presets,
    variant_display_text,
)
from config.exceptions import ApplicationError
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory

# ---------------------------------------------------------------- the factor diff


def words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=\.) ", text)


def changed_words(base: str, other: str) -> tuple[Counter, Counter]:
    """The words only `base` has and the words only `other` has, by a word-level diff."""
    a, b = words(base), words(other)
    removed, added = Counter(), Counter()
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed.update(a[i1:i2])
            added.update(b[j1:j2])
    return removed, added


def expected_wording_change(changes: dict) -> tuple[Counter, Counter]:
    removed, added = Counter(), Counter()
    for factor in ("noun", "relation"):
        if factor in changes:
            removed.update(words(BASE_FACTORS[factor]))
            added.update(words(changes[factor]))
    return removed, added


@pytest.mark.parametrize("task", PRESET_TASKS)
def test_each_preset_differs_from_the_base_in_its_named_factor_only(task):
    base = base_text(task)
    presets = study_presets(task)
    assert len(presets) == 7 and len({p["name"] for p in presets}) == 7

    for preset in presets:
        changes, text = preset["changes"], preset["text"]
        assert set(changes) <= set(BASE_FACTORS), preset["name"]
        if "definition" in changes:
            assert set(changes) == {"definition"}
            # One sentence replaced, in place: the base's definition (the one that names the
            # relation) by the counterfactual one; every other sentence as in the base.
            ours, theirs = sentences(base), sentences(text)
            differ = [i for i, (x, y) in enumerate(zip(ours, theirs, strict=True)) if x != y]
            assert len(differ) == 1, preset["name"]
            assert BASE_FACTORS["relation"] in ours[differ[0]]
            assert "deleted" in theirs[differ[0]] and "less certain" in theirs[differ[0]]
            assert BASE_FACTORS["relation"] not in theirs[differ[0]]
            assert f"each {BASE_FACTORS['noun']} of" in theirs[differ[0]]  # noun kept
            assert preset["examples"] == []
        elif "examples" in changes:
            assert set(changes) == {"examples"}
            assert text == base, preset["name"]  # only the examples differ
            assert preset["examples"], preset["name"]
        else:
            assert changed_words(base, text) == expected_wording_change(changes), preset["name"]
            assert preset["examples"] == []
    untouched = [p for p in presets if not p["changes"]]
    assert [p["text"] for p in untouched] == [base]


@pytest.mark.parametrize("task", PRESET_TASKS)
def test_the_two_guides_mark_the_same_texts_minimal_words_against_whole_spans(task):
    presets = {p["name"]: p for p in study_presets(task)}
    minimal = presets["guide-minimal-words"]["examples"]
    spans = presets["guide-whole-spans"]["examples"]

    assert len(minimal) == len(spans) >= 3
    for small, large in zip(minimal, spans, strict=True):
        assert small["tokens"] == large["tokens"] and small["label"] == large["label"]
        assert small.get("note") == large.get("note")  # nothing but the highlights differ
        assert small["highlighted"] and set(small["highlighted"]) < set(large["highlighted"])
    assert sum(len(e["highlighted"]) for e in minimal) * 2 < sum(
        len(e["highlighted"]) for e in spans
    )
    labels = {e["label"] for e in minimal}
    if task == "classification":
        assert labels == {"positive", "negative"}
    else:
        assert len(labels) == len(minimal)  # one question per answer
        assert all(e["label"] in e["options"] for e in minimal)
        assert all(e["tokens"][-1] == "?" for e in minimal)


@pytest.mark.parametrize("task", PRESET_TASKS)
def test_presets_are_the_projects_own_wording_without_the_multi_set_sentence(task):
    for preset in study_presets(task):
        text = preset["text"].lower()
        # Phrases of the study's own instructions, which this project does not reuse.
        for phrase in ("label them", "decrease your confidence", "ground truth", "extract"):
            assert phrase not in text, (preset["name"], phrase)
        assert MULTI_SET_SENTENCE not in preset["text"]
        assert "more than one" not in text and "rationale set" not in text


def test_the_display_text_appends_the_multi_set_sentence_only_when_on():
    assert variant_display_text("Mark words.", multi_set=False) == "Mark words."
    assert (
        variant_display_text("Mark words.", multi_set=True) == f"Mark words. {MULTI_SET_SENTENCE}"
    )


# ---------------------------------------------------------------- installing


def test_presets_follow_the_projects_task_type(db):
    sentiment = make_project(variants=())
    choice = make_project(variants=(), task_type=TaskType.MULTIPLE_CHOICE)

    variant_presets_install(project=sentiment)
    variant_presets_install(project=choice)

    assert "this label" in sentiment.variants.get(name="word-supports").text
    assert "answer options" in choice.variants.get(name="word-supports").text
    guide = choice.variants.get(name="guide-whole-spans")
    assert guide.text == base_text("multiple_choice") and guide.examples[0]["options"]


def test_a_task_parameter_chooses_the_set_and_an_unworded_task_type_needs_it(db):
    pair = make_project(variants=(), task_type=TaskType.SENTENCE_PAIR)

    with pytest.raises(ApplicationError, match=r"task: .*'sentence_pair' has none"):
        variant_presets_install(project=pair)
    created = variant_presets_install(project=pair, task="classification")

    assert len(created) == 7 and not InstructionVariant.objects.filter(text="").exists()


@pytest.fixture
def members(db):
    project = make_project(variants=(), task_type=TaskType.MULTIPLE_CHOICE)
    users = {}
    for role in (Role.ADMIN, Role.RESEARCHER, Role.REVIEWER, Role.ANNOTATOR):
        users[role] = UserFactory(username=f"preset-{role}")
        ProjectMembership.objects.create(project=project, user=users[role], role=role)
    users["outsider"] = UserFactory(username="preset-outsider")
    return project, users


@pytest.mark.parametrize(
    ("who", "code"),
    [
        (Role.ADMIN, 201),
        (Role.RESEARCHER, 403),
        (Role.REVIEWER, 403),
        (Role.ANNOTATOR, 403),
        ("outsider", 404),
    ],
)
def test_install_api_roles(members, who, code):
    project, users = members
    url = reverse("annotate:variant-presets", args=[project.id])

    response = client_for(users[who]).post(url, {"task": "classification"}, format="json")

    assert response.status_code == code
    assert project.variants.exists() == (code == 201)
    if code == 201:
        assert "this label" in response.data[0]["text"]


def test_install_api_refuses_anonymous_and_another_projects_admin(members, api_client):
    project, _ = members
    other = make_project(variants=())
    stranger = UserFactory(username="preset-other-admin")
    ProjectMembership.objects.create(project=other, user=stranger, role=Role.ADMIN)
    url = reverse("annotate:variant-presets", args=[project.id])

    assert api_client.post(url, {}, format="json").status_code == 401
    assert client_for(stranger).post(url, {}, format="json").status_code == 404
    assert not project.variants.exists()


def test_install_api_bad_input_names_the_field(members):
    project, users = members
    pair = make_project(variants=(), task_type=TaskType.SENTENCE_PAIR)
    ProjectMembership.objects.create(project=pair, user=users[Role.ADMIN], role=Role.ADMIN)
    client = client_for(users[Role.ADMIN])

    unknown = client.post(
        reverse("annotate:variant-presets", args=[project.id]), {"task": "nli"}, format="json"
    )
    unworded = client.post(reverse("annotate:variant-presets", args=[pair.id]), format="json")

    assert unknown.status_code == 400 and "task" in unknown.data
    assert unworded.status_code == 400 and unworded.data["field"] == "task"
    assert not project.variants.exists() and not pair.variants.exists()


def test_install_without_a_body_still_uses_the_task_type(members):
    project, users = members

    response = client_for(users[Role.ADMIN]).post(
        reverse("annotate:variant-presets", args=[project.id])
    )

    assert response.status_code == 201 and len(response.data) == 7
    assert "answer options" in response.data[0]["text"]


# ---------------------------------------------------------------- the multi-set option


def test_multi_set_mode_appends_the_sentence_to_what_annotators_see(members):
    project, users = members
    admin = client_for(users[Role.ADMIN])
    admin.post(reverse("annotate:variant-presets", args=[project.id]))

    response = admin.patch(
        reverse("annotate:project-policy", args=[project.id]), {"multi_set_mode": True}, "json"
    )
    served = client_for(users[Role.ANNOTATOR]).post(
        reverse("annotate:assignment-next", args=[project.id])
    )

    assert response.status_code == 200 and response.data["multi_set_mode"] is True
    stored = project.variants.get(name=served.data["variant"]["name"]).text
    assert MULTI_SET_SENTENCE not in stored  # stored texts stay one factor apart
    assert served.data["variant"]["text"] == f"{stored} {MULTI_SET_SENTENCE}"


def test_multi_set_mode_is_fixed_once_a_variant_was_used(members):
    project, users = members
    variant_presets_install(project=project)
    assignment_next(project=project, worker=users[Role.ANNOTATOR])

    response = client_for(users[Role.ADMIN]).patch(
        reverse("annotate:project-policy", args=[project.id]), {"multi_set_mode": True}, "json"
    )

    assert response.status_code == 400 and response.data["field"] == "multi_set_mode"
    project.refresh_from_db()
    assert project.multi_set_mode is False


@pytest.mark.parametrize(
    ("who", "code"),
    [
        (Role.ADMIN, 200),
        (Role.RESEARCHER, 403),
        (Role.REVIEWER, 403),
        (Role.ANNOTATOR, 403),
        ("outsider", 404),
    ],
)
def test_multi_set_mode_is_set_by_admins_only(members, who, code):
    project, users = members
    url = reverse("annotate:project-policy", args=[project.id])

    response = client_for(users[who]).patch(url, {"multi_set_mode": True}, format="json")

    assert response.status_code == code
    project.refresh_from_db()
    assert project.multi_set_mode == (code == 200)


def test_multi_set_mode_bad_input(members, api_client):
    project, users = members
    url = reverse("annotate:project-policy", args=[project.id])

    wrong_type = client_for(users[Role.ADMIN]).patch(url, {"multi_set_mode": "maybe"}, "json")
    anonymous = api_client.patch(url, {"multi_set_mode": True}, format="json")

    assert wrong_type.status_code == 400 and "multi_set_mode" in wrong_type.data
    assert anonymous.status_code == 401
    project.refresh_from_db()
    assert project.multi_set_mode is False
