"""A JSON body's values are taken at their own JSON type only; form and query-string data,
which can carry nothing but text, are parsed as before."""

import uuid

import pytest
from django.http import QueryDict
from django.urls import reverse
from rest_framework import serializers

from annotate.models import ProjectMembership, Role
from annotate.serializers import submit_input_validated
from config import api_fields
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


class Sample(serializers.Serializer):
    flag = api_fields.StrictBooleanField(required=False)
    text = api_fields.StrictCharField(required=False)
    slug = api_fields.StrictSlugField(required=False)
    count = api_fields.StrictIntegerField(required=False)
    ratio = api_fields.StrictFloatField(required=False)
    key = api_fields.StrictUUIDField(required=False)
    words = serializers.ListField(child=api_fields.StrictCharField(), required=False)


WRONG = [
    ("flag", 0),
    ("flag", 1),
    ("flag", "true"),
    ("flag", "off"),
    ("text", 0),
    ("text", 1.5),
    ("text", True),
    ("slug", 7),
    ("count", "3"),
    ("count", True),
    ("count", 2.5),
    ("ratio", "0.5"),
    ("ratio", True),
    ("key", 5),
    ("words", [1, "a"]),
]


@pytest.mark.parametrize(("name", "value"), WRONG)
def test_a_json_value_of_another_type_is_refused(name, value):
    data = Sample(data={name: value})

    assert not data.is_valid()
    assert name in data.errors


RIGHT = [
    ("flag", False, False),
    ("text", "a", "a"),
    ("slug", "a-b", "a-b"),
    ("count", 3, 3),
    ("count", 3.0, 3),
    ("ratio", 1, 1.0),
    ("ratio", 0.5, 0.5),
    (
        "key",
        "12345678-1234-5678-1234-567812345678",
        uuid.UUID(int=0x12345678123456781234567812345678),
    ),
    ("words", ["a", "b"], ["a", "b"]),
]


@pytest.mark.parametrize(("name", "value", "expected"), RIGHT)
def test_a_json_value_of_its_own_type_is_taken(name, value, expected):
    data = Sample(data={name: value})

    assert data.is_valid(), data.errors
    assert data.validated_data[name] == expected


def test_an_empty_text_in_a_query_is_judged_not_dropped():
    # Found by the schemathesis run: ?variant= on the datasheet preview was read as no
    # variant at all, although the schema says a variant name is never empty.
    data = Sample(data=QueryDict("text="))

    assert not data.is_valid() and "text" in data.errors


def test_form_and_query_string_text_is_parsed_as_before():
    data = Sample(data=QueryDict("flag=true&text=a&count=3&ratio=0.5&words=x&words=y"))

    assert data.is_valid(), data.errors
    assert dict(data.validated_data) == {
        "flag": True,
        "text": "a",
        "count": 3,
        "ratio": 0.5,
        "words": ["x", "y"],
    }


@pytest.mark.parametrize(
    "change", [{"label": 0}, {"time_spent_ms": "5"}, {"client_uuid": 5}, {"time_spent_ms": True}]
)
def test_a_submit_body_of_the_wrong_types_is_refused(change):
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": "d0", "start_token": 0, "end_token": 1}]],
        **change,
    }

    with pytest.raises(serializers.ValidationError) as refused:
        submit_input_validated(body)

    assert set(change) <= set(refused.value.detail)


@pytest.fixture
def admin_client(db):
    project = make_project(items=1)
    admin = UserFactory()
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    return project, client_for(admin)


@pytest.mark.parametrize(
    ("url", "method", "body", "field"),
    [
        ("annotate:variant-detail", "patch", {"active": 0}, "active"),
        ("annotate:variant-detail", "patch", {"text": 0}, "text"),
        ("annotate:variant-list", "post", {"name": "v2", "text": 0}, "text"),
        ("annotate:project-policy", "patch", {"multi_set_mode": "true"}, "multi_set_mode"),
        ("annotate:project-policy", "patch", {"annotators_per_item": "3"}, "annotators_per_item"),
        ("qc:quality-policy", "patch", {"masters_only": 1}, "masters_only"),
        ("qc:quality-policy", "patch", {"test_pass_f1": "0.5"}, "test_pass_f1"),
        ("qc:quality-policy", "patch", {"test_instructions": 5}, "test_instructions"),
    ],
)
def test_the_api_refuses_wrong_types_instead_of_coercing_them(
    admin_client, url, method, body, field
):
    project, client = admin_client
    args = (
        [project.id, project.variants.get().id]
        if url == "annotate:variant-detail"
        else [project.id]
    )

    response = getattr(client, method)(reverse(url, args=args), body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.data


@pytest.mark.parametrize("format", ["multipart", None])
def test_a_json_operation_takes_no_form_body(admin_client, format):
    # Found by the schemathesis run: {"multi_set_mode": 0} sent as a form became "0" and
    # was read as false. Forms carry text only; the operations that need them (uploads)
    # say so, the others take JSON.
    project, client = admin_client
    url = reverse("annotate:project-policy", args=[project.id])
    if format:
        response = client.patch(url, {"multi_set_mode": "0"}, format=format)
    else:
        response = client.generic(
            "PATCH", url, "multi_set_mode=0", content_type="application/x-www-form-urlencoded"
        )

    assert response.status_code == 415, response.content


def _query_serializers() -> list[tuple[str, str]]:
    """(module, class) of every serializer product code builds from a query string."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = []
    for package in ("annotate", "qc", "crowd", "exports", "frontend", "config"):
        for path in (root / package).rglob("*.py"):
            source = path.read_text(encoding="utf-8")
            for name in re.findall(r"(\w+)\(data=request\.(?:query_params|GET)\b", source):
                module = ".".join(path.relative_to(root).with_suffix("").parts)
                found.append((module, name))
    return sorted(found)


def test_every_serializer_of_a_query_string_refuses_a_parameter_sent_empty():
    import importlib

    found = _query_serializers()

    assert len(found) >= 4, found  # the account list, both perturbation lists, the datasheet
    for module, name in found:
        serializer = getattr(importlib.import_module(module), name)
        assert issubclass(serializer, api_fields.QueryParametersSerializer), (module, name)


def test_a_query_parameter_sent_empty_is_refused_unless_its_field_takes_empty_text():
    class Query(api_fields.QueryParametersSerializer):
        flag = api_fields.StrictBooleanField(required=False)
        mode = serializers.ChoiceField(choices=["a", "b"], required=False)
        search = api_fields.StrictCharField(required=False, allow_blank=True)

    refused = Query(data=QueryDict("flag=&mode=&search="))
    searched = Query(data=QueryDict("search="))

    assert not refused.is_valid()
    assert refused.errors == {
        name: ["this parameter is empty: give a value or leave it out"] for name in ("flag", "mode")
    }
    assert searched.is_valid() and searched.validated_data["search"] == ""
