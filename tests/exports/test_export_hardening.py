"""Issue 22 section 5: numbers out of range."""

import uuid

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from config.exceptions import ApplicationError
from exports.models import Export
from exports.params import ExportParams, export_params_from
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


def annotated_project(items=6):
    project = make_project(items=items, quota=1)
    worker = UserFactory()
    while (lease := assignment_next(project=project, worker=worker)) is not None:
        annotation_submit(
            assignment_id=lease.pk,
            worker=worker,
            client_uuid=uuid.uuid4(),
            rationale_sets=[
                [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 2}]
            ],
            time_spent_ms=20_000,
        )
    return project


@pytest.fixture
def researcher_client(db):
    project = annotated_project(items=2)
    user = UserFactory(username="numbers")
    ProjectMembership.objects.create(project=project, user=user, role=Role.RESEARCHER)
    return project, client_for(user)


# ---------------------------------------------------------------- bad numbers


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"seed": "1" + "0" * 26}, "seed"),
        ({"seed": "-1"}, "seed"),
        ({"splits": "ratios", "ratios": ["1e26", "0", "0"]}, "ratios"),
    ],
)
def test_a_form_post_with_a_number_out_of_range_is_a_400_that_stores_nothing(
    researcher_client, body, field
):
    """Issue 22: `seed=1e26` posted as a form was a 500 that stored the export."""
    project, client = researcher_client
    url = reverse("exports:export-list", args=[project.id])

    response = client.post(url, body, format="multipart")

    assert response.status_code in (400, 415), response.status_code
    if response.status_code == 400:
        assert field in str(response.data)
    assert Export.objects.count() == 0
    assert client.get(url).status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"seed": 2**40}, "seed"),
        ({"seed": 2**63 - 1}, "seed"),
        ({"splits": "ratios", "ratios": [1.5, -0.25, -0.25]}, "ratios"),
        ({"splits": "ratios", "ratios": [1e300, 0, 0]}, "ratios"),
    ],
)
def test_a_json_number_out_of_range_is_a_400_that_stores_nothing(researcher_client, body, field):
    project, client = researcher_client

    response = client.post(reverse("exports:export-list", args=[project.id]), body, format="json")

    assert response.status_code == 400 and field in str(response.data)
    assert Export.objects.count() == 0


def test_the_datasheet_preview_refuses_a_seed_out_of_range(researcher_client):
    project, client = researcher_client

    response = client.get(
        reverse("exports:datasheet-preview", args=[project.id]), {"seed": "1" + "0" * 26}
    )

    assert response.status_code == 400 and "seed" in str(response.data)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"seed": 10**26}, "seed: an integer from 0 to 4294967295"),
        ({"seed": -1}, "seed: an integer from 0 to 4294967295"),
        ({"splits": "ratios", "ratios": [float("nan"), 0.5, 0.5]}, "ratios:"),
        ({"splits": "ratios", "ratios": [float("inf"), 0, 0]}, "ratios:"),
    ],
)
def test_the_service_refuses_numbers_out_of_range_too(raw, message):
    """The command and the preview reach the service without the API's serializer."""
    with pytest.raises(ApplicationError, match=message):
        export_params_from(raw)


def test_the_command_refuses_a_seed_out_of_range(db, tmp_path):
    project = annotated_project(items=2)

    with pytest.raises(CommandError, match="seed: an integer from 0 to 4294967295"):
        call_command(
            "export_eraser",
            project.name,
            str(tmp_path / "out.zip"),
            "--new-splits",
            "0.8",
            "0.1",
            "0.1",
            "--seed",
            str(10**26),
        )
    assert not list(tmp_path.iterdir())


def test_a_list_holding_an_old_bad_row_still_lists(researcher_client):
    """Rows stored before the check keep their numbers; the list and the row still answer."""
    project, client = researcher_client
    bad = Export.objects.create(
        project=project,
        params={**ExportParams().as_dict(), "seed": 10**26, "splits": "ratios"},
        status="failed",
    )

    listed = client.get(reverse("exports:export-list", args=[project.id]))
    detail = client.get(reverse("exports:export-detail", args=[project.id, bad.pk]))

    assert listed.status_code == 200 and listed.data["results"][0]["id"] == bad.pk
    assert detail.status_code == 200
    assert listed.data["results"][0]["params"]["seed"] == str(10**26)
