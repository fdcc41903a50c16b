"""Free text people type has a limit at every layer: the API answers 400 naming the field,
the model's validator refuses it in forms, and the database refuses any other writer."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotate.models import InstructionVariant, Project
from config.text_limits import (
    INSTRUCTIONS_MAX_CHARS,
    PROJECT_DESCRIPTION_MAX_CHARS,
)
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory


@pytest.fixture
def admin_client(db):
    return client_for(UserFactory(username="limits-admin", is_staff=True, is_superuser=True))


def test_a_project_description_at_its_limit_is_taken_and_past_it_refused(admin_client):
    url = reverse("annotate:project-list")
    at_limit = {"name": "a", "description": "x" * PROJECT_DESCRIPTION_MAX_CHARS}
    past_limit = {"name": "b", "description": "x" * (PROJECT_DESCRIPTION_MAX_CHARS + 1)}

    assert admin_client.post(url, at_limit, format="json").status_code == 201
    refused = admin_client.post(url, past_limit, format="json")
    assert refused.status_code == 400 and list(refused.data) == ["description"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "x" * (INSTRUCTIONS_MAX_CHARS + 1)}, "text"),
        ({"text": "ok", "examples": [{"tokens": ["a"], "highlighted": []}] * 21}, "examples"),
        (
            {"text": "ok", "examples": [{"tokens": ["a"], "highlighted": [], "note": "x" * 2001}]},
            "examples",
        ),
        ({"text": "ok", "examples": [{"tokens": ["x" * 101], "highlighted": []}]}, "examples"),
    ],
)
def test_variant_text_and_examples_past_their_limits_are_400(admin_client, body, field):
    project = ProjectFactory()

    response = admin_client.post(
        reverse("annotate:variant-list", args=[project.id]),
        {"name": "long", **body},
        format="json",
    )

    assert response.status_code == 400 and list(response.data) == [field]


def test_the_model_validator_refuses_a_long_description(db):
    project = Project(name="p", description="x" * (PROJECT_DESCRIPTION_MAX_CHARS + 1))

    with pytest.raises(ValidationError) as refused:
        project.full_clean()
    assert "description" in refused.value.message_dict


@pytest.mark.parametrize(
    ("make", "limit"),
    [
        (
            lambda n: Project.objects.create(name=f"p{n}", description="x" * n),
            PROJECT_DESCRIPTION_MAX_CHARS,
        ),
        (
            lambda n: InstructionVariant.objects.create(
                project=ProjectFactory(), name=f"v{n}", text="x" * n
            ),
            INSTRUCTIONS_MAX_CHARS,
        ),
    ],
)
def test_the_database_refuses_text_past_its_limit(db, make, limit):
    make(limit)
    with pytest.raises(IntegrityError), transaction.atomic():
        make(limit + 1)
