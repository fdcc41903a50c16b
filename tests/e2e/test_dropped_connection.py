"""A request that gets no answer: the page says so, and a submit retried is stored once.

Playwright's routes stand in for the network: `route.abort()` is a request that never
reached the server, and `route.fetch()` then `route.abort()` one whose answer was lost
on its way back (the server stored it, the page heard nothing).
"""

import json
import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, ProjectMembership, Role
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SUBMIT_URL = "**/api/assignments/*/submit/"
DROPPED = "The connection dropped before the server answered"


def open_workspace(page, live_server):
    project = make_project(items=1, quota=1)
    user = UserFactory(username="ann")
    ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    page.locator(".document .tok").nth(1).click()
    return project


def failing_once(sent, *, delivered):
    """A route handler that records each submit's body and fails the first one."""

    def handle(route):
        sent.append(json.loads(route.request.post_data))
        if len(sent) > 1:
            route.continue_()
            return
        if delivered:
            route.fetch()
        route.abort()

    return handle


def assert_failure_shown_and_submit_enabled(page):
    expect(page.locator(".message.error")).to_contain_text(DROPPED)
    expect(page.locator("button.submit")).to_be_enabled()


def test_a_dropped_submit_says_so_and_its_retry_is_stored_once(page, live_server):
    sent = []
    page.route(SUBMIT_URL, failing_once(sent, delivered=False))
    open_workspace(page, live_server)

    page.click("button.submit")
    assert_failure_shown_and_submit_enabled(page)
    assert Annotation.objects.count() == 0

    page.wait_for_timeout(50)  # the time spent grows: the retry must not resend a new figure
    page.click("button.submit")
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert len(sent) == 2
    assert sent[1] == sent[0]
    annotation = Annotation.objects.get()
    assert str(annotation.client_uuid) == sent[0]["client_uuid"]
    assert annotation.time_spent_ms == sent[0]["time_spent_ms"]


def test_a_submit_whose_answer_was_lost_is_replayed_not_stored_twice(page, live_server):
    sent = []
    page.route(SUBMIT_URL, failing_once(sent, delivered=True))
    open_workspace(page, live_server)

    page.click("button.submit")
    assert_failure_shown_and_submit_enabled(page)
    assert Annotation.objects.count() == 1  # it did arrive

    with page.expect_response(SUBMIT_URL) as replay:
        page.click("button.submit")
    assert replay.value.status == 200  # a replay, not 201 (created) nor 409 (conflict)
    page.wait_for_selector("#workspace[data-last-submitted]")
    assert sent[1] == sent[0]
    assert str(Annotation.objects.get().client_uuid) == sent[0]["client_uuid"]


def test_a_reload_after_a_dropped_submit_sends_the_same_uuid(page, live_server):
    sent = []
    page.route(SUBMIT_URL, failing_once(sent, delivered=False))
    open_workspace(page, live_server)
    page.click("button.submit")
    assert_failure_shown_and_submit_enabled(page)

    page.reload()
    page.wait_for_selector("#workspace[data-ready=true]")
    page.click("button.submit")
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert sent[1]["client_uuid"] == sent[0]["client_uuid"]
    assert str(Annotation.objects.get().client_uuid) == sent[0]["client_uuid"]


def test_a_changed_selection_after_a_dropped_submit_takes_a_new_uuid(page, live_server):
    sent = []
    page.route(SUBMIT_URL, failing_once(sent, delivered=False))
    open_workspace(page, live_server)
    page.click("button.submit")
    assert_failure_shown_and_submit_enabled(page)

    page.locator(".document .tok").nth(2).click()
    page.click("button.submit")
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert sent[1]["client_uuid"] != sent[0]["client_uuid"]
    assert sent[1]["rationale_sets"] != sent[0]["rationale_sets"]
    assert str(Annotation.objects.get().client_uuid) == sent[1]["client_uuid"]


def test_a_dropped_export_request_is_shown_in_the_export_panel(page, live_server):
    project = ProjectFactory(labels=[])
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")

    def drop_starts(route):
        if route.request.method == "POST":
            route.abort()
        else:
            route.continue_()

    page.route("**/api/projects/*/exports/", drop_starts)
    page.goto(f"{live_server.url}/projects/{project.id}/results/")
    page.click("#export-form button[type=submit]")

    expect(page.locator(".export-status.error")).to_contain_text(DROPPED)


def test_a_dropped_results_load_is_shown_on_the_results_board(page, live_server):
    project = ProjectFactory(labels=[])
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")

    page.route(re.compile(r"/exports/\?limit=200$"), lambda route: route.abort())
    page.goto(f"{live_server.url}/projects/{project.id}/results/")

    expect(page.locator(".run-status.error")).to_contain_text(DROPPED)
