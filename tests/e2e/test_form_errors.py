"""A refused form shows each message under the field it names, in plain words, and only what
names no field in the status line (docs/design/architecture.md#the-interface)."""

import pytest

from annotate.models import ProjectMembership, Role
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_bad_export_ratios_are_shown_under_the_ratios_field(page, live_server):
    project = ProjectFactory(labels=[])
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")
    page.goto(f"{live_server.url}/projects/{project.id}/results/")

    page.select_option("#export-form select[name=splits]", "ratios")
    page.fill("#export-form input[name=ratios]", "0.5,0.5,0.5")
    page.click("#export-form button[type=submit]")
    page.wait_for_selector("#export-form .field-error")

    ratios = page.locator("#export-form input[name=ratios]")
    note_id = ratios.get_attribute("aria-describedby")
    assert ratios.get_attribute("aria-invalid") == "true"
    assert "three numbers from 0 to 1" in page.locator(f"[id='{note_id}']").inner_text()
    assert page.inner_text(".export-status") == "Check the fields marked in the form."
    assert page.evaluate("() => document.activeElement.name") == "ratios"

    page.fill("#export-form input[name=ratios]", "0.8,0.1,0.1")
    assert page.locator("#export-form .field-error").count() == 0
    assert ratios.get_attribute("aria-invalid") is None


def test_a_new_project_without_a_name_says_so_under_the_name(page, live_server):
    UserFactory(username="staff", is_staff=True)
    login(page, live_server.url, "staff")
    page.goto(f"{live_server.url}/")

    page.eval_on_selector(
        "#project-form input[name=name]", "input => input.removeAttribute('required')"
    )
    page.fill("#project-form input[name=name]", "   ")
    page.click("#project-form button[type=submit]")
    page.wait_for_selector("#project-form .field-error")

    assert page.get_attribute("#project-form input[name=name]", "aria-invalid") == "true"
    message = page.inner_text("#project-form .field-error")
    assert "got str" not in message and message.strip()


def test_submit_and_clear_all_do_not_look_alike(page, live_server):
    from tests.annotate.workflow_helpers import make_project

    project = make_project(items=1, quota=1)
    ProjectMembership.objects.create(
        project=project, user=UserFactory(username="ann"), role=Role.ANNOTATOR
    )
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")

    look = "b => { const s = getComputedStyle(b); return [s.backgroundColor, s.color, s.borderStyle]; }"
    submit = page.eval_on_selector(".workspace button.submit", look)
    clear = page.eval_on_selector(".workspace button.clear-all", look)

    assert submit[0] != clear[0] and submit[1] != clear[1]
