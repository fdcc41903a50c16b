"""The datasheet page previews the sheet and downloads it as files
(docs/design/architecture.md#the-interface)."""

import json

import pytest

from annotate.models import ProjectMembership, Role
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_previewed_sheet_downloads_as_markdown_and_json(page, live_server):
    project = ProjectFactory(name="Movies: v2 / test", labels=["neg", "pos"])
    ProjectMembership.objects.create(
        project=project, user=UserFactory(username="res"), role=Role.RESEARCHER
    )
    login(page, live_server.url, "res")

    page.goto(f"{live_server.url}/projects/{project.id}/datasheet/")
    page.wait_for_selector("#datasheet-downloads:not([hidden])")
    with page.expect_download() as markdown_download:
        page.click("#datasheet-download-md")
    with page.expect_download() as json_download:
        page.click("#datasheet-download-json")

    markdown = markdown_download.value
    assert markdown.suggested_filename == "Movies_v2_test-datasheet.md"
    with open(markdown.path(), encoding="utf-8") as handle:
        assert handle.read() == page.text_content("#datasheet-markdown")
    sheet = json_download.value
    assert sheet.suggested_filename == "Movies_v2_test-datasheet.json"
    with open(sheet.path(), encoding="utf-8") as handle:
        assert "collection_summary" in json.load(handle)
