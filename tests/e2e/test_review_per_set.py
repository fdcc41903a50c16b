"""The reviewer sees each rationale set alone: its tokens highlighted, the other sets'
dimmed, beside that set's scores; the whole annotation once, with comprehensiveness. The
texts carry the project's names and the label the task type's word."""

import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import ProjectMembership, Role, TaskType
from annotate.services import annotation_submit, assignment_next
from qc.models import Review
from tests.e2e.conftest import login
from tests.e2e.test_task_type_workspaces import PAIR, project_with
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture
def two_sets(page, live_server, tmp_path):
    """A pair annotated with two sets: "playing a guitar" in the premise (set 1) and
    "performing music" in the hypothesis (set 2)."""
    project = project_with(
        tmp_path,
        TaskType.SENTENCE_PAIR,
        [PAIR],
        labels=["entailment", "neutral", "contradiction"],
        text_names=["Premise", "Hypothesis"],
        reviewers_per_annotation=1,
    )
    annotator = ProjectMembership.objects.get(project=project, role=Role.ANNOTATOR).user
    assignment = assignment_next(project=project, worker=annotator)
    premise, hypothesis = [d.docid for d in assignment.item.documents.order_by("docid")]
    result = annotation_submit(
        assignment_id=assignment.pk,
        worker=annotator,
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [{"docid": premise, "start_token": 3, "end_token": 6}],
            [{"docid": hypothesis, "start_token": 2, "end_token": 4}],
        ],
        label=None,
        time_spent_ms=20_000,
    )
    reviewer = UserFactory(username="rita")
    ProjectMembership.objects.create(project=project, user=reviewer, role=Role.REVIEWER)
    login(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/projects/{project.id}/review/")
    page.wait_for_selector("#review[data-ready=true]")
    return project, result.annotation


def _highlighted(page, where):
    return page.locator(f"{where} .tok.sel").all_inner_texts()


def test_each_set_is_shown_alone_beside_its_own_scores(page, two_sets):
    view = ".set-view"
    tabs = page.get_by_role("tab")
    expect(tabs).to_have_text(["Set 1 · 3 tokens", "Set 2 · 2 tokens"])
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")
    assert _highlighted(page, view) == ["playing", "a", "guitar"]
    assert page.locator(f"{view} .tok.dimmed").all_inner_texts() == ["performing", "music"]
    expect(page.locator(f"{view} .set-scores:visible > legend")).to_have_text(["Set 1 (3 tokens)"])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "review-set-1.png"), full_page=True)

    tabs.nth(1).click()
    assert _highlighted(page, view) == ["performing", "music"]
    assert page.locator(f"{view} .tok.dimmed").all_inner_texts() == ["playing", "a", "guitar"]
    expect(page.locator(f"{view} .set-scores:visible > legend")).to_have_text(["Set 2 (2 tokens)"])
    tabs.nth(1).press("ArrowLeft")  # the tabs follow the arrow keys
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")

    # The whole annotation once, every set drawn, with the one comprehensiveness scale.
    whole = ".whole-annotation"
    assert _highlighted(page, whole) == ["playing", "a", "guitar", "performing", "music"]
    expect(page.locator("input[name=comprehensiveness]")).to_have_count(3)
    expect(page.locator(f"{whole} .panel-title")).to_have_text(["Premise", "Hypothesis"])
    expect(page.locator(".gold-facts .gold-label")).to_contain_text("Gold label")
    expect(page.locator(".gold-facts .gold-label")).to_contain_text("entailment")
    assert "Answer" not in page.inner_text(".gold-facts")


def test_a_set_left_unscored_is_named_and_brought_on_screen(page, two_sets):
    _project, annotation = two_sets
    form = page.locator(".review-form")
    form.locator("input[name^=sufficiency-][value='3']").first.check()
    form.locator("input[name^=compactness-][value='4']").first.check()
    expect(page.locator("#set-tab-0")).to_have_class("set-tab legend-set set-0 current scored")
    form.locator("input[name=comprehensiveness][value='3']").check()
    form.locator("button[type=submit]").click()

    expect(page.locator(".message.error")).to_have_text("Set 2 has no sufficiency score yet.")
    expect(page.locator("#set-tab-1")).to_have_attribute("aria-selected", "true")
    assert not Review.objects.exists()

    form.locator(".set-scores:visible input[name^=sufficiency-][value='2']").check()
    form.locator(".set-scores:visible input[name^=compactness-][value='3']").check()
    form.locator("button[type=submit]").click()
    page.wait_for_selector(".message.ok")
    review = Review.objects.get(annotation=annotation)
    assert sorted(
        (s.rationale_set.position, s.sufficiency, s.compactness) for s in review.set_scores.all()
    ) == [(0, 3, 4), (1, 2, 3)]
