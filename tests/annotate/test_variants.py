"""Instruction variants: presets, versioning once frozen, validation."""

import pytest

from annotate.models import InstructionVariant, WorkerVariantBinding
from annotate.services import assignment_next, variant_presets_install, variant_update
from config.exceptions import ApplicationError
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory


def test_the_seven_study_presets(db):
    project = make_project(variants=())

    created = variant_presets_install(project=project)
    again = variant_presets_install(project=project)

    names = [v.name for v in created]
    assert len(names) == 7 and again == []
    assert {"word-supports", "word-critical", "part-supports", "part-critical"} <= set(names)
    counterfactual = InstructionVariant.objects.get(project=project, name="counterfactual")
    assert "less certain" in counterfactual.text
    minimal = InstructionVariant.objects.get(project=project, name="guide-minimal-words").examples[
        0
    ]
    spans = InstructionVariant.objects.get(project=project, name="guide-whole-spans").examples[0]
    assert minimal["tokens"] == spans["tokens"]
    assert len(minimal["highlighted"]) < len(spans["highlighted"])


def test_an_unused_variant_is_edited_in_place(db):
    project = make_project(variants=("v",))
    variant = project.variants.get()

    edited = variant_update(variant=variant, text="New words.")

    assert edited.pk == variant.pk and edited.version == 1 and edited.text == "New words."


def test_a_used_variant_is_frozen_and_an_edit_makes_a_new_version(db):
    project = make_project(variants=("v",))
    worker = UserFactory()
    used = assignment_next(project=project, worker=worker).variant

    fresh = variant_update(variant=used, text="Clearer words.")

    used.refresh_from_db()
    assert (fresh.version, fresh.active, fresh.text) == (2, True, "Clearer words.")
    assert used.text.startswith("Highlight words") and not used.active and used.frozen_at
    assert WorkerVariantBinding.objects.get(worker=worker).variant == fresh


@pytest.mark.parametrize(
    "examples",
    [
        [{"tokens": ["a"], "highlighted": [3]}],
        [{"tokens": [], "highlighted": []}],
        [{"tokens": ["a"], "highlighted": [0], "note": 5}],
        "nope",
    ],
)
def test_bad_examples_are_refused(db, examples):
    project = make_project(variants=("v",))

    with pytest.raises(ApplicationError):
        variant_update(variant=project.variants.get(), examples=examples)
