"""Every main page under the Content Security Policy that production sends, in Chromium:
no inline script or style, no resource from elsewhere, nothing the browser refuses.

The browser reports each refusal twice, and both are collected: a
`securitypolicyviolation` event in the page (listened to from before any script of the
page runs) and an error on the console.
"""

import pytest
from csp.utils import build_policy
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from crowd.services import study_link_create
from tests.annotate.workflow_helpers import make_project
from tests.config.test_production_settings import csp_directives
from tests.e2e.conftest import login
from tests.factories import UserFactory
from tests.qc.helpers import next_assignment, submit

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(
    `${event.effectiveDirective} blocked ${event.blockedURI || "inline"} ${event.sample || ""}`
  );
});
"""


def policy() -> str:
    return build_policy()  # from settings.CONTENT_SECURITY_POLICY


class Watched:
    """A browser context whose pages report every CSP refusal."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.add_init_script(LISTEN)
        self.console: list[str] = []
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.page.on(
            "console",
            lambda message: (
                self.console.append(message.text)
                if "Content Security Policy" in message.text
                else None
            ),
        )

    def visit(self, url: str, *, ready: str | None = None) -> list[str]:
        """Open `url`, wait for its scripts to settle, and return what CSP refused."""
        self.console.clear()
        response = self.page.goto(url)
        assert response.status < 500, url
        assert response.headers.get("content-security-policy"), f"no policy on {url}"
        if ready:
            self.page.wait_for_selector(ready)
        self.page.wait_for_load_state("networkidle")
        return self.page.evaluate("window.__cspViolations") + self.console


@pytest.fixture
def site(live_server):
    project = make_project(items=4, quota=2, reviewers_per_annotation=1)
    people = {
        "boss": UserFactory(username="boss", is_staff=True, is_superuser=True),
        "annie": UserFactory(username="annie"),
        "rita": UserFactory(username="rita"),
    }
    for name, role in (("boss", Role.ADMIN), ("annie", Role.ANNOTATOR), ("rita", Role.REVIEWER)):
        ProjectMembership.objects.create(project=project, user=people[name], role=role)
    submit(next_assignment(project, people["annie"]), people["annie"], 0, 2)
    mturk = study_link_create(
        project=project,
        acting_user=people["boss"],
        name="CSP HIT",
        platform="mturk",
        consent_text="You agree.",
        items_required=1,
    )
    prolific = study_link_create(
        project=project,
        acting_user=people["boss"],
        name="CSP study",
        platform="prolific",
        consent_text="You agree.",
        items_required=1,
        completion_code="CSPDONE",
        currency="GBP",
    )
    return {"base": live_server.url, "project": project, "mturk": mturk, "prolific": prolific}


def test_the_policy_is_the_one_production_sends(site, browser):
    watched = Watched(browser)

    response = watched.page.goto(f"{site['base']}/accounts/login/")

    assert csp_directives(response.headers["content-security-policy"]) == csp_directives(policy())
    assert "'unsafe-inline'" not in policy() and "'unsafe-eval'" not in policy()


def test_the_pages_of_each_role_run_with_no_csp_violation(site, browser, settings):
    base, project = site["base"], site["project"]
    # Where the done page sends a Prolific participant, kept on this machine.
    settings.CROWD_PROLIFIC_COMPLETION_URL = f"{base}/accounts/login/?cc={{code}}"
    item = project.items.order_by("pk").first()
    refused = {}

    anonymous = Watched(browser)
    refused["login"] = anonymous.visit(f"{base}/accounts/login/")
    refused["404"] = anonymous.visit(f"{base}/no-such-page/")

    boss = Watched(browser)
    login(boss.page, base, "boss")
    pages = {
        "home": ("/", "#project-form"),
        "project": (f"/projects/{project.id}/", None),
        "data": (f"/projects/{project.id}/data/", None),
        "data-manager": (f"/projects/{project.id}/data/items/", "#data-manager[data-ready=true]"),
        "item": (f"/projects/{project.id}/data/items/{item.id}/", "#item-page[data-ready=true]"),
        "instructions": (f"/projects/{project.id}/instructions/", None),
        "workers": (f"/projects/{project.id}/workers/", None),
        "members": (f"/projects/{project.id}/members/", "#accounts-panel[data-ready=true]"),
        "users": ("/users/", "#accounts-panel[data-ready=true]"),
        "password": ("/accounts/password/", "#password-change"),
        "pipeline": (f"/projects/{project.id}/pipeline/", None),
        "results": (f"/projects/{project.id}/results/", None),
        "settings": (f"/projects/{project.id}/settings/", None),
        "quality": (f"/projects/{project.id}/quality/", None),
        "agreement": (f"/projects/{project.id}/agreement/", None),
        "datasheet": (f"/projects/{project.id}/datasheet/", None),
        "perturbations": (f"/projects/{project.id}/perturbations/", None),
        "perturb-author": (f"/projects/{project.id}/perturbations/originals/{item.id}/", None),
        "perturb-check": (f"/projects/{project.id}/perturbations/check/", None),
        "api-docs": ("/api/docs/", ".swagger-ui .info"),
        "admin": ("/admin/", None),
        "admin-list": ("/admin/annotate/project/", None),
        "admin-change": (f"/admin/annotate/project/{project.id}/change/", None),
    }
    for name, (path, ready) in pages.items():
        refused[name] = boss.visit(f"{base}{path}", ready=ready)

    annie = Watched(browser)
    login(annie.page, base, "annie")
    refused["workspace"] = annie.visit(
        f"{base}/projects/{project.id}/annotate/", ready="#workspace[data-ready=true]"
    )

    rita = Watched(browser)
    login(rita.page, base, "rita")
    refused["review"] = rita.visit(
        f"{base}/projects/{project.id}/review/", ready="#review[data-ready=true]"
    )

    worker = Watched(browser)
    entry = reverse("crowd:entry", args=[site["mturk"].key])
    refused["mturk-preview"] = worker.visit(
        f"{base}{entry}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1"
    )
    entry = reverse("crowd:entry", args=[site["prolific"].key])
    refused["crowd-consent"] = worker.visit(
        f"{base}{entry}?PROLIFIC_PID=csp-p1&STUDY_ID=s&SESSION_ID=s1", ready="#crowd-consent"
    )
    worker.page.click("text=I agree, start")
    worker.page.wait_for_selector("#workspace[data-ready=true]")
    refused["crowd-work"] = worker.visit(worker.page.url, ready="#workspace[data-ready=true]")
    worker.page.locator(".document .tok").nth(1).click()
    worker.page.keyboard.press("Enter")
    worker.page.wait_for_selector("#crowd-done")
    refused["crowd-done"] = worker.page.evaluate("window.__cspViolations") + worker.console

    assert {name: found for name, found in refused.items() if found} == {}
