"""Headless Chromium from Debian's package, driven by Playwright; never a downloaded browser."""

import os
import threading
import time
from pathlib import Path

import pytest
from django.core.signals import request_finished, request_started

from tests.conftest import skip_or_fail

CHROMIUM = Path(os.environ.get("RW_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Playwright's sync API runs an event loop in the test thread; the ORM calls made by the
# tests themselves are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        skip_or_fail(f"needs Chromium at {CHROMIUM} (Debian packages chromium, chromium-driver)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


class InFlightRequests:
    """Counts the live server's requests still being handled.

    Closing a browser context does not stop what the server is already doing: a "next"
    fired just before the test ended may still hold row locks when the test database is
    flushed, and PostgreSQL then aborts the flush as a deadlock. Teardown waits here.
    """

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()

    def started(self, **kwargs):
        with self.lock:
            self.count += 1

    def finished(self, **kwargs):
        with self.lock:
            self.count -= 1

    def wait_until_quiet(self, *, quiet_for: float = 0.05, give_up_after: float = 15.0) -> None:
        deadline = time.monotonic() + give_up_after
        quiet_since = None
        while time.monotonic() < deadline:
            if self.count <= 0:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= quiet_for:
                    return
            else:
                quiet_since = None
            time.sleep(0.02)


@pytest.fixture(scope="session")
def in_flight_requests():
    counter = InFlightRequests()
    request_started.connect(counter.started, dispatch_uid="e2e-in-flight-started")
    request_finished.connect(counter.finished, dispatch_uid="e2e-in-flight-finished")
    yield counter
    request_started.disconnect(dispatch_uid="e2e-in-flight-started")
    request_finished.disconnect(dispatch_uid="e2e-in-flight-finished")


@pytest.fixture(autouse=True)
def live_server_quiet_before_flush(in_flight_requests):
    """Runs its teardown before pytest-django flushes the database (its fixture is set up first)."""
    yield
    in_flight_requests.wait_until_quiet()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def login(page, base_url: str, username: str, password: str = "pw") -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")
