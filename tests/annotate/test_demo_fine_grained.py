"""`manage.py demo_fine_grained`, which `make run` calls after demo_setup: three projects of
the fine-grained benchmark's tasks from the shipped gold files, their perturbation links, the
perturbation step left mid-way, and a second run that changes nothing. Also: the shipped
files are what their script writes, and the README's scoring commands run on them."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.demo_data.fine_grained import make_demo
from annotate.management.commands.demo_fine_grained import DEMO_DATA, EXISTING_MEMBERS
from annotate.models import (
    InstructionVariant,
    Item,
    Perturbation,
    PerturbationEvent,
    Project,
    ProjectMembership,
    TaskType,
)
from annotate.services import perturbation_check
from config.exceptions import PermissionDeniedError
from rationale_metrics import cli
from rationale_metrics.benchmark_format import read_benchmark_gold
from tests.conftest import client_for

SENTIMENT = "Demo: fine-grained sentiment (English)"
SIMILARITY = "Demo: fine-grained similarity (Chinese)"
READING = "Demo: fine-grained reading comprehension (English)"


@pytest.fixture
def demo_users(db, settings):
    """The users demo_setup makes (demo_setup itself also simulates a whole study, which
    this command does not need)."""
    settings.DEBUG = True
    user_model = get_user_model()
    for username in ["demo-admin", *(name for name, _ in EXISTING_MEMBERS)]:
        user_model.objects.create_user(username=username, password=f"{username}-pass")


def snapshot() -> dict:
    return {
        "projects": sorted(Project.objects.values_list("name", flat=True)),
        "items": Item.objects.count(),
        "memberships": ProjectMembership.objects.count(),
        "variants": InstructionVariant.objects.count(),
        "perturbations": sorted(Perturbation.objects.values_list("status", flat=True)),
        "events": PerturbationEvent.objects.count(),
        "users": get_user_model().objects.count(),
    }


def item(project, annotation_id) -> Item:
    return Item.objects.get(project=project, annotation_id=annotation_id)


def test_a_second_run_changes_nothing(demo_users, capsys):
    call_command("demo_fine_grained")
    first = snapshot()
    call_command("demo_fine_grained")

    assert snapshot() == first
    assert first["perturbations"] == ["accepted", "pending", "rejected"]
    out = capsys.readouterr().out
    assert "demo-author / demo-author-pass / author" in out
    assert "demo-checker / demo-checker-pass / checker" in out
    assert "0 new items, 23 already present" in out


def test_the_projects_have_their_task_types_languages_and_members(demo_users):
    call_command("demo_fine_grained")

    projects = {p.name: p for p in Project.objects.all()}
    assert {
        name: (p.task_type, p.language, p.labels, p.items.count()) for name, p in projects.items()
    } == {
        SENTIMENT: (TaskType.CLASSIFICATION, "en", ["negative", "positive"], 24),
        SIMILARITY: (TaskType.SENTENCE_PAIR, "zh", ["dissimilar", "similar"], 15),
        READING: (TaskType.READING_COMPREHENSION, "en", [], 12),
    }
    assert projects[SENTIMENT].multi_set_mode
    for project in projects.values():
        roles = {
            (m.user.username, m.role)
            for m in ProjectMembership.objects.filter(project=project).select_related("user")
        }
        assert roles == {
            ("demo-admin", "admin"),
            *EXISTING_MEMBERS,
            ("demo-author", "author"),
            ("demo-checker", "checker"),
        }
        assert project.variants.filter(active=True).count() == 1
    # Chinese pairs: one token per character, each text a document of its own.
    pair = item(projects[SIMILARITY], "1")
    first, second = (link.document for link in pair.item_documents.order_by("position"))
    assert (first.text, first.token_texts()) == ("怎样才能学会做饭？", list("怎样才能学会做饭？"))
    assert second.text == "做饭要怎么学？"


def test_perturbed_copies_are_linked_to_their_originals(demo_users):
    call_command("demo_fine_grained")

    sentiment = Project.objects.get(name=SENTIMENT)
    similarity = Project.objects.get(name=SIMILARITY)
    reading = Project.objects.get(name=READING)
    assert item(sentiment, "101").perturbation_of == item(sentiment, "1")
    assert item(sentiment, "102").perturbation_types == ["important_words"]
    assert item(sentiment, "102").label == "positive"
    assert item(similarity, "201").perturbation_of == item(similarity, "2")
    assert item(similarity, "201").perturbation_types == ["syntax"]
    assert item(reading, "101").perturbation_of == item(reading, "1")
    assert item(reading, "101").answer == {"none": True}
    assert item(reading, "2").answer["text"] == "Ada Brenner"
    # Every perturbed line of each file links to the original that lists it, and the
    # paper's three types all occur in each project.
    for project, name, task, language in (
        (sentiment, "sentiment_en.jsonl", "sentiment", "en"),
        (similarity, "similarity_zh.jsonl", "similarity", "zh"),
        (reading, "reading_comprehension_en.jsonl", "reading_comprehension", "en"),
    ):
        gold = read_benchmark_gold(DEMO_DATA / name, task, language)
        links = {str(copy): str(line.sent_id) for line in gold for copy in line.rel_ids}
        assert links and len(links) == sum(not line.is_original for line in gold)
        for copy, original in links.items():
            assert item(project, copy).perturbation_of.annotation_id == original
        types = {t for line in gold for t in item(project, str(line.sent_id)).perturbation_types}
        assert types == {"dispensable_words", "important_words", "syntax"}


def test_the_perturbation_step_is_left_mid_way(demo_users):
    call_command("demo_fine_grained")

    project = Project.objects.get(name=SENTIMENT)
    drafts = {p.status: p for p in Perturbation.objects.filter(project=project)}
    assert {p.author.username for p in drafts.values()} == {"demo-author"}
    accepted, rejected, pending = drafts["accepted"], drafts["rejected"], drafts["pending"]
    assert accepted.checker.username == rejected.checker.username == "demo-checker"
    assert accepted.item.perturbation_of == item(project, "9")
    assert accepted.item.annotation_id == f"9-p{accepted.pk}"
    assert rejected.item is None and "dispensable" in rejected.check_comment
    assert pending.checker is None and pending.original == item(project, "10")
    assert pending.types == ["syntax"]


def test_the_author_cannot_check_their_own_draft(demo_users):
    call_command("demo_fine_grained")
    project = Project.objects.get(name=SENTIMENT)
    pending = Perturbation.objects.get(project=project, status="pending")
    author = get_user_model().objects.get(username="demo-author")

    with pytest.raises(PermissionDeniedError, match="another checker"):
        perturbation_check(
            project=project, perturbation_id=pending.pk, acting_user=author, decision="accept"
        )
    response = client_for(author).post(
        reverse("annotate:perturbation-check", args=[project.id, pending.pk]),
        {"decision": "accept"},
        format="json",
    )

    assert response.status_code == 403
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_it_refuses_without_debug_or_without_demo_setup(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="refusing with DEBUG off"):
        call_command("demo_fine_grained")
    settings.DEBUG = True
    with pytest.raises(CommandError, match=r"run `manage\.py demo_setup` first"):
        call_command("demo_fine_grained")
    assert not Project.objects.exists()


def test_the_shipped_gold_files_are_what_make_demo_writes(tmp_path):
    make_demo.main(tmp_path)

    for name in make_demo.FILES:
        assert (tmp_path / name).read_bytes() == (DEMO_DATA / name).read_bytes(), name


@pytest.mark.parametrize(
    ("task", "language", "name"),
    [("sentiment", "en", "sentiment_en.jsonl"), ("similarity", "zh", "similarity_zh.jsonl")],
)
def test_the_readme_scores_the_demo_files(tmp_path, task, language, name):
    gold = str(DEMO_DATA / name)
    predictions, scores = tmp_path / "pred.jsonl", tmp_path / "scores.json"
    common = ["--task", task, "--language", language, "--golden_path", gold]

    assert (
        cli.main(["explain", *common, "--explainer", "occlusion", "--results", str(predictions)])
        == 0
    )
    assert (
        cli.main(
            ["fine-grained", *common, "--pred_path", str(predictions), "--score_file", str(scores)]
        )
        == 0
    )

    figures = json.loads(scores.read_text())
    for value in (
        figures["plausibility"]["token_f1"],
        figures["consistency"]["map"],
        figures["faithfulness"]["new_p"],
    ):
        assert 0 <= value <= 1
    assert figures["counts"]["pairs_scored"] == figures["counts"]["perturbed"] > 0
