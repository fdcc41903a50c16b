"""The quality page reads at a glance: its policy in four sections with presets for the
flags and limits, each limit's warning beside its block, and the workers table's actions in
view however wide the table."""

import pytest

from annotate.models import ProjectMembership, Role
from annotate.services import assignment_next
from qc.models import QualityPolicy
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_policy_reads_in_sections_and_a_preset_fills_then_saves(browser, live_server):
    project = make_project(items=2, quota=1)
    admin = UserFactory(username="boss")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    worker = UserFactory(username="w-with-a-rather-long-user-name")
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    submit_first_tokens(assignment_next(project=project, worker=worker), worker)
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.set_default_timeout(15_000)
    login(page, live_server.url, "boss")

    page.goto(f"{live_server.url}/projects/{project.id}/quality/")
    page.wait_for_selector("#quality[data-ready=true]")

    legends = page.locator("#quality-policy fieldset legend").all_inner_texts()
    assert legends == [
        "Who may join",
        "Qualification test",
        "Flags on each submission",
        "Worker limits",
    ]
    limits = page.locator("#quality-policy .policy-limits tbody tr")
    assert limits.count() == 4
    assert limits.first.locator("input").evaluate_all("inputs => inputs.map(i => i.name)") == [
        "warn_median_seconds",
        "block_median_seconds",
    ]

    page.locator("#quality-policy button[data-preset=strict]").first.click()
    assert page.input_value("#quality-policy input[name=min_seconds]") == "15"
    assert "save to apply" in page.inner_text(".message")
    assert not QualityPolicy.objects.filter(
        project=project, min_seconds=15
    ).exists()  # not saved yet
    page.click("#quality-policy button[type=submit]")
    page.wait_for_function("() => document.querySelector('.message').textContent.includes('saved')")
    policy = QualityPolicy.objects.get(project=project)
    assert (policy.min_seconds, policy.block_median_seconds, policy.auto_block) == (15, 8, True)

    # The workers table scrolls inside its box; each row's action stays on screen.
    action = page.locator("#workers tr:has(td)").first.locator("td").last.locator("button")
    box = action.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1440
