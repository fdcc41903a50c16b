"""Every page, for every role, in Chromium on the demo's data
(docs/design/architecture.md#the-interface).

For each page a role can open, the walk
- saves a full-page screenshot to test-artifacts/screenshots/<role>/<page>.png, for people to
  look at (not a pixel assertion; the folder is ignored by git);
- runs axe-core (vendored in tests/e2e/vendor/axe-core, injected by the test and never served
  to users) with the WCAG 2 A and AA rules, and fails on any violation of impact "serious" or
  "critical", naming the page, the rule and the elements; it runs again on the same page load
  with a dark system preference emulated (the pages follow `prefers-color-scheme`;
  frontend/palette.py), whose screenshot is saved beside the light one (<page>-dark.png, and
  <page>-dark-phone.png at 390 px for the pages in PHONE_SHOTS). The dark theme changes
  colours and nothing else (tests/frontend/test_palette.py checks it), so in the dark only
  the rules that read colours run again (COLOUR_RULES);
- tabs through the page with the keyboard: every visible control must get the focus at some
  point, and look different when it has it (outline, box shadow, border or background
  compared with the same element unfocused).

The data is the demo's (`make run`'s demo_setup, demo_quality, demo_crowd and
demo_fine_grained), so the pages hold what a lab would see, at the demo's size. It is built
once for the module (`demo`), and each role's walk is a test of its own, run in the order
of the file, which was the walk's order when it was one test: what a walk changes (the
annotator's lease, the crowd worker's item) is then seen by the same later pages as before.

Not checked, only photographed: the API's Swagger UI page (drf-spectacular's template and
Swagger UI's markup). Not visited: Django's own admin, which staff reach past this site's
pages.
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.management import call_command
from django.test import modify_settings, override_settings
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from pytest_django.live_server_helper import LiveServer

from annotate.management.commands.demo_setup import demo_password
from annotate.models import Assignment, Perturbation, Project
from crowd.services import study_link_create
from tests.e2e.conftest import login
from tests.e2e.docs_screenshots import docs_screenshot

# Not transactional: the module's `demo` fixture commits the data the walks share, and
# empties the database after the last walk, as a transactional test's flush does after each
# test. The mark has the test database made when this file runs alone.
pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = ("serious", "critical")
DEMO = "Demo: film review sentiment"
QUALIFICATION = "Demo: qualification test"
FINE_GRAINED = "Demo: fine-grained sentiment (English)"
# Pages photographed in the dark theme on a phone as well (390 x 844, as the phone).
PHONE_SHOTS = {"workspace", "review", "quality", "perturbations"}
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

# axe-core's run on the document, RUN_ONLY naming the rules; the violations, in short.
AXE_RUN = """async () => {
  const result = await axe.run(document, {
    runOnly: RUN_ONLY,
    resultTypes: ["violations"],
  });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
  }));
}"""
RUN_AXE = AXE_RUN.replace("RUN_ONLY", json.dumps({"type": "tag", "values": ["wcag2a", "wcag2aa"]}))
# The WCAG 2 A/AA rules whose outcome depends on colours: text contrast, and links told
# apart from the text around them by colour alone. The only ones the dark theme can change.
COLOUR_RULES = ("color-contrast", "link-in-text-block")
RUN_AXE_COLOURS = AXE_RUN.replace("RUN_ONLY", json.dumps({"type": "rule", "values": COLOUR_RULES}))

# The controls a keyboard user must reach: visible, enabled, not taken out of the tab order.
# Each is tagged with a number, and its look unfocused is kept to compare with its look focused.
TAG_CONTROLS = """() => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, ' +
    '[tabindex]:not([tabindex="-1"]), [contenteditable="true"]';
  const shown = (el) => {
    if (el.closest('[inert], [hidden], [aria-hidden="true"]')) return false;
    // Inside a closed <details> (its summary aside), or otherwise not rendered.
    if (!el.checkVisibility({ checkVisibilityCSS: true, contentVisibilityAuto: true })) return false;
    if (el.disabled) return false;
    if (el.getAttribute('tabindex') === '-1') return false;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const controls = [...document.querySelectorAll(selector)].filter(shown);
  // One radio of a group is in the tab order; the arrows move within the group.
  const radioGroups = new Set();
  const wanted = controls.filter((el) => {
    if (el.type !== 'radio' || !el.name) return true;
    const key = `${el.form ? [...document.forms].indexOf(el.form) : -1}/${el.name}`;
    if (radioGroups.has(key)) return false;
    radioGroups.add(key);
    return true;
  });
  window.__a11yLook = (el) => {
    const parts = [el, ...(el.labels ? [...el.labels] : []), el.parentElement].filter(Boolean);
    return parts.map((p) => {
      const s = getComputedStyle(p);
      return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, s.borderColor,
        s.backgroundColor, s.textDecorationLine, s.color].join('|');
    }).join(' / ');
  };
  wanted.forEach((el, i) => {
    el.dataset.a11yControl = String(i);
    el.dataset.a11yUnfocused = window.__a11yLook(el);
  });
  return wanted.length;
}"""

# What has the focus, as the keyboard user sees it: noted in the page when each Tab key comes
# back up (the focus has moved by then, and the page's own focus handlers have run), so that a
# batch of Tab presses is read back in one call instead of one call per press (a typed "\t"
# inserts text, so each press is still a call of its own).
WATCH_FOCUS = """() => {
  window.__a11yFocusLog = [];
  if (window.__a11yWatching) return;
  window.__a11yWatching = true;
  const focused = () => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const isRadio = el.type === 'radio';
    const radios = isRadio && el.name
      ? [...document.querySelectorAll(`input[type=radio][name="${CSS.escape(el.name)}"]`)] : [];
    const tagged = radios.find((r) => r.dataset.a11yControl !== undefined) || el;
    return {
      index: tagged.dataset.a11yControl ?? null,
      changed: window.__a11yLook(el) !== (el.dataset.a11yUnfocused ?? ''),
      matchesFocusVisible: el.matches(':focus-visible'),
      name: `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''} "${(el.getAttribute('aria-label') || el.textContent || el.value || '').trim().slice(0, 40)}"`,
    };
  };
  window.addEventListener('keyup', (event) => {
    if (event.key === 'Tab') window.__a11yFocusLog.push(focused());
  }, true);
}"""

DESCRIBE = """(indexes) => indexes.map((i) => {
  const el = document.querySelector(`[data-a11y-control="${i}"]`);
  return `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''} "${(el.getAttribute('aria-label') || el.textContent || el.value || el.name || '').trim().slice(0, 40)}"`;
})"""


@dataclass
class Findings:
    axe: dict[str, list[str]] = field(default_factory=dict)
    unreachable: dict[str, list[str]] = field(default_factory=dict)
    no_focus_style: dict[str, list[str]] = field(default_factory=dict)
    visited: list[str] = field(default_factory=list)

    def report(self) -> str:
        parts = []
        for title, found in (
            ("axe-core, serious or critical (WCAG 2 A/AA)", self.axe),
            ("controls the Tab key never reaches", self.unreachable),
            ("controls with no visible focus", self.no_focus_style),
        ):
            if found:
                lines = [f"  {page}: " + "\n      ".join(items) for page, items in found.items()]
                parts.append(f"{title}:\n" + "\n".join(lines))
        return "\n\n".join(parts)


class Walker:
    """One role's browser, visiting pages and recording what each check finds."""

    def __init__(self, browser, base: str, role: str, findings: Findings):
        self.context = browser.new_context(viewport=DESKTOP, color_scheme="light")
        # axe-core in every document the role opens, from its start: evaluating its 500 kB
        # on each page took two fifths of the page's axe check. Not a <script>: the page's
        # Content Security Policy refuses inline scripts, and the check must not loosen the
        # policy it runs under.
        self.context.add_init_script(path=str(AXE))
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.base = base
        self.role = role
        self.findings = findings
        (SCREENSHOTS / role).mkdir(parents=True, exist_ok=True)

    def sign_in(self, username: str) -> None:
        login(self.page, self.base, username, demo_password(username))

    def visit(
        self,
        name: str,
        path: str,
        *,
        ready: str | None = None,
        status: int = 200,
    ):
        response = self.page.goto(f"{self.base}{path}")
        assert response is not None and response.status == status, (
            f"{self.role} {name}: {path} answered {response and response.status}, not {status}"
        )
        self.check(name, ready=ready)

    def check(self, name: str, *, ready: str | None = None) -> None:
        page = self.page
        if ready:
            page.wait_for_selector(ready)
        page.wait_for_load_state("networkidle")
        key = f"{self.role}/{name}"
        self.findings.visited.append(key)
        page.screenshot(path=str(SCREENSHOTS / self.role / f"{name}.png"), full_page=True)
        docs_screenshot(page, key)
        self._axe(key)
        self._dark(name, key)
        self._keyboard(key)

    def _dark(self, name: str, key: str) -> None:
        """The same page load with a dark system preference: axe again, and photographs."""
        page = self.page
        page.emulate_media(color_scheme="dark")
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
        page.screenshot(path=str(SCREENSHOTS / self.role / f"{name}-dark.png"))
        self._axe(f"{key} (dark)", script=RUN_AXE_COLOURS)
        if name in PHONE_SHOTS:
            page.set_viewport_size(PHONE)
            page.screenshot(path=str(SCREENSHOTS / self.role / f"{name}-dark-phone.png"))
            page.set_viewport_size(DESKTOP)
        page.emulate_media(color_scheme="light")

    def _axe(self, key: str, *, script: str = RUN_AXE) -> None:
        if not self.page.evaluate("typeof window.axe !== 'undefined'"):
            self.page.evaluate(AXE.read_text(encoding="utf-8"))  # a document the init missed
        violations = self.page.evaluate(script)
        blocking = [v for v in violations if v["impact"] in BLOCKING_IMPACTS]
        if blocking:
            self.findings.axe[key] = [
                f"[{v['impact']}] {v['id']}: {v['help']} -> "
                + "; ".join(n["target"] for n in v["nodes"][:6])
                + (f" (+{len(v['nodes']) - 6} more)" if len(v["nodes"]) > 6 else "")
                for v in blocking
            ]

    def _keyboard(self, key: str) -> None:
        page = self.page
        # Looks unfocused are taken with nothing focused (a field may have autofocus).
        page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
        count = page.evaluate(TAG_CONTROLS)
        # Start from the top of the document, as a keyboard user arriving at the page does.
        page.evaluate(
            "() => { const s = document.createElement('span'); s.tabIndex = -1; "
            "s.id = 'a11y-start'; document.body.prepend(s); s.focus(); }"
        )
        page.evaluate(WATCH_FOCUS)
        reached: set[str] = set()
        plain: list[str] = []
        seen_names: list[str] = []
        # Room for focus stops the tagging does not count (a page with hundreds of controls).
        budget, pressed, round_done = 2 * count + 40, 0, False
        while pressed < budget and not round_done:
            # Tab presses sent before the focus log is read: as many as a round of the page
            # still needs (the controls not reached, one past the last, one back to the first),
            # since each press is a round trip to the browser and the walk stops at the first
            # batch that goes round.
            batch = min(count - len(reached) + 2, budget - pressed)
            for _ in range(batch):
                page.keyboard.press("Tab")
            pressed += batch
            for focused in page.evaluate("() => window.__a11yFocusLog.splice(0)"):
                if focused is None:
                    continue
                if focused["index"] is not None:
                    if focused["index"] in reached:
                        round_done = True  # round the page once: back at a control reached
                        break
                    reached.add(focused["index"])
                if not focused["changed"]:
                    plain.append(focused["name"])
                seen_names.append(focused["name"])
        missing = sorted({str(i) for i in range(count)} - reached, key=int)
        if missing:
            self.findings.unreachable[key] = page.evaluate(DESCRIBE, [int(i) for i in missing])
        if plain:
            self.findings.no_focus_style[key] = plain

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def demo(request, django_db_setup, django_db_blocker, in_flight_requests, tmp_path_factory):
    """The demo's data, built once for the module's walks, served by a live server of the
    module's own: pytest-django's `live_server` would make each test transactional, and its
    flush would empty the database after the first walk. Emptied after the last walk."""
    address = (
        request.config.getvalue("liveserver")
        or os.environ.get("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    with django_db_blocker.unblock(), ExitStack() as stack:
        stack.enter_context(modify_settings(ALLOWED_HOSTS={"append": address.split(":")[0]}))
        server = LiveServer(address)
        stack.callback(server.stop)
        stack.enter_context(
            override_settings(
                MEDIA_ROOT=str(tmp_path_factory.mktemp("walk-media")),
                CROWD_PROLIFIC_COMPLETION_URL=f"{server.url}/accounts/login/?cc={{code}}",
            )
        )
        stack.callback(_flush_after_the_walks, in_flight_requests)
        yield _demo_data(server.url)


def _demo_data(base: str) -> dict:
    with open(os.devnull, "w") as quiet:
        for command in ("demo_setup", "demo_quality", "demo_crowd", "demo_fine_grained"):
            call_command(command, force=True, stdout=quiet)
    user_model = get_user_model()
    staff = user_model.objects.create_user(
        "demo-staff", password=demo_password("demo-staff"), is_staff=True
    )
    project = Project.objects.get(name=DEMO)
    # A one-item study, so the crowd worker reaches the done page.
    one_item = study_link_create(
        project=project,
        acting_user=user_model.objects.get(username="demo-admin"),
        name="Walk-through study (Prolific)",
        platform="prolific",
        consent_text="You agree to take part.",
        items_required=1,
        completion_code="WALKDONE",
        currency="GBP",
    )
    invited = user_model.objects.create_user("demo-invited")
    invited.set_unusable_password()
    invited.save()
    fine = Project.objects.get(name=FINE_GRAINED)
    return {
        "base": base,
        "project": project,
        "qualification": Project.objects.get(name=QUALIFICATION),
        "fine_grained": fine,
        "perturbed": Perturbation.objects.filter(original__project=fine)
        .order_by("pk")
        .first()
        .original_id,
        "one_item_link": one_item,
        "staff": staff,
        "invite_path": (
            f"/accounts/link/{urlsafe_base64_encode(force_bytes(invited.pk))}/"
            f"{default_token_generator.make_token(invited)}/"
        ),
    }


def _flush_after_the_walks(in_flight_requests) -> None:
    """What a transactional test's teardown does: the server's last requests finished, then
    Django's flush, so the tests after this module start from an empty database."""
    in_flight_requests.wait_until_quiet()
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False)


@pytest.fixture
def _media_root():
    """The module's media folder (`demo`) instead of one per test: the demo's files are
    written once, before the walks that read them."""
    yield


def project_paths(project_id: int) -> dict[str, str]:
    return {
        name: f"/projects/{project_id}/{suffix}"
        for name, suffix in (
            ("overview", ""),
            ("data", "data/"),
            ("items", "data/items/"),
            ("instructions", "instructions/"),
            ("workers", "workers/"),
            ("members", "members/"),
            ("quality", "quality/"),
            ("pipeline", "pipeline/"),
            ("review", "review/"),
            ("curation", "curation/"),
            ("agreement", "agreement/"),
            ("results", "results/"),
            ("datasheet", "datasheet/"),
            ("perturbations", "perturbations/"),
            ("perturb-check", "perturbations/check/"),
            ("settings", "settings/"),
        )
    }


# What a page's script sets once it has drawn what it loads.
READY = {
    "members": "#accounts-panel[data-ready=true]",
    "users": "#accounts-panel[data-ready=true]",
    "review": "#review[data-ready=true]",
    "items": "#data-manager[data-ready=true]",
    "item": "#item-page[data-ready=true]",
    "curation": "#curation-queue[data-ready=true]",
    "curation-item": "#curation-item[data-ready=true]",
    "workspace": "#workspace[data-ready=true]",
    "assignment": "#workspace[data-ready=true]",
}


def walk(
    browser, demo: dict, role: str, username: str | None, pages: dict[str, str], **statuses: int
) -> Walker:
    """`role`'s browser, signed in as `username`, after visiting `pages` (names and paths)."""
    walker = Walker(browser, demo["base"], role, Findings())
    if username:
        walker.sign_in(username)
    for name, path in pages.items():
        walker.visit(name, path, ready=READY.get(name), status=statuses.get(name, 200))
    return walker


def assert_accessible(walker: Walker, visited: list[str]) -> None:
    """Every page named was visited, and no check found anything on any of them."""
    findings = walker.findings
    assert findings.visited == [f"{walker.role}/{name}" for name in visited], findings.visited
    assert not (findings.axe or findings.unreachable or findings.no_focus_style), findings.report()


def test_every_page_of_the_admin_is_accessible(demo, browser):
    project, fine = demo["project"], demo["fine_grained"]
    # Every project page, the site's own pages and the pages reached from others.
    pages = {
        "home": "/",
        **project_paths(project.id),
        "users": "/users/",
        "password": "/accounts/password/",
    }
    pages["quality-test"] = f"/projects/{demo['qualification'].id}/quality/"
    pages["perturb-author"] = f"/projects/{fine.id}/perturbations/originals/{demo['perturbed']}/"
    pages["perturb-check-fine-grained"] = f"/projects/{fine.id}/perturbations/check/"
    # The item page and the curation page of an item with annotations.
    annotated = (
        Assignment.objects.filter(item__project=project, status="submitted").order_by("pk").first()
    )
    pages["item"] = f"/projects/{project.id}/data/items/{annotated.item_id}/"
    pages["curation-item"] = f"/projects/{project.id}/curation/{annotated.item_id}/"
    admin = walk(browser, demo, "admin", "demo-admin", pages)
    # Swagger UI's page: its language set by our script, its deep links (links nested in
    # buttons) off, its labels' colours darkened in api_docs.css; checked like every page.
    admin.visit("api-docs", "/api/docs/", ready=".swagger-ui .info")
    admin.close()
    assert_accessible(admin, [*pages, "api-docs"])


def test_every_page_of_the_researcher_is_accessible(demo, browser):
    paths = project_paths(demo["project"].id)
    pages = {
        "home": "/",
        **{
            name: paths[name]
            for name in ("overview", "items", "agreement", "results", "datasheet", "perturbations")
        },
        "password": "/accounts/password/",
    }
    researcher = walk(browser, demo, "researcher", "demo-researcher", pages)
    researcher.close()
    assert_accessible(researcher, list(pages))


def test_every_page_of_the_reviewer_is_accessible(demo, browser):
    paths = project_paths(demo["project"].id)
    pages = {
        "home": "/",
        "overview": paths["overview"],
        "review": paths["review"],
        "403": paths["data"],
        "404": "/projects/999999/",
    }
    reviewer = walk(browser, demo, "reviewer", "demo-reviewer", pages, **{"403": 403, "404": 404})
    reviewer.close()
    assert_accessible(reviewer, list(pages))


def test_every_page_of_the_annotator_is_accessible(demo, browser):
    project = demo["project"]
    overview = project_paths(project.id)["overview"]
    pages = {"home": "/", "overview": overview, "workspace": f"{overview}annotate/"}
    annotator = walk(browser, demo, "annotator", "demo-annotator", pages)
    # The assignment the workspace has just leased.
    assignment = (
        Assignment.objects.filter(worker__username="demo-annotator", item__project=project)
        .order_by("-pk")
        .first()
    )
    annotator.visit("assignment", f"/assignments/{assignment.pk}/", ready=READY["assignment"])
    annotator.close()
    assert_accessible(annotator, [*pages, "assignment"])


def test_every_page_of_the_perturbation_author_is_accessible(demo, browser):
    fine = demo["fine_grained"]
    paths = project_paths(fine.id)
    pages = {
        "home": "/",
        "overview": paths["overview"],
        "perturbations": paths["perturbations"],
        "perturb-author": f"/projects/{fine.id}/perturbations/originals/{demo['perturbed']}/",
    }
    author = walk(browser, demo, "author", "demo-author", pages)
    author.close()
    assert_accessible(author, list(pages))


def test_every_page_of_the_perturbation_checker_is_accessible(demo, browser):
    paths = project_paths(demo["fine_grained"].id)
    pages = {
        "home": "/",
        **{name: paths[name] for name in ("overview", "perturbations", "perturb-check")},
    }
    checker = walk(browser, demo, "checker", "demo-checker", pages)
    checker.close()
    assert_accessible(checker, list(pages))


def test_every_page_of_the_staff_is_accessible(demo, browser):
    pages = {"home": "/", "users": "/users/"}
    staff = walk(browser, demo, "staff", "demo-staff", pages)
    staff.close()
    assert_accessible(staff, list(pages))


def test_every_page_of_a_visitor_signed_out_is_accessible(demo, browser):
    pages = {
        "login": "/accounts/login/",
        "account-link": demo["invite_path"],
        "404": "/no-such-page/",
        "crowd-preview": "/crowd/s/demo-mturk/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE",
        "crowd-unknown-study": "/crowd/s/no-such-study/",
    }
    anonymous = walk(
        browser, demo, "anonymous", None, pages, **{"404": 404, "crowd-unknown-study": 404}
    )
    anonymous.close()
    assert_accessible(anonymous, list(pages))


def test_every_page_of_a_crowd_worker_is_accessible(demo, browser):
    """The platform's link, consent, the work, the end (done, or screened out)."""
    worker = Walker(browser, demo["base"], "crowd-worker", Findings())
    key = demo["one_item_link"].key
    worker.visit("consent", f"/crowd/s/{key}/?PROLIFIC_PID=walk-p1&STUDY_ID=s&SESSION_ID=s1")
    worker.page.click("text=I agree, start")
    worker.check("work", ready="#workspace[data-ready=true]")
    worker.page.locator(".document .tok").nth(1).click()
    worker.page.keyboard.press("Enter")
    # The page goes back to the platform after a few seconds unless the worker stays.
    worker.page.click("#return-stay")
    worker.check("done", ready="#crowd-done")
    assert worker.page.is_visible("#completion-code")
    worker.close()
    screened = Walker(browser, demo["base"], "crowd-worker", worker.findings)
    screened.visit(
        "screened-out",
        "/crowd/s/demo-screenout/?PROLIFIC_PID=demo-p2&STUDY_ID=demo&SESSION_ID=demo-s2",
    )
    screened.close()
    assert_accessible(screened, ["consent", "work", "done", "screened-out"])
