"""The data manager's pages as the server renders them: who opens them, which item an item
page may show, what the filters offer, and imported text kept as text."""

import json
import re

import pytest

from annotate.models import Item, ProjectMembership, Role
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory


@pytest.fixture
def admin(db):
    project = make_project(items=2, variants=("plain", "counterfactual"))
    user = UserFactory(username="dm-admin")
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    ProjectMembership.objects.create(
        project=project, user=UserFactory(username="ann-b"), role=Role.ANNOTATOR
    )
    ProjectMembership.objects.create(
        project=project, user=UserFactory(username="ann-a"), role=Role.ANNOTATOR
    )
    return project, user


def test_the_data_tab_leads_to_the_data_manager_and_lists_the_imports_beside_it(client, admin):
    project, user = admin
    client.force_login(user)

    html = client.get(f"/projects/{project.id}/").content.decode()
    manager = client.get(f"/projects/{project.id}/data/items/").content.decode()

    assert f'id="tab-data" href="/projects/{project.id}/data/items/"' in html
    assert 'id="subtab-items"' in manager and 'id="subtab-data"' in manager
    assert 'id="data-manager"' in manager and "frontend/data_items.js" in manager


def test_a_curator_sees_the_data_manager_without_the_imports(client, admin):
    project, _ = admin
    curator = UserFactory(username="dm-curator")
    ProjectMembership.objects.create(project=project, user=curator, role=Role.CURATOR)
    client.force_login(curator)

    html = client.get(f"/projects/{project.id}/data/items/").content.decode()

    assert 'data-can-act="false"' in html and 'data-can-curate="true"' in html
    assert 'id="subtab-data"' not in html


def test_the_filters_offer_the_projects_labels_variants_and_annotators(client, admin):
    project, user = admin
    client.force_login(user)

    html = client.get(f"/projects/{project.id}/data/items/").content.decode()

    found = re.search(
        r'<script id="data-manager-choices" type="application/json">(.*?)</script>', html
    )
    choices = json.loads(found.group(1))
    assert choices["labels"] == ["neg", "pos"]
    assert [v["name"] for v in choices["variants"]] == ["counterfactual v1", "plain v1"]
    assert [a["username"] for a in choices["annotators"]] == ["ann-a", "ann-b"]
    assert "first_tokens" in [k["key"] for k in choices["flag_kinds"]]
    assert "syntax" in [t["key"] for t in choices["perturbation_types"]]


def test_an_item_page_shows_only_an_item_of_its_project(client, admin):
    project, user = admin
    item = Item.objects.filter(project=project).first()
    other_item = Item.objects.get(project=make_project(items=1), annotation_id="i0")
    client.force_login(user)

    assert client.get(f"/projects/{project.id}/data/items/{item.id}/").status_code == 200
    assert client.get(f"/projects/{project.id}/data/items/{other_item.id}/").status_code == 404
    Item.objects.filter(pk=item.pk).update(deleted_at="2026-01-01T00:00:00Z")
    assert client.get(f"/projects/{project.id}/data/items/{item.id}/").status_code == 404


def test_an_item_page_names_its_item_as_text_and_links_curation_for_curators_only(client, admin):
    project, user = admin
    item = Item.objects.filter(project=project).first()
    item.annotation_id = "<script>alert(1)</script>"
    item.save()
    researcher = UserFactory(username="dm-researcher")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    client.force_login(user)

    html = client.get(f"/projects/{project.id}/data/items/{item.id}/").content.decode()
    client.force_login(researcher)
    seen_by_researcher = client.get(
        f"/projects/{project.id}/data/items/{item.id}/"
    ).content.decode()

    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert f'data-curation-url="/projects/{project.id}/curation/{item.id}/"' in html
    assert "data-curation-url" not in seen_by_researcher
    assert 'data-can-act="false"' in seen_by_researcher
