"""The reviewer's queue on the server: filters (variant, annotator, round, flags, time
waited), sorts and pages, each bad parameter refused naming it."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.models import Annotation, InstructionVariant, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next, variant_create
from qc.models import QualityFlag
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _member(project, role, name):
    user = UserFactory(username=name)
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


@pytest.fixture
def queue():
    """Four annotations of two annotators, two variants, submitted 1, 2, 30 and 50 hours ago."""
    project = make_project(items=2, quota=2, variants=("plain",), allow_variant_mixing=True)
    variant_create(project=project, name="critical", text="Highlight what is critical.")
    ann, bea = _member(project, Role.ANNOTATOR, "ann"), _member(project, Role.ANNOTATOR, "bea")
    reviewer = _member(project, Role.REVIEWER, "rev")
    made = []
    for worker in (ann, bea, ann, bea):
        lease = assignment_next(project=project, worker=worker)
        made.append(
            annotation_submit(
                assignment_id=lease.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=[[{"docid": text_docid(lease), "start_token": 0, "end_token": 2}]],
            ).annotation
        )
    now = timezone.now()
    for annotation, hours in zip(made, (50, 30, 2, 1), strict=True):
        Annotation.objects.filter(pk=annotation.pk).update(created_at=now - timedelta(hours=hours))
    QualityFlag.objects.create(annotation=made[1], kind="too_fast")
    client = APIClient()
    client.force_login(reviewer)
    return project, client, made, ann


def _ids(client, project, query=""):
    response = client.get(f"/api/projects/{project.pk}/reviews/queue/?{query}")
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]], response.json()["count"]


def test_the_queue_sorts_and_pages_on_the_server(queue):
    project, client, made, _ = queue
    oldest = [a.pk for a in made]
    assert _ids(client, project, "sort=oldest") == (oldest, 4)
    assert _ids(client, project, "sort=newest")[0] == oldest[::-1]
    assert _ids(client, project, "sort=oldest&limit=2&offset=2") == (oldest[2:], 4)


def test_each_filter_narrows_the_queue(queue):
    project, client, made, ann = queue
    assert _ids(client, project, f"annotator={ann.pk}&sort=oldest")[0] == [made[0].pk, made[2].pk]
    assert _ids(client, project, "flag=any")[0] == [made[1].pk]
    assert _ids(client, project, "flag=too_fast")[0] == [made[1].pk]
    assert _ids(client, project, "flag=empty")[0] == []
    assert _ids(client, project, "flag=none")[1] == 3
    assert _ids(client, project, "waited_hours=24&sort=oldest")[0] == [made[0].pk, made[1].pk]
    assert _ids(client, project, "round=2")[1] == 0
    variant = made[0].assignment.variant_id
    expected = sorted(a.pk for a in made if a.assignment.variant_id == variant)
    assert sorted(_ids(client, project, f"variant={variant}")[0]) == expected
    other = InstructionVariant.objects.exclude(pk=variant).get(project=project).pk
    assert sorted(_ids(client, project, f"variant={other}")[0]) == sorted(
        set(a.pk for a in made) - set(expected)
    )


def test_rows_name_annotators_by_id_only(queue):
    project, client, _, _ = queue
    row = client.get(f"/api/projects/{project.pk}/reviews/queue/").json()["results"][0]
    assert set(row) == {
        "id",
        "item",
        "round",
        "variant_id",
        "variant",
        "annotator",
        "submitted_at",
        "reviews_done",
    }
    assert "ann" not in str(row.values())


@pytest.mark.parametrize(
    "query",
    [
        "sort=best",
        "flag=ugly",
        "round=0",
        "waited_hours=-1",
        "variant=abc",
        "annotator=",
        "limit=0",
    ],
)
def test_a_bad_parameter_is_refused_naming_it(queue, query):
    project, client, _, _ = queue
    response = client.get(f"/api/projects/{project.pk}/reviews/queue/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.content.decode()


def test_an_annotator_cannot_read_the_queue(queue):
    project, _, _, ann = queue
    client = APIClient()
    client.force_login(ann)
    assert client.get(f"/api/projects/{project.pk}/reviews/queue/").status_code == 403


def test_the_review_names_the_items_other_annotations_for_comparing(queue):
    _, client, made, _ = queue
    item = made[0].assignment.item_id
    same = sorted(a.pk for a in made if a.assignment.item_id == item)
    shown = client.get(f"/api/annotations/{made[0].pk}/review/").json()
    assert shown["same_item"] == same
