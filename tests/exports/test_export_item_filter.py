"""Exports follow the data manager: excluded items are never exported, and an export with
an item filter (the list's query string) exports only the items the list shows for it."""

import json

import pytest
from django.urls import reverse

from annotate.models import Item, ProjectMembership, Role
from exports.models import Export
from exports.params import export_params_from
from exports.services import export_build
from rationale_metrics.eraser_writer import DirectorySink
from tests.conftest import client_for
from tests.exports.test_export import annotated  # noqa: F401 - the shared fixture
from tests.factories import UserFactory


def exported_ids(folder) -> list[str]:
    with open(folder / "train.jsonl") as lines:
        return [json.loads(line)["annotation_id"] for line in lines]


def test_excluded_items_are_never_exported(annotated, tmp_path):  # noqa: F811
    first = Item.objects.filter(project=annotated).order_by("pk").first()
    Item.objects.filter(pk=first.pk).update(excluded=True)

    export_build(
        project=annotated,
        params=export_params_from({"archive": "directory"}),
        sink=DirectorySink(tmp_path / "out"),
    )

    assert first.annotation_id not in exported_ids(tmp_path / "out")
    assert len(exported_ids(tmp_path / "out")) == 1


def test_an_item_filter_exports_what_the_list_shows_for_it(annotated, tmp_path):  # noqa: F811
    second = Item.objects.filter(project=annotated).order_by("pk")[1]
    Item.objects.filter(pk=second.pk).update(marked_gold=True)

    export_build(
        project=annotated,
        params=export_params_from({"archive": "directory", "item_filter": "status=gold&page=2"}),
        sink=DirectorySink(tmp_path / "out"),
    )

    assert exported_ids(tmp_path / "out") == [second.annotation_id]


@pytest.mark.parametrize(
    ("item_filter", "message"),
    [("colour=red", "item_filter: colour"), ("kappa_min=1&kappa_max=0", "item_filter: kappa_max")],
)
def test_a_bad_item_filter_is_refused_naming_it(annotated, item_filter, message):  # noqa: F811
    from config.exceptions import ApplicationError

    with pytest.raises(ApplicationError, match=message):
        export_params_from({"item_filter": item_filter})


def test_the_export_api_takes_and_stores_the_filter(
    annotated,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    researcher = UserFactory(username="export-researcher")
    ProjectMembership.objects.create(project=annotated, user=researcher, role=Role.RESEARCHER)
    url = reverse("exports:export-list", args=[annotated.pk])

    response = client_for(researcher).post(url, {"item_filter": "split=train"}, format="json")
    refused = client_for(researcher).post(url, {"item_filter": "colour=red"}, format="json")

    assert response.status_code == 202, response.json()
    assert Export.objects.get(pk=response.json()["id"]).params["item_filter"] == "split=train"
    assert refused.status_code == 400 and "item_filter" in str(refused.json())
