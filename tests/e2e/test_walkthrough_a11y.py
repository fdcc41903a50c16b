"""Every page, for every role, in Chromium on the demo's data
(docs/design/architecture.md#the-interface).

For each page a role can open, the walk
- saves a full-page screenshot to test-artifacts/screenshots/<role>/<page>.png, for people to
  look at (not a pixel assertion; the folder is ignored by git);
- runs axe-core (vendored in tests/e2e/vendor/axe-core, injected by the test and never served
  to users) with the WCAG 2 A and AA rules, and fails on any violation of impact "serious" or
  "critical", naming the page, the rule and the elements; it runs twice on the same page load,
  once in the light theme and once with a dark system preference emulated (the pages follow
  `prefers-color-scheme`; frontend/palette.py), whose screenshot is saved beside the light
  one (<page>-dark.png, and <page>-dark-phone.png at 390 px for the pages in PHONE_SHOTS);
- tabs through the page with the keyboard: every visible control must get the focus at some
  point, and look different when it has it (outline, box shadow, border or background
  compared with the same element unfocused).

The data is the demo's (`make run`'s demo_setup, demo_quality, demo_crowd and
demo_fine_grained), so the pages hold what a lab would see, at the demo's size.

Not checked, only photographed: the API's Swagger UI page (drf-spectacular's template and
Swagger UI's markup). Not visited: Django's own admin, which staff reach past this site's
pages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.management import call_command
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotate.management.commands.demo_setup import demo_password
from annotate.models import Assignment, Perturbation, Project
from crowd.services import study_link_create
from tests.e2e.conftest import login
from tests.e2e.docs_screenshots import docs_screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = ("serious", "critical")
DEMO = "Demo: film review sentiment"
QUALIFICATION = "Demo: qualification test"
FINE_GRAINED = "Demo: fine-grained sentiment (English)"
# Pages photographed in the dark theme on a phone as well (390 x 844, as the issue's phone).
PHONE_SHOTS = {"workspace", "review", "quality", "perturbations"}
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

RUN_AXE = """async () => {
  const result = await axe.run(document, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] },
    resultTypes: ["violations"],
  });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
  }));
}"""

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

# Tab presses sent at once before the focus log is read; the walk stops at the first batch
# that goes round the page, so a few presses past the round cost nothing but their keys.
TABS_PER_READ = 20

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
        self._axe(f"{key} (dark)")
        if name in PHONE_SHOTS:
            page.set_viewport_size(PHONE)
            page.screenshot(path=str(SCREENSHOTS / self.role / f"{name}-dark-phone.png"))
            page.set_viewport_size(DESKTOP)
        page.emulate_media(color_scheme="light")

    def _axe(self, key: str) -> None:
        if not self.page.evaluate("typeof window.axe !== 'undefined'"):
            # Evaluated rather than added as a <script>: the page's Content Security Policy
            # refuses inline scripts, and the check must not loosen the policy it runs under.
            self.page.evaluate(AXE.read_text(encoding="utf-8"))
        violations = self.page.evaluate(RUN_AXE)
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
            batch = min(TABS_PER_READ, budget - pressed)
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


@pytest.fixture
def demo(live_server, settings):
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
    settings.CROWD_PROLIFIC_COMPLETION_URL = f"{live_server.url}/accounts/login/?cc={{code}}"
    return {
        "base": live_server.url,
        "project": project,
        "qualification": Project.objects.get(name=QUALIFICATION),
        "fine_grained": Project.objects.get(name=FINE_GRAINED),
        "one_item_link": one_item,
        "staff": staff,
        "invite_path": (
            f"/accounts/link/{urlsafe_base64_encode(force_bytes(invited.pk))}/"
            f"{default_token_generator.make_token(invited)}/"
        ),
    }


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


def test_every_page_of_every_role_is_accessible(demo, browser):
    base, project = demo["base"], demo["project"]
    fine = demo["fine_grained"]
    original = Perturbation.objects.filter(original__project=fine).order_by("pk").first()
    paths = project_paths(project.id)
    findings = Findings()

    def walk(role: str, username: str | None, pages: dict[str, str], **statuses: int) -> Walker:
        walker = Walker(browser, base, role, findings)
        if username:
            walker.sign_in(username)
        for name, path in pages.items():
            walker.visit(name, path, ready=READY.get(name), status=statuses.get(name, 200))
        return walker

    # Every project page, the site's own pages and the pages reached from others.
    admin_pages = {"home": "/", **paths, "users": "/users/", "password": "/accounts/password/"}
    admin_pages["quality-test"] = f"/projects/{demo['qualification'].id}/quality/"
    admin_pages["perturb-author"] = (
        f"/projects/{fine.id}/perturbations/originals/{original.original_id}/"
    )
    admin_pages["perturb-check-fine-grained"] = f"/projects/{fine.id}/perturbations/check/"
    # The item page and the curation page of an item with annotations.
    annotated = (
        Assignment.objects.filter(item__project=project, status="submitted").order_by("pk").first()
    )
    admin_pages["item"] = f"/projects/{project.id}/data/items/{annotated.item_id}/"
    admin_pages["curation-item"] = f"/projects/{project.id}/curation/{annotated.item_id}/"
    admin = walk("admin", "demo-admin", admin_pages)
    # Swagger UI's page: its language set by our script, its deep links (links nested in
    # buttons) off, its labels' colours darkened in api_docs.css; checked like every page.
    admin.visit("api-docs", "/api/docs/", ready=".swagger-ui .info")
    admin.close()

    walk(
        "researcher",
        "demo-researcher",
        {
            "home": "/",
            "overview": paths["overview"],
            "items": paths["items"],
            "agreement": paths["agreement"],
            "results": paths["results"],
            "datasheet": paths["datasheet"],
            "perturbations": paths["perturbations"],
            "password": "/accounts/password/",
        },
    ).close()

    walk(
        "reviewer",
        "demo-reviewer",
        {
            "home": "/",
            "overview": paths["overview"],
            "review": paths["review"],
            "403": paths["data"],
            "404": "/projects/999999/",
        },
        **{"403": 403, "404": 404},
    ).close()

    annotator = walk(
        "annotator",
        "demo-annotator",
        {"home": "/", "overview": paths["overview"], "workspace": f"{paths['overview']}annotate/"},
    )
    assignment = (
        Assignment.objects.filter(worker__username="demo-annotator", item__project=project)
        .order_by("-pk")
        .first()
    )
    annotator.visit("assignment", f"/assignments/{assignment.pk}/", ready=READY["assignment"])
    annotator.close()

    fine_paths = project_paths(fine.id)
    author_pages = {
        "home": "/",
        "overview": fine_paths["overview"],
        "perturbations": fine_paths["perturbations"],
        "perturb-author": f"/projects/{fine.id}/perturbations/originals/{original.original_id}/",
    }
    walk("author", "demo-author", author_pages).close()
    walk(
        "checker",
        "demo-checker",
        {
            "home": "/",
            "overview": fine_paths["overview"],
            "perturbations": fine_paths["perturbations"],
            "perturb-check": fine_paths["perturb-check"],
        },
    ).close()

    walk("staff", "demo-staff", {"home": "/", "users": "/users/"}).close()

    anonymous = walk(
        "anonymous",
        None,
        {
            "login": "/accounts/login/",
            "account-link": demo["invite_path"],
            "404": "/no-such-page/",
            "crowd-preview": "/crowd/s/demo-mturk/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE",
            "crowd-unknown-study": "/crowd/s/no-such-study/",
        },
        **{"404": 404, "crowd-unknown-study": 404},
    )
    anonymous.close()

    # The crowd worker: the platform's link, consent, the work, the end (done or screened out).
    worker = Walker(browser, base, "crowd-worker", findings)
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
    screened = Walker(browser, base, "crowd-worker", findings)
    screened.visit(
        "screened-out",
        "/crowd/s/demo-screenout/?PROLIFIC_PID=demo-p2&STUDY_ID=demo&SESSION_ID=demo-s2",
    )
    screened.close()

    assert len(findings.visited) >= 50, findings.visited
    assert not (findings.axe or findings.unreachable or findings.no_focus_style), findings.report()
