"""The fine-grained benchmark's demo (after demo_setup). Only for `make run` on a dev machine.

Three projects, one per gold file in annotate/demo_data/fine_grained/ (written by its
make_demo.py): English sentiment, Chinese similarity, English reading comprehension, each
with originals and perturbed copies linked as the file says. The perturbation step of the
English sentiment project is left mid-way, so the README's walk has something to do: one
draft by demo-author accepted by demo-checker, one rejected with a comment, one pending.
Running it again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.management.commands.demo_setup import demo_password
from annotate.models import (
    ImportFormat,
    Item,
    Perturbation,
    PerturbationType,
    Project,
    Role,
    TaskType,
)
from annotate.services import (
    dataset_import,
    membership_add,
    perturbation_check,
    perturbation_create,
    perturbation_settings_update,
    project_create,
    project_update_policy,
    variant_create,
)

DEMO_DATA = Path(__file__).resolve().parents[2] / "demo_data" / "fine_grained"


@dataclass(frozen=True)
class DemoProject:
    name: str
    file: str
    task_type: str
    language: str
    labels: list[str]
    description: str
    instruction: str
    text_names: list[str] = field(default_factory=list)
    # The benchmark's sentiment gold holds alternative rationale sets; its annotators were
    # asked for one set per group of words that justifies the label by itself.
    multi_set_mode: bool = False


SENTIMENT = DemoProject(
    name="Demo: fine-grained sentiment (English)",
    file="sentiment_en.jsonl",
    task_type=TaskType.CLASSIFICATION,
    language="en",
    labels=["negative", "positive"],
    description="Short reviews written for this demo, with perturbed copies of three types. "
    "Authors write more copies, checkers accept or reject them, annotators mark rationales.",
    instruction="Read the text and its label. Mark each word of the text that supports this label.",
    multi_set_mode=True,
)
DEMO_PROJECTS = [
    SENTIMENT,
    DemoProject(
        name="Demo: fine-grained similarity (Chinese)",
        file="similarity_zh.jsonl",
        task_type=TaskType.SENTENCE_PAIR,
        language="zh",
        labels=["dissimilar", "similar"],
        description="Pairs of Chinese questions written for this demo (one token per "
        "character), with perturbed copies.",
        # In the annotators' language, with an English gloss for the newcomer on the tour.
        instruction="阅读两个问句及其标签，在每个问句中标出使两者相似或不相似的字。"  # noqa: RUF001
        " (Read both questions and their label; in each, mark the characters that make the two "
        "similar or dissimilar.)",
        text_names=["问句 A", "问句 B"],
    ),
    DemoProject(
        name="Demo: fine-grained reading comprehension (English)",
        file="reading_comprehension_en.jsonl",
        task_type=TaskType.READING_COMPREHENSION,
        language="en",
        labels=[],
        description="Questions on short passages written for this demo, with perturbed "
        "copies; one perturbed question has no answer in its passage.",
        instruction="Read the question, then the passage and its answer. Mark the words of the "
        "passage that give the answer, or, when it has none, that show what it does say.",
    ),
]

# demo_setup's users, by their role in every fine-grained project (demo-admin creates them
# and is their admin), then the two this demo adds for the perturbation step.
EXISTING_MEMBERS = [
    ("demo-researcher", Role.RESEARCHER),
    ("demo-reviewer", Role.REVIEWER),
    ("demo-reviewer2", Role.REVIEWER),
    ("demo-annotator", Role.ANNOTATOR),
    ("demo-annotator2", Role.ANNOTATOR),
]
NEW_MEMBERS = [("demo-author", Role.AUTHOR), ("demo-checker", Role.CHECKER)]


@dataclass(frozen=True)
class DemoDraft:
    """A perturbation demo-author wrote of a sentiment original (its sent_id), and what
    demo-checker decided: "accept", "reject", or None (still pending)."""

    original: int
    types: list[str]
    text: str
    label: str
    decision: str | None
    comment: str = ""


# The texts are the originals' documents edited: the import keeps the gold's tokens joined
# by spaces, and an author edits that text.
DEMO_DRAFTS = [
    DemoDraft(
        original=9,
        types=[PerturbationType.DISPENSABLE_WORDS],
        text="The bus was late again this morning and nobody told us why .",
        label="negative",
        decision="accept",
        comment="A time phrase only; the label and the opinion words stand.",
    ),
    DemoDraft(
        original=10,
        types=[PerturbationType.IMPORTANT_WORDS],
        text="The garden looked lovely in the autumn rain .",
        label="positive",
        decision="reject",
        comment="Spring to autumn changes no word the label rests on: that is a dispensable "
        "word. Alter 'lovely', or change the type.",
    ),
    DemoDraft(
        original=10,
        types=[PerturbationType.SYNTAX],
        text="In the spring rain the garden looked lovely .",
        label="positive",
        decision=None,
    ),
]


class Command(BaseCommand):
    help = (
        "Create the fine-grained benchmark's demo projects, users and perturbation drafts "
        "(after demo_setup; refuses to run unless DEBUG is on)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="run even with DEBUG off")

    @transaction.atomic
    def handle(self, *args, force: bool, **options):
        if not settings.DEBUG and not force:
            raise CommandError("demo users have known passwords: refusing with DEBUG off")
        users = self._users()
        projects, summaries = {}, {}
        for spec in DEMO_PROJECTS:
            projects[spec.name], summaries[spec.name] = self._project(spec, users)
        made = self._drafts(projects[SENTIMENT.name], users)
        for name, project in projects.items():
            summary = summaries[name]
            perturbed = Item.objects.filter(project=project, perturbation_of__isnull=False)
            self.stdout.write(
                f"Demo project {name!r}: {summary.items_created} new items, "
                f"{summary.items_unchanged} already present; {perturbed.count()} of all "
                f"{project.items.count()} are perturbed copies."
            )
        counts = {
            status: Perturbation.objects.filter(
                project=projects[SENTIMENT.name], status=status
            ).count()
            for status in ("pending", "accepted", "rejected")
        }
        self.stdout.write(
            f"Perturbation drafts in {SENTIMENT.name!r}: {made} new; "
            + ", ".join(f"{n} {status}" for status, n in counts.items())
            + " (demo-author writes, demo-checker checks)."
        )
        self.stdout.write("Fine-grained demo users (user / password / role):")
        for username, role in NEW_MEMBERS:
            self.stdout.write(f"  {username} / {demo_password(username)} / {role}")

    def _users(self) -> dict:
        user_model = get_user_model()
        wanted = ["demo-admin", *(name for name, _ in EXISTING_MEMBERS)]
        users = {u.username: u for u in user_model.objects.filter(username__in=wanted)}
        missing = [name for name in wanted if name not in users]
        if missing:
            raise CommandError(f"run `manage.py demo_setup` first (missing {', '.join(missing)})")
        for username, _ in NEW_MEMBERS:
            user, _ = user_model.objects.get_or_create(username=username)
            user.set_password(demo_password(username))
            user.save()
            users[username] = user
        return users

    def _project(self, spec: DemoProject, users: dict):
        project = Project.objects.filter(name=spec.name).first()
        if project is None:
            project = project_create(
                name=spec.name,
                acting_user=users["demo-admin"],
                description=spec.description,
                task_type=spec.task_type,
                labels=spec.labels,
                language=spec.language,
                # Two demo annotators and two reviewers: every item can fill and be judged.
                annotators_per_item=2,
                text_names=spec.text_names,
            )
            if spec.multi_set_mode:
                project = project_update_policy(project=project, multi_set_mode=True)
            if spec is SENTIMENT:
                # A per-type target, so the progress table has something to count toward.
                project = perturbation_settings_update(project=project, perturbations_per_type=2)
        for username, role in [*EXISTING_MEMBERS, *NEW_MEMBERS]:
            membership_add(project=project, user=users[username], role=role)
        summary = dataset_import(
            project=project, path=DEMO_DATA / spec.file, source_format=ImportFormat.BENCHMARK
        )
        if not project.variants.exists():
            variant_create(project=project, name="fine-grained", text=spec.instruction)
        return project, summary

    def _drafts(self, project: Project, users: dict) -> int:
        author, checker = users["demo-author"], users["demo-checker"]
        made = 0
        for draft in DEMO_DRAFTS:
            original = Item.objects.get(project=project, annotation_id=str(draft.original))
            written = Perturbation.objects.filter(project=project, original=original, author=author)
            if any(texts == [draft.text] for texts in written.values_list("texts", flat=True)):
                continue
            perturbation = perturbation_create(
                project=project,
                original_id=original.pk,
                acting_user=author,
                types=list(draft.types),
                texts=[draft.text],
                label=draft.label,
            )
            if draft.decision is not None:
                perturbation_check(
                    project=project,
                    perturbation_id=perturbation.pk,
                    acting_user=checker,
                    decision=draft.decision,
                    comment=draft.comment,
                )
            made += 1
        return made
