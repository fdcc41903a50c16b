"""Two checkers deciding the same perturbation at the same moment (PostgreSQL): the row
lock lets one decide; the other is told it is decided; one item at most."""

import pytest

from annotate.models import Item, PerturbationEvent, Role
from annotate.services import perturbation_check, perturbation_create
from annotate.services.assignments import fill_rows_rebuild
from tests.annotate.perturbation_helpers import REVIEW, people, perturbation_project
from tests.concurrency import run_at_once

ROUNDS = 6


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("second", ["accept", "reject"])
def test_two_checkers_at_once_make_one_decision_and_at_most_one_item(postgres_only, second):
    project = perturbation_project(items=1)
    users = people(project, ("author", Role.AUTHOR), ("one", Role.CHECKER), ("two", Role.CHECKER))
    original = project.items.get()

    def decide(perturbation, checker, decision):
        perturbation_check(
            project=project,
            perturbation_id=perturbation.pk,
            acting_user=checker,
            decision=decision,
            comment="Checked at the same moment as someone else.",
        )

    for n in range(ROUNDS):
        perturbation = perturbation_create(
            project=project,
            original_id=original.pk,
            acting_user=users["author"],
            types=["syntax"],
            texts=[REVIEW.replace("superb", f"superb ({n})")],
            label="positive",
        )

        errors = run_at_once(
            decide,
            [(perturbation, users["one"], "accept"), (perturbation, users["two"], second)],
        )

        assert len(errors) == 1, errors
        assert (
            errors[0].startswith("ConflictError: this perturbation was") and "already" in errors[0]
        )
        perturbation.refresh_from_db()
        decisions = PerturbationEvent.objects.filter(perturbation=perturbation).exclude(
            action="created"
        )
        assert decisions.count() == 1
        assert decisions.get().actor == perturbation.checker
        assert decisions.get().action == perturbation.status
        items = Item.objects.filter(perturbation_source=perturbation)
        assert items.count() == (1 if perturbation.status == "accepted" else 0)

    accepted = Item.objects.filter(project=project, perturbation_of=original)
    assert accepted.count() == PerturbationEvent.objects.filter(action="accepted").count()
    assert fill_rows_rebuild(project=project) == 0
