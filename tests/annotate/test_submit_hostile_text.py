"""Text PostgreSQL cannot store (NUL) or a column cannot hold (past 255 characters), sent
to submit or drafts, is a 400 naming the field, on both submit paths, and nothing is
written."""

import uuid

import pytest
from django.urls import reverse

from annotate.models import Annotation, Assignment, ProjectMembership, Role
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


@pytest.fixture
def lease(db):
    """An annotator's open lease on a project with no label list: any label is taken, so
    only the label's own length stands between it and the column."""
    project = make_project(items=2, quota=1, labels=())
    worker = UserFactory(username="hostile-annotator")
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    client = client_for(worker)
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    return client, lease


def _submit(client, lease, *, label="pos", docid=None):
    docid = lease["item"]["documents"][0]["docid"] if docid is None else docid
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 2}]],
        "label": label,
        "time_spent_ms": 900,
    }
    return client.post(
        reverse("annotate:assignment-submit", args=[lease["id"]]), body, format="json"
    )


def test_a_label_of_255_characters_is_stored(hot_path, lease):
    client, leased = lease

    assert _submit(client, leased, label="x" * 255).status_code == 201
    assert Annotation.objects.get().label == "x" * 255


@pytest.mark.parametrize("label", ["x" * 256, "é" * 1000, "pos\x00"])
def test_a_label_the_column_cannot_hold_is_400_naming_the_label(hot_path, lease, label):
    client, leased = lease

    response = _submit(client, leased, label=label)

    assert response.status_code == 400, response.content
    assert list(response.data) == ["label"]
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("docid", ["d0\x00", "\x00", "d" * 256])
def test_a_docid_the_column_cannot_hold_is_400_naming_the_docid(hot_path, lease, docid):
    client, leased = lease

    response = _submit(client, leased, docid=docid)

    assert response.status_code == 400, response.content
    assert "docid" in response.data["rationale_sets"][0][0]
    assert not Annotation.objects.exists()


@pytest.mark.parametrize(
    "draft",
    [
        {"sets": [[["d0\x00", [0, 1]]]], "current": 0},
        {"note\x00": 1},
        ["deep", [{"x": ["\x00"]}]],
    ],
)
def test_a_draft_holding_nul_is_400_naming_the_draft(lease, draft):
    client, leased = lease

    response = client.put(
        reverse("annotate:assignment-draft", args=[leased["id"]]), {"draft": draft}, format="json"
    )

    assert response.status_code == 400, response.content
    assert list(response.data) == ["draft"]
    assert Assignment.objects.get(pk=leased["id"]).draft is None
