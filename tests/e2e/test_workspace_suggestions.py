"""Model suggestions in the annotator's workspace: drawn apart from the sets with a
legend, accepted by a click and submitted as ordinary highlights; a variant without them
shows none. The screenshot goes to test-artifacts/screenshots/ for people to look at."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, ProjectMembership, Role
from tests.e2e.conftest import login
from tests.e2e.test_task_type_workspaces import open_workspace
from tests.e2e.test_walkthrough_a11y import AXE, BLOCKING_IMPACTS, RUN_AXE
from tests.exports.suggestion_helpers import suggestion_project
from tests.factories import UserFactory
from tests.qc.test_suggestion_pull import _annotate

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture
def suggested(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    return suggestion_project(items=1)


def test_accepting_one_suggestion_and_submitting(page, live_server, suggested):
    project, _, _, _, worker, _ = suggested
    open_workspace(page, live_server, project, username=worker.username)

    suggestions = page.locator(".document .tok.suggested")
    expect(suggestions).to_have_count(2)  # "rather good": k = the run's hard rationale size
    expect(page.locator(".suggestion-bar")).to_be_visible()
    expect(page.locator(".suggestion-count")).to_have_text("0 of 2 accepted")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "workspace-suggestions.png"))
    page.evaluate(AXE.read_text(encoding="utf-8"))
    blocking = [v for v in page.evaluate(RUN_AXE) if v["impact"] in BLOCKING_IMPACTS]
    assert blocking == []

    suggestions.first.click()  # "rather"
    expect(page.locator(".document .tok.suggested.accepted")).to_have_count(1)
    expect(page.locator(".suggestion-count")).to_have_text("1 of 2 accepted")
    page.screenshot(path=str(SCREENSHOTS / "workspace-suggestion-accepted.png"))
    page.click(".ws-toolbar .submit")
    page.wait_for_selector("#workspace[data-last-submitted]")

    annotation = Annotation.objects.get()
    docid = annotation.assignment.item.documents.get().docid
    assert annotation.suggestions["accepted"] == [[docid, 5]]
    assert annotation.suggestions["suggested"] == [[docid, 5], [docid, 6]]
    spans = annotation.rationale_sets.get().spans.values_list("start_token", "end_token")
    assert list(spans) == [(5, 6)]  # the other suggestion, not accepted, is not stored


def test_an_accepted_suggestion_stays_accepted_after_a_reload(page, live_server, suggested):
    """The draft keeps which suggestions were accepted: back on the item, the count and the
    marks say so, and the submit claims them."""
    project, _, _, _, worker, _ = suggested
    open_workspace(page, live_server, project, username=worker.username)

    page.locator(".document .tok.suggested").first.click()
    expect(page.locator(".suggestion-count")).to_have_text("1 of 2 accepted")
    page.wait_for_selector("#workspace[data-draft-saved=true]")
    page.reload()
    page.wait_for_selector("#workspace[data-ready=true]")

    expect(page.locator(".suggestion-count")).to_have_text("1 of 2 accepted")
    expect(page.locator(".document .tok.suggested.accepted")).to_have_count(1)
    page.click(".ws-toolbar .submit")
    page.wait_for_selector("#workspace[data-last-submitted]")
    annotation = Annotation.objects.get()
    docid = annotation.assignment.item.documents.get().docid
    assert annotation.suggestions["accepted"] == [[docid, 5]]


def test_ignored_suggestions_are_hidden_and_never_submitted(page, live_server, suggested):
    project, _, _, _, worker, _ = suggested
    open_workspace(page, live_server, project, username=worker.username)

    page.click(".ignore-suggestions")
    expect(page.locator(".document .tok.suggested")).to_have_count(0)
    page.keyboard.press("A")  # accept all does nothing while they are hidden
    page.locator(".document .tok").first.click()
    page.click(".ws-toolbar .submit")
    page.wait_for_selector("#workspace[data-last-submitted]")

    annotation = Annotation.objects.get()
    assert annotation.suggestions["accepted"] == []
    spans = annotation.rationale_sets.get().spans.values_list("start_token", "end_token")
    assert list(spans) == [(0, 1)]


def test_a_variant_without_suggestions_shows_none(page, live_server, suggested):
    project, _, _, _, _, plain_worker = suggested
    open_workspace(page, live_server, project, username=plain_worker.username)

    expect(page.locator(".document .tok")).not_to_have_count(0)
    expect(page.locator(".suggestion-bar")).to_have_count(0)
    expect(page.locator(".tok.suggested")).to_have_count(0)
    assert "suggest" not in page.content().lower()


def test_the_agreement_page_shows_the_pull_of_suggestions(page, live_server, suggested):
    project, _, _, _, shown_worker, plain_worker = suggested
    _annotate(
        project,
        shown_worker,
        5,
        7,
        accepted=lambda docid: [{"docid": docid, "token": 5}, {"docid": docid, "token": 6}],
        times=1,
    )
    _annotate(project, plain_worker, 0, 2, times=1)
    researcher = UserFactory(username="researcher")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "researcher")

    page.goto(f"{live_server.url}/projects/{project.id}/agreement/")
    page.wait_for_selector("#suggestion-pull[data-ready=true]")

    expect(page.locator("#suggestion-pull")).to_be_visible()
    rows = page.locator("#suggestion-pull .suggestion-variants tbody tr")
    expect(rows).to_have_count(2)
    shown = page.locator('#suggestion-pull .suggestion-variants tr[data-key="shown"]')
    expect(shown.locator('td[data-column="F1 vs suggestions"]')).to_have_text("1.00")
    plain = page.locator('#suggestion-pull .suggestion-variants tr[data-key="plain"]')
    expect(plain.locator('td[data-column="F1 vs suggestions"]')).to_have_text("0.00")
    expect(page.locator("#suggestion-pull .suggestion-tests tbody tr")).to_have_count(1)
    page.locator("#suggestion-pull").screenshot(path=str(SCREENSHOTS / "agreement-suggestions.png"))


def test_an_admin_sets_a_variants_suggestions_on_the_instructions_page(
    page, live_server, suggested
):
    project, _, plain, run, _, _ = suggested
    admin = UserFactory(username="admin")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    login(page, live_server.url, "admin")
    page.goto(f"{live_server.url}/projects/{project.id}/instructions/")

    editor = page.locator(
        "fieldset.suggestions-editor", has=page.get_by_label("Explainer run of plain")
    )
    page.get_by_label("Explainer run of plain").fill(str(run.pk))
    page.get_by_label("Tokens suggested per item for plain").fill("3")
    editor.get_by_role("button", name="Show suggestions").click()

    expect(page.locator(".admin-status")).to_have_text("Saved plain as version 1.")
    plain.refresh_from_db()
    assert (plain.suggestions["run"], plain.suggestions["k"]) == (run.pk, 3)
    # The table is drawn again from the saved variant.
    expect(editor.locator(".suggestions-state")).to_have_text(
        f"Shows the top 3 tokens of explainer run {run.pk}."
    )
