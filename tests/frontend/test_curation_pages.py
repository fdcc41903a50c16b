"""The curation pages: reached by a curator from the review pipeline's tab, the item page
for items of this project only, imported text escaped."""

import pytest

from tests.qc.curation_helpers import item_of, make_curation_project

pytestmark = pytest.mark.django_db

HIGHLIGHTS = {"i0": [[[(0, 2)]], [[(1, 3)]]]}


@pytest.fixture
def curation():
    return make_curation_project(HIGHLIGHTS, annotators=2)


def test_a_curator_reaches_the_queue_from_the_review_tab_and_the_data_manager(client, curation):
    """A curator's tabs: the curation queue under the review pipeline, and the data
    manager (which curators read); not the agreement, imports or settings."""
    project, people, _ = curation
    client.force_login(people["curator"])

    html = client.get(f"/projects/{project.id}/").content.decode()

    assert f'id="tab-review" href="/projects/{project.id}/curation/"' in html
    assert f'id="tab-data" href="/projects/{project.id}/data/items/"' in html
    assert 'id="tab-agreement"' not in html and 'id="tab-settings"' not in html


def test_an_admin_finds_curation_among_the_review_pipelines_pages(client, curation):
    project, people, _ = curation
    client.force_login(people["admin"])

    html = client.get(f"/projects/{project.id}/curation/").content.decode()

    assert f'id="subtab-curation" href="/projects/{project.id}/curation/"' in html
    assert 'id="subtab-review"' in html


def test_the_item_page_escapes_the_items_name_and_refuses_other_projects_items(client, curation):
    project, people, _ = curation
    item = item_of(project, "i0")
    item.annotation_id = "<b>i0</b>"
    item.save()
    other, _, _ = make_curation_project(HIGHLIGHTS, annotators=2)
    client.force_login(people["curator"])

    page = client.get(f"/projects/{project.id}/curation/{item.pk}/")
    foreign = client.get(f"/projects/{project.id}/curation/{item_of(other, 'i0').pk}/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "&lt;b&gt;i0&lt;/b&gt;" in html and "<b>i0</b>" not in html
    assert foreign.status_code == 404
