"""A new project in the browser: its overview says what is left to set up, each step links to
the page that does it, and "Start annotating" before the project is ready says what is
missing instead of an error."""

import os

import pytest

from annotate.models import InstructionVariant, ProjectMembership, Role
from tests.e2e.conftest import login
from tests.factories import ItemFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _shot(page, name: str) -> None:
    """Screenshots for a person to look at, when SCREENSHOT_DIR names a folder."""
    folder = os.environ.get("SCREENSHOT_DIR")
    if folder:
        page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=True)


def test_the_checklist_leads_an_admin_through_a_new_project(page, live_server):
    project = ProjectFactory(labels=["neg", "pos"], name="New lab project")
    admin = UserFactory(username="adm")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    login(page, live_server.url, "adm")

    page.goto(f"{live_server.url}/projects/{project.id}/")
    _shot(page, "checklist-new-project")

    steps = page.locator("#setup-checklist .checklist-step")
    assert steps.count() == 6
    assert "0 of 6 steps done" in page.inner_text("#setup-checklist h2")
    # A project not ready yet shows what is left first, above its facts.
    assert page.evaluate(
        "() => document.querySelector('#setup-checklist').compareDocumentPosition("
        "document.querySelector('.overview')) === Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert page.locator("#setup-checklist [data-done=true]").count() == 0
    data_step = page.locator("#setup-checklist [data-step=data]")
    assert "Import an ERASER dataset or raw texts." in data_step.inner_text()

    ItemFactory(project=project)
    InstructionVariant.objects.create(project=project, name="plain", text="Why?", active=True)
    page.reload()

    done = page.locator("#setup-checklist [data-done=true]")
    assert [done.nth(i).get_attribute("data-step") for i in range(done.count())] == [
        "data",
        "variant",
    ]
    page.click("#setup-checklist [data-step=annotators] a")
    page.wait_for_url(f"**/projects/{project.id}/workers/")


def test_start_annotating_before_the_project_is_ready_says_what_is_missing(page, live_server):
    project = ProjectFactory(labels=["neg", "pos"], name="Not ready yet")
    ItemFactory(project=project)
    annotator = UserFactory(username="ann")
    ProjectMembership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    login(page, live_server.url, "ann")

    page.goto(f"{live_server.url}/projects/{project.id}/")
    page.click("#start-annotating")
    page.wait_for_selector("#workspace-not-ready")
    _shot(page, "workspace-not-ready")

    text = page.inner_text("#workspace-not-ready")
    assert "not ready for annotation yet" in text
    assert "No instruction variant is active yet." in text
    assert "no items to annotate" not in text
    assert page.locator(".message.error, .error").count() == 0
