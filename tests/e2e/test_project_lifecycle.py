"""In Chromium: an admin changes a member's roles and removes a member on the members page,
deletes an import on the data page and restores it from its "Deleted" section, and archives
the project on the settings page. Screenshots go to test-artifacts/screenshots/."""

from pathlib import Path

import pytest

from annotate.models import ImportJob, Item, ProjectMembership, Role
from qc.models import AuditAction, AuditEvent
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"lifecycle-{name}.png"), full_page=True)


def _watch(page) -> list[str]:
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "response",
        lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 500 else None,
    )
    return problems


@pytest.fixture
def team(db):
    project = make_project(items=4, quota=2)
    admin = UserFactory(username="lead")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    for name in ("ada", "bo"):
        ProjectMembership.objects.create(
            project=project, user=UserFactory(username=name), role=Role.ANNOTATOR
        )
    return project, admin


def test_changing_a_role_and_removing_a_member(live_server, page, team):
    project, _ = team
    problems = _watch(page)
    login(page, live_server.url, "lead")
    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    page.wait_for_selector("#accounts-panel[data-ready=true]")
    own = page.locator("#accounts tr[data-username=lead]")
    assert own.get_by_role("button", name="Remove from project").is_disabled()

    ada = page.locator("#accounts tr[data-username=ada]")
    ada.get_by_role("button", name="Change roles").click()
    ada.locator(".role-editor input[value=reviewer]").check()
    _shot(page, "members-role-editor")
    ada.get_by_role("button", name="Save roles").click()
    page.wait_for_selector(".account-status >> text=Roles of ada")
    page.wait_for_selector("#accounts tr[data-username=ada] .role-editor", state="detached")
    assert "reviewer" in ada.locator("td").nth(2).inner_text()
    assert set(
        ProjectMembership.objects.filter(project=project, user__username="ada").values_list(
            "role", flat=True
        )
    ) == {"annotator", "reviewer"}

    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#accounts tr[data-username=bo]").get_by_role(
        "button", name="Remove from project"
    ).click()
    page.wait_for_selector("#accounts tr[data-username=bo]", state="detached")
    _shot(page, "members-after-removal")

    assert not ProjectMembership.objects.filter(project=project, user__username="bo").exists()
    assert set(AuditEvent.objects.filter(project=project).values_list("action", flat=True)) == {
        AuditAction.ROLE_CHANGE,
        AuditAction.MEMBER_REMOVE,
    }
    assert "removed from the project" in page.locator(".account-status").inner_text()
    assert not problems


def test_deleting_and_restoring_an_import(live_server, page, team):
    project, _ = team
    job = ImportJob.objects.create(
        project=project,
        source_format="jsonl",
        source_name="wrong-file.jsonl",
        upload="imports/wrong-file.jsonl",
        status="succeeded",
        summary={"items_created": 2, "documents_created": 2, "items_unchanged": 0},
    )
    Item.objects.filter(
        pk__in=Item.objects.filter(project=project).order_by("pk")[:2].values("pk")
    ).update(import_job=job)
    problems = _watch(page)
    login(page, live_server.url, "lead")
    page.goto(f"{live_server.url}/projects/{project.pk}/data/")
    row = page.locator("#import-jobs tr", has_text="wrong-file.jsonl")
    row.wait_for()
    assert page.locator("#deleted-panel").is_hidden()

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete").click()
    deleted = page.locator("#deleted-imports tr", has_text="wrong-file.jsonl")
    deleted.wait_for()
    assert page.locator("#import-jobs tr", has_text="wrong-file.jsonl").count() == 0
    assert "7 days left" in deleted.inner_text()
    _shot(page, "data-deleted-section")
    assert Item.objects.filter(project=project).count() == 2

    deleted.get_by_role("button", name="Restore").click()
    page.locator("#import-jobs tr", has_text="wrong-file.jsonl").wait_for()
    page.wait_for_selector("#deleted-panel", state="hidden")
    _shot(page, "data-restored")

    assert Item.objects.filter(project=project).count() == 4
    assert "Restored with 2 items." in page.locator(".import-status").inner_text()
    assert not problems


def test_archiving_and_deleting_the_project_on_the_settings_page(live_server, page, team):
    project, _ = team
    problems = _watch(page)
    login(page, live_server.url, "lead")
    page.goto(f"{live_server.url}/projects/{project.pk}/settings/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#archive-toggle")
    page.wait_for_selector(".archived-notice")
    _shot(page, "settings-archived")
    project.refresh_from_db()
    assert project.archived_at is not None

    page.click("#project-delete-open")
    page.fill("#project-delete-dialog input[name=confirm_name]", "not the name")
    assert page.locator("#project-delete-confirm").is_disabled()
    page.fill("#project-delete-dialog input[name=confirm_name]", project.name)
    _shot(page, "settings-delete-dialog")
    page.click("#project-delete-confirm")
    page.wait_for_selector("#deleted-projects")
    _shot(page, "home-deleted-projects")
    page.locator("#deleted-projects").get_by_role("button", name="Restore").click()
    page.wait_for_selector(f"a[href='/projects/{project.pk}/']")

    project.refresh_from_db()
    assert project.deleted_at is None
    assert not problems
