from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from annotate.models import InstructionVariant, Project, WorkerVariantBinding
from annotate.services.assignments import fill_rows_sync
from annotate.variant_presets import PRESET_TASKS, preset_task_for, study_presets
from config.exceptions import ApplicationError


def _check_examples(examples: list) -> list:
    if not isinstance(examples, list):
        raise ApplicationError("examples must be a list")
    for i, example in enumerate(examples):
        tokens = example.get("tokens") if isinstance(example, dict) else None
        highlighted = example.get("highlighted") if isinstance(example, dict) else None
        if (
            not isinstance(tokens, list)
            or not tokens
            or not all(isinstance(t, str) and t for t in tokens)
        ):
            raise ApplicationError(f"examples[{i}].tokens must be a list of non-empty strings")
        if not isinstance(highlighted, list) or not all(
            isinstance(h, int) and 0 <= h < len(tokens) for h in highlighted
        ):
            raise ApplicationError(
                f"examples[{i}].highlighted must list token positions in [0, {len(tokens)})"
            )
        note = example.get("note", "")
        if not isinstance(note, str):
            raise ApplicationError(f"examples[{i}].note must be a string")
    return examples


@transaction.atomic
def variant_create(
    *,
    project: Project,
    name: str,
    text: str,
    granularity: str = "word",
    examples: list | None = None,
) -> InstructionVariant:
    if InstructionVariant.objects.filter(project=project, name=name).exists():
        raise ApplicationError(
            f"a variant named {name!r} already exists; edit it to make a new version"
        )
    variant = InstructionVariant.objects.create(
        project=project,
        name=name,
        text=text,
        granularity=granularity,
        examples=_check_examples(examples or []),
    )
    fill_rows_sync(project=project, variant=variant)
    return variant


@transaction.atomic
def variant_update(*, variant: InstructionVariant, **changes) -> InstructionVariant:
    """Edit a variant. Once an assignment has used it, it is frozen: the edit becomes a new
    version, the old one is retired and workers bound to it move to the new one."""
    variant = InstructionVariant.objects.select_for_update(no_key=True).get(pk=variant.pk)
    if "examples" in changes:
        _check_examples(changes["examples"])
    # `suggestions` only through exports.suggestions, which checks the run.
    allowed = {"text", "granularity", "examples", "active", "suggestions"}
    unknown = set(changes) - allowed
    if unknown:
        raise ApplicationError(f"cannot change {', '.join(sorted(unknown))}")
    if variant.frozen_at is None:
        for key, value in changes.items():
            setattr(variant, key, value)
        variant.save()
        return variant
    if set(changes) == {"active"}:
        variant.active = changes["active"]
        variant.save(update_fields=["active"])
        return variant
    latest = InstructionVariant.objects.filter(
        project=variant.project, name=variant.name
    ).aggregate(Max("version"))["version__max"]
    fresh = InstructionVariant.objects.create(
        project=variant.project,
        name=variant.name,
        version=latest + 1,
        text=changes.get("text", variant.text),
        granularity=changes.get("granularity", variant.granularity),
        examples=changes.get("examples", variant.examples),
        suggestions=changes.get("suggestions", variant.suggestions),
        active=changes.get("active", True),
    )
    InstructionVariant.objects.filter(project=variant.project, name=variant.name).exclude(
        pk=fresh.pk
    ).update(active=False)
    WorkerVariantBinding.objects.filter(
        variant__project=variant.project, variant__name=variant.name
    ).update(variant=fresh)
    fill_rows_sync(project=variant.project, variant=fresh)
    return fresh


@transaction.atomic
def variant_presets_install(
    *, project: Project, task: str | None = None
) -> list[InstructionVariant]:
    """Add the seven study variants that the project does not have yet, worded for `task`
    (single-text classification or multiple choice; by default the project's task type)."""
    chosen = task or preset_task_for(project.task_type)
    if chosen not in PRESET_TASKS:
        given = (
            f"{task!r} is not one of them"
            if task
            else f"this project's task type {str(project.task_type)!r} has none"
        )
        raise ApplicationError(
            f"task: the study's presets are worded for {' and '.join(PRESET_TASKS)}; {given}",
            extra={"field": "task"},
        )
    existing = set(
        InstructionVariant.objects.filter(project=project).values_list("name", flat=True)
    )
    return [
        variant_create(
            project=project,
            name=preset["name"],
            text=preset["text"],
            granularity=preset["granularity"],
            examples=preset["examples"],
        )
        for preset in study_presets(chosen)
        if preset["name"] not in existing
    ]
