"""The review page from the keyboard alone: the shortcuts dialog, every score by key, the
comment, submit, moving between an item's annotations, and the queue's filters beside the
item on a wide screen."""

import uuid

import pytest
from playwright.sync_api import expect

from annotate.models import ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from qc.models import Review, SetScore
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _member(project, name, role):
    user = UserFactory(username=name)
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def _submitted(project, worker, end=2):
    lease = assignment_next(project=project, worker=worker)
    return annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": text_docid(lease), "start_token": 0, "end_token": end}]],
    ).annotation


@pytest.fixture
def two_annotations(live_server, page):
    project = make_project(items=1, quota=2, reviewers_per_annotation=2)
    first = _submitted(project, _member(project, "ann", Role.ANNOTATOR))
    second = _submitted(project, _member(project, "bea", Role.ANNOTATOR), end=4)
    _member(project, "rev", Role.REVIEWER)
    page.set_viewport_size({"width": 1366, "height": 900})
    login(page, live_server.url, "rev")
    page.goto(f"{live_server.url}/projects/{project.id}/review/")
    page.wait_for_selector("#review[data-ready=true]")
    return project, first, second


def test_scores_comment_and_submit_from_the_keyboard(page, two_annotations):
    _, first, _ = two_annotations
    expect(page.locator("#review")).to_have_attribute("data-annotation", str(first.pk))

    page.keyboard.press("?")
    dialog = page.locator("#review-shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Sufficiency of the set shown")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    for keys in (("s", "2"), ("c", "4"), ("w", "3")):
        for key in keys:
            page.keyboard.press(key)
    page.keyboard.press("m")
    page.keyboard.type("Tight and right.")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    expect(page.locator(".message")).to_contain_text("Scores saved")

    review = Review.objects.get(annotation=first)
    scores = SetScore.objects.get(review=review)
    assert (scores.sufficiency, scores.compactness, review.comprehensiveness) == (2, 4, 3)
    assert review.comment == "Tight and right."


def test_accept_fills_every_top_score_and_enter_sends_it(page, two_annotations):
    _, first, _ = two_annotations
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    expect(page.locator(".message")).to_contain_text("Scores saved")
    review = Review.objects.get(annotation=first)
    scores = SetScore.objects.get(review=review)
    assert (scores.sufficiency, scores.compactness, review.comprehensiveness) == (3, 4, 3)


def test_the_items_other_annotation_is_one_key_away_and_back(page, two_annotations):
    _, first, second = two_annotations
    page.keyboard.press(".")
    expect(page.locator("#review")).to_have_attribute("data-annotation", str(second.pk))
    expect(page.locator(".same-item")).to_contain_text("2 of 2")
    page.keyboard.press(",")
    expect(page.locator("#review")).to_have_attribute("data-annotation", str(first.pk))


def test_the_queue_sits_beside_the_item_and_filters_on_the_server(page, two_annotations):
    _, _, second = two_annotations
    queue = page.locator(".review-queue-panel")
    body = page.locator(".review-body")
    expect(queue.locator("tr[data-annotation]")).to_have_count(2)
    queue_box, body_box = queue.bounding_box(), body.bounding_box()
    assert queue_box["x"] > body_box["x"] + body_box["width"] - 1  # beside, not below
    assert queue_box["y"] < body_box["y"] + 200

    page.select_option(".queue-filters select[name=sort]", "newest")
    expect(queue.locator("tr[data-annotation]").first).to_have_attribute(
        "data-annotation", str(second.pk)
    )
    page.select_option(".queue-filters select[name=waited_hours]", "24")
    expect(queue.locator("tr[data-annotation]")).to_have_count(0)


def test_below_1200_px_the_queue_is_a_panel_above_the_item(page, two_annotations):
    page.set_viewport_size({"width": 900, "height": 900})
    page.reload()
    page.wait_for_selector("#review[data-ready=true]")
    panel = page.locator(".review-queue-panel")
    assert panel.bounding_box()["y"] < page.locator(".review-body").bounding_box()["y"]
    expect(panel.locator(".review-queue")).to_be_hidden()
    panel.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(panel.locator(".review-queue")).to_be_visible()


def test_a_text_with_emoji_shows_each_token_where_it_is(live_server, page):
    """The server counts characters in code points, the page's strings in UTF-16 units: an
    emoji before a word must not shift the words after it on the review page."""
    project = make_project(items=1, quota=1, text="Great 😀 film , truly 👍🏽 moving .")
    _submitted(project, _member(project, "ann", Role.ANNOTATOR), end=3)
    _member(project, "rev", Role.REVIEWER)
    login(page, live_server.url, "rev")
    page.goto(f"{live_server.url}/projects/{project.id}/review/")
    page.wait_for_selector("#review[data-ready=true]")

    text = page.locator("[data-docid]").first
    words = text.locator(".tok.readonly").all_inner_texts()
    assert words == ["Great", "😀", "film", ",", "truly", "👍🏽", "moving", "."]
    assert text.locator(".tok.readonly.sel").all_inner_texts() == ["Great", "😀", "film"]
