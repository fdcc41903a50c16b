"""Qualification in words, in the browser: the admin reads a candidate's test answer as
highlighted words beside the gold (agreed, extra, missed) and picks gold items from a
searchable list; a candidate who failed the first attempt is told so before the second."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Item, ProjectMembership, Role
from qc.models import GoldItem
from qc.services import (
    gold_items_set,
    qualification_answer_submit,
    qualification_test_next,
    quality_policy_update,
)
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import UserFactory
from tests.qc.helpers import add_reference

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture
def gold_test():
    """Four items; i0 is gold with "rather good film" (tokens 5-7) as its rationale."""
    project = make_project(items=4, quota=1)
    items = list(Item.objects.filter(project=project).order_by("pk"))
    add_reference(items[0], 5, 8)
    add_reference(items[2], 1, 3)
    gold_items_set(project=project, annotation_ids=[items[0].annotation_id])
    quality_policy_update(
        project=project,
        test_enabled=True,
        manual_selection=True,
        test_pass_f1=0.5,
        test_max_attempts=2,
    )
    people = {}
    for name, role in (("cand", Role.ANNOTATOR), ("boss", Role.ADMIN)):
        people[name] = UserFactory(username=name)
        ProjectMembership.objects.create(project=project, user=people[name], role=role)
    return project, people


def _marked(page, side, kind):
    return page.locator(f".answer-side >> nth={side} >> mark.answer-word.{kind}").evaluate_all(
        "(marks) => marks.map((m) => m.firstChild.textContent)"
    )


def test_the_admin_reads_a_test_answer_as_words_beside_the_gold(page, live_server, gold_test):
    project, people = gold_test
    gold, _attempt, _total = qualification_test_next(project=project, worker=people["cand"])
    docid = gold.item.documents.get().docid
    qualification_answer_submit(  # "a rather good": one extra word, one missed
        project=project,
        worker=people["cand"],
        gold_item_id=gold.pk,
        rationale_sets=[[{"docid": docid, "start_token": 4, "end_token": 7}]],
        time_spent_ms=12_000,
    )

    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/quality/")
    page.wait_for_selector("#quality[data-ready=true]")
    answer = page.locator(".candidate[data-worker=cand] .test-answer[data-item=i0]")
    expect(answer.locator(".answer-side-title")).to_have_text(
        ["Candidate's highlights", "Gold rationale"]
    )
    assert _marked(answer, 0, "agreed") == ["rather", "good"]
    assert _marked(answer, 0, "extra") == ["a"]
    assert _marked(answer, 1, "agreed") == ["rather", "good"]
    assert _marked(answer, 1, "missed") == ["film"]
    expect(answer.locator(".answer-key")).to_have_text(
        "2 agreed1 extra (only the candidate)1 missed (only the gold)"
    )
    # Told apart by more than colour: each kind has its own underline and a spoken sign.
    styles = answer.locator(".answer-key .answer-word").evaluate_all(
        "(keys) => keys.map((k) => getComputedStyle(k).textDecorationStyle)"
    )
    assert len(set(styles)) == 3
    assert "(missed: only the gold)" in answer.locator("mark.missed").inner_text()
    assert "5 6 7" not in page.inner_text("#candidates")  # words, not token numbers
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    answer.screenshot(path=str(SCREENSHOTS / "quality-test-answer.png"))
    page.screenshot(path=str(SCREENSHOTS / "quality-page.png"), full_page=True)


def test_the_admin_picks_gold_items_from_a_searchable_list(page, live_server, gold_test):
    project, _people = gold_test
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/quality/")
    picker = page.locator("#gold-picker[data-ready=true]")
    expect(picker.locator(".gold-chip")).to_have_text(["i0×"])
    expect(picker.locator(".gold-pager")).to_contain_text("1–4 of 4")
    expect(picker.locator("tr[data-item=i1]")).to_contain_text("no reference rationale")

    picker.get_by_role("searchbox", name="Search items by id or text").fill("number 2")
    expect(picker.locator(".gold-results tr[data-item]")).to_have_count(1)
    picker.get_by_role("button", name="Add i2 to the gold items").click()
    expect(picker.locator(".gold-chip")).to_have_text(["i0×", "i2×"])
    picker.get_by_role("button", name="Remove i0 from the gold items").click()
    expect(picker.locator(".gold-chip")).to_have_text(["i2×"])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#gold-picker").screenshot(path=str(SCREENSHOTS / "quality-gold-picker.png"))
    picker.get_by_role("button", name="Save gold items").click()
    expect(page.locator(".message.ok")).to_have_text("Gold items: i2.")

    assert list(GoldItem.objects.values_list("item__annotation_id", flat=True)) == ["i2"]


def test_a_failed_first_attempt_is_told_before_the_second_begins(page, live_server, gold_test):
    project, _people = gold_test
    login(page, live_server.url, "cand")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-mode=test][data-ready=true]")
    page.locator(".document .tok").nth(0).click()  # "Item": nothing like the gold
    page.keyboard.press("Enter")

    notice = page.locator(".attempt-notice")
    expect(notice).to_be_visible()
    expect(notice.locator("h2")).to_have_text("You did not pass the first attempt")
    expect(notice).to_contain_text("mean token F1 of 0; the pass mark is 0.50")
    expect(notice).to_contain_text("You have one more attempt.")
    expect(page.locator(".document .tok")).to_have_count(0)  # the item waits for the worker
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "qualification-failed-first-attempt.png"))
    page.keyboard.press("Enter")  # on the focused Begin button, not a submit

    expect(page.locator(".test-banner")).to_contain_text("attempt 2 of 2")
    expect(page.locator(".document .tok").first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "qualification-second-attempt.png"))
    page.reload()  # begun: a reload goes straight to the item
    page.wait_for_selector("#workspace[data-mode=test][data-ready=true]")
    expect(page.locator(".attempt-notice")).to_have_count(0)
