"""In Chromium: an admin creates an account with an invitation link, the new user opens it,
sets a password and lands in the project; a one-time password leads to the password page.
Screenshots of each page go to test-artifacts/screenshots/ for people to look at."""

from pathlib import Path

import pytest

from annotate.models import AccountAction, AccountEvent, ProjectMembership, Role
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
NEW_PASSWORD = "violet lantern 2026"


# Every refusal of the Content Security Policy, reported to the console by the page.
REPORT_CSP_REFUSALS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`CSP refused ${event.effectiveDirective} ${event.blockedURI || "inline"}`);
});
"""


def _context(browser):
    """A browser context whose pages list every failed request, script error and CSP
    refusal in `problems`."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(REPORT_CSP_REFUSALS)
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    page.on(
        "console",
        lambda message: problems.append(message.text) if "CSP refused" in message.text else None,
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    # A refusal the page shows (a 4xx from the API) is part of the walk; anything else that
    # fails (a missing script or style, a server error) is a problem.
    page.on(
        "response",
        lambda response: (
            problems.append(f"{response.status} {response.url}")
            if response.status >= 500 or (response.status >= 400 and "/api/" not in response.url)
            else None
        ),
    )
    return context, page, problems


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"accounts-{name}.png"), full_page=True)


def test_an_invited_user_sets_a_password_and_lands_in_the_project(live_server, browser):
    project = ProjectFactory(name="Invitation study")
    admin = UserFactory(username="lead")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    base = live_server.url

    admin_context, admin_page, admin_problems = _context(browser)
    login(admin_page, base, "lead")
    admin_page.goto(f"{base}/projects/{project.id}/members/")
    admin_page.wait_for_selector("#accounts-panel[data-ready=true]")
    admin_page.fill("#account-create-form input[name=username]", "LEAD")
    admin_page.click("#account-create-form button[type=submit]")
    taken = admin_page.locator("#account-create-username-error")
    taken.wait_for()
    assert taken.inner_text().startswith("an account named 'LEAD' (or differing only in case)")
    _shot(admin_page, "members-username-taken")
    admin_page.fill("#account-create-form input[name=username]", "ivy")
    admin_page.fill("#account-create-form input[name=email]", "ivy@example.org")
    admin_page.select_option("#account-create-form select[name=role]", "annotator")
    admin_page.check("#account-create-form input[value=link]")
    admin_page.click("#account-create-form button[type=submit]")
    admin_page.wait_for_selector("#issued-value")
    admin_page.wait_for_selector("#accounts tr[data-username=ivy]")
    link = admin_page.input_value("#issued-value")
    _shot(admin_page, "members-link-issued")

    invitee_context, invitee, invitee_problems = _context(browser)
    invitee.goto(link)
    invitee.wait_for_url("**/set-password/")
    assert "ivy" in invitee.inner_text("#account-link")
    _shot(invitee, "invitation-set-password")
    invitee.fill("input[name=new_password1]", NEW_PASSWORD)
    invitee.fill("input[name=new_password2]", NEW_PASSWORD)
    invitee.click("#account-link button[type=submit]")
    invitee.wait_for_url(f"{base}/projects/{project.id}/")
    assert "Invitation study" in invitee.inner_text("main")
    assert invitee.inner_text(".who") == "ivy"
    _shot(invitee, "invitation-landed")

    invitee.goto(link)  # the link has done its work
    assert "This link does not work" in invitee.inner_text("#account-link")

    admin_page.reload()
    admin_page.wait_for_selector("#accounts-panel[data-ready=true]")
    ivy_row = admin_page.inner_text("#accounts tr[data-username=ivy]")
    trail = admin_page.inner_text("#account-events")
    _shot(admin_page, "members-after")

    assert "own password" in ivy_row
    assert "set a password from a link" in trail and "created the account" in trail
    assert list(
        AccountEvent.objects.filter(subject__username="ivy").values_list("action", flat=True)
    ) == [AccountAction.PASSWORD_SET, AccountAction.ACCOUNT_CREATE]
    assert admin_problems == [] and invitee_problems == []
    admin_context.close()
    invitee_context.close()


def test_staff_give_a_one_time_password_that_must_be_changed(live_server, browser):
    UserFactory(username="root", is_staff=True)
    UserFactory(username="somebody", email="somebody@example.org")
    base = live_server.url

    staff_context, staff, staff_problems = _context(browser)
    login(staff, base, "root")
    staff.click("#users-link")
    staff.wait_for_selector("#accounts-panel[data-ready=true]")
    staff.fill("#account-create-form input[name=username]", "otto")
    staff.check("#account-create-form input[value=one_time_password]")
    staff.click("#account-create-form button[type=submit]")
    staff.wait_for_selector("#issued-value")
    one_time = staff.input_value("#issued-value")
    staff.wait_for_selector("#accounts tr[data-username=otto]")
    _shot(staff, "users-one-time-password")

    staff.fill("#account-filter-form input[name=search]", "somebody")
    staff.click("#account-filter-form button[type=submit]")
    staff.wait_for_function("() => document.querySelectorAll('#accounts tbody tr').length === 1")
    assert staff.inner_text("#accounts tbody tr").startswith("somebody")

    user_context, user, user_problems = _context(browser)
    user.goto(f"{base}/accounts/login/")
    user.fill("input[name=username]", "otto")
    user.fill("input[name=password]", one_time)
    user.click("button[type=submit]")
    user.wait_for_url("**/accounts/password/**")
    _shot(user, "password-change-required")
    user.fill("input[name=old_password]", one_time)
    user.fill("input[name=new_password1]", NEW_PASSWORD)
    user.fill("input[name=new_password2]", NEW_PASSWORD)
    user.click("#password-change button[type=submit]")
    user.wait_for_url(f"{base}/")

    assert user.inner_text(".who") == "otto"
    assert staff_problems == [] and user_problems == []
    staff_context.close()
    user_context.close()
