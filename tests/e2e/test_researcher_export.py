"""A researcher exports a project from the browser and gets a download link with a checksum."""

import pytest

from annotate.models import ProjectMembership, Role
from annotate.services import dataset_import
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_researcher_exports_from_the_project_page(page, live_server, eraser_reference):
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=eraser_reference / "multirc" / "data")
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")

    page.goto(f"{live_server.url}/projects/{project.id}/results/")
    page.select_option("select[name=selection]", "reference")
    page.select_option("select[name=aggregation]", "reference")
    page.click("#export-form button[type=submit]")
    page.wait_for_selector("#exports tbody tr[data-status=succeeded] a")

    assert "sha256" in page.inner_text("#exports tbody tr")
    with page.expect_download() as download:
        page.click("#exports tbody tr a")
    assert download.value.suggested_filename.endswith(".zip")
    assert page.locator("#admin-panel").count() == 0
