"""Crowd studies in the browser. MTurk: the preview makes no account; an accepted HIT
goes through consent and the set number of items, and the page posts the finished HIT to
`turkSubmitTo`, here a tiny HTTP server on 127.0.0.1 that records it. Prolific: entry,
consent, work, and the redirect to the completion URL with the code (a local fake)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotate.services import variant_presets_install
from crowd.models import CrowdSession, SessionStatus
from crowd.platforms import completion_token_valid
from crowd.services import study_link_create
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


class _Recorder(BaseHTTPRequestHandler):
    def _record(self, body: bytes):
        if self.path != "/favicon.ico":  # the browser's own request, not the hand-off
            self.server.requests.append(  # type: ignore[attr-defined]
                {"method": self.command, "path": self.path, "form": parse_qs(body.decode())}
            )
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body><h1>Recorded by the fake platform</h1></body></html>")

    def do_POST(self):
        self._record(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def do_GET(self):
        self._record(b"")

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def fake_platform():
    """A platform's end of the hand-off on 127.0.0.1, recording every request."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _study(platform: str, **fields):
    project = make_project(items=4, quota=2)
    admin = UserFactory(username=f"admin-{platform}")
    link = study_link_create(
        project=project,
        acting_user=admin,
        name=f"{platform} e2e",
        platform=platform,
        consent_text="You agree that your highlights are used for research.",
        items_required=2,
        description="Highlight why each review has its sentiment.",
        **fields,
    )
    return project, link


def _work_items(page, n: int):
    """Select a token and submit, `n` times, each on a freshly loaded item."""
    seen = None
    for _ in range(n):
        page.wait_for_selector("#workspace[data-ready=true][data-assignment]")
        current = page.get_attribute("#workspace", "data-assignment")
        if current == seen:
            page.wait_for_function(
                "old => document.getElementById('workspace').dataset.assignment !== old", arg=seen
            )
            current = page.get_attribute("#workspace", "data-assignment")
        page.locator(".document .tok").nth(1).click()
        page.keyboard.press("Enter")
        seen = current


def test_mturk_preview_accept_consent_work_and_submit(
    browser, live_server, fake_platform, settings
):
    server, origin = fake_platform
    settings.CROWD_MTURK_SUBMIT_ORIGINS = [origin]
    project, link = _study("mturk", reward_per_session="0.08")
    entry = f"{live_server.url}{reverse('crowd:entry', args=[link.key])}"
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(15_000)

    # Preview: the instructions page, no item and no account
    page.goto(f"{entry}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=HIT1")
    assert "Highlight why each review has its sentiment." in page.inner_text("#crowd-preview")
    assert page.locator(".document").count() == 0
    assert not get_user_model().objects.filter(username__startswith="mturk.").exists()

    # Accepted: the entry with the worker's ids, then consent
    page.goto(f"{entry}?assignmentId=ASSIGN1&hitId=HIT1&workerId=A3WORKER&turkSubmitTo={origin}")
    page.wait_for_selector("#crowd-consent")
    assert "You agree that your highlights" in page.inner_text("#consent-text")
    page.click("text=I agree, start")
    page.wait_for_selector("#crowd-session")
    _work_items(page, 2)

    # The finished HIT is posted to turkSubmitTo + /mturk/externalSubmit
    page.wait_for_url(f"{origin}/mturk/externalSubmit")
    (posted,) = server.requests
    assert (posted["method"], posted["path"]) == ("POST", "/mturk/externalSubmit")
    assert posted["form"]["assignmentId"] == ["ASSIGN1"]
    token = posted["form"]["completion_token"][0]
    assert completion_token_valid(
        token, link_id=link.pk, platform="mturk", worker_id="A3WORKER", session_id="ASSIGN1"
    )
    session = CrowdSession.objects.get()
    assert (session.status, session.items_done, session.completion_token) == (
        SessionStatus.COMPLETED,
        2,
        token,
    )
    # The finished worker left no item leased behind
    assert not project.items.filter(assignments__status="leased").exists()
    page.context.close()


def test_prolific_entry_consent_work_and_completion_redirect(
    browser, live_server, fake_platform, settings
):
    server, origin = fake_platform
    settings.CROWD_PROLIFIC_COMPLETION_URL = f"{origin}/submissions/complete?cc={{code}}"
    _, link = _study("prolific", completion_code="C0DE42", currency="GBP")
    entry = f"{live_server.url}{reverse('crowd:entry', args=[link.key])}"
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(15_000)

    page.goto(f"{entry}?PROLIFIC_PID=60f0a1b2c3d4e5f6a7b8c9d0&STUDY_ID=ST1&SESSION_ID=SE1")
    page.click("text=I agree, start")
    _work_items(page, 2)

    page.wait_for_selector("#crowd-done")
    assert page.inner_text("#completion-code") == "C0DE42"
    page.wait_for_url(f"{origin}/submissions/complete?cc=C0DE42")
    assert server.requests[-1]["path"] == "/submissions/complete?cc=C0DE42"
    session = CrowdSession.objects.get()
    assert (session.status, session.items_done) == (SessionStatus.COMPLETED, 2)
    assert urlsplit(page.url).netloc == urlsplit(origin).netloc
    page.context.close()


def test_a_participants_workspace_names_no_variant(browser, live_server):
    """What the page scripts render from the blinded answers: the instruction under a
    plain heading, a counter of the study's items, nothing naming the arm."""
    project = make_project(items=4, quota=2, variants=())
    variant = variant_presets_install(project=project)[-1]
    admin = UserFactory(username="admin-blind")
    link = study_link_create(
        project=project,
        acting_user=admin,
        name="blinded e2e",
        platform="prolific",
        variant=variant,
        consent_text="You agree that your highlights are used for research.",
        items_required=2,
        completion_code="C0DE42",
        currency="GBP",
    )
    entry = f"{live_server.url}{reverse('crowd:entry', args=[link.key])}"
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(15_000)

    page.goto(f"{entry}?PROLIFIC_PID=60f0a1b2c3d4e5f6a7b8c9d1&STUDY_ID=ST1&SESSION_ID=SE2")
    page.click("text=I agree, start")
    page.wait_for_selector("#workspace[data-ready=true][data-assignment]")
    # The counter reads "Progress: …" until its own request answers.
    page.wait_for_function(
        "() => (document.querySelector('.progress')?.textContent || '').startsWith('Items done')"
    )

    assert page.inner_text(".instructions summary") == "Instructions"
    assert variant.text in page.inner_text(".instruction-text")
    assert page.inner_text(".progress") == "Items done in this study: 0"
    shown = page.content() + page.title()
    assert variant.name not in shown and "version" not in page.inner_text("body")
    assert 'id="password-link"' not in shown
    page.context.close()
