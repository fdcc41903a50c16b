"""A small project with varied items for the data manager's tests: splits, labels, work
under two variants, reviews and flags, perturbed copies."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from annotate.models import InstructionVariant, Item, ProjectMembership, Role
from annotate.services import assignment_next
from qc.models import QualityFlag
from qc.services.item_summaries import item_summaries_refresh
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.conftest import client_for
from tests.factories import UserFactory


@dataclass
class DataManagerWorld:
    project: object
    items: list
    admin: object
    researcher: object
    curator: object
    annotators: list

    def client(self, who="admin"):
        return client_for(getattr(self, who))

    def url(self, name="qc:item-list", *args):
        return reverse(name, args=[self.project.pk, *args])

    def list(self, who="admin", **query):
        return self.client(who).get(self.url(), query)


def make_world(*, items=8) -> DataManagerWorld:
    project = make_project(
        items=items, variants=("plain", "guided"), quota=2, allow_variant_mixing=False
    )
    people = {}
    for role in ("admin", "researcher", "curator"):
        people[role] = UserFactory(username=f"dm-{role}-{project.pk}")
        ProjectMembership.objects.create(project=project, user=people[role], role=role)
    annotators = []
    for n in range(3):
        user = UserFactory(username=f"dm-ann{n}-{project.pk}")
        ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
        annotators.append(user)
    rows = list(Item.objects.filter(project=project).order_by("pk"))
    for n, item in enumerate(rows):
        item.split = ["train", "val", "test", ""][n % 4]
        item.label = ["pos", "neg"][n % 2]
        item.query = f"Is item {n} about a {'dog' if n % 3 == 0 else 'cat'}?"
    Item.objects.bulk_update(rows, ["split", "label", "query"])
    return DataManagerWorld(project, rows, annotators=annotators, **people)


def work_on(world: DataManagerWorld, worker, count: int, tokens=2) -> list:
    """`worker` leases and submits `count` items; returns the annotations."""
    done = []
    for _ in range(count):
        lease = assignment_next(project=world.project, worker=worker)
        done.append(submit_first_tokens(lease, worker, tokens=tokens).annotation)
    return done


def flag(annotation, kind="too_fast"):
    return QualityFlag.objects.create(annotation=annotation, kind=kind)


def refresh(world):
    item_summaries_refresh(project=world.project)


def variant_ids(world) -> dict[str, int]:
    return dict(InstructionVariant.objects.filter(project=world.project).values_list("name", "pk"))
