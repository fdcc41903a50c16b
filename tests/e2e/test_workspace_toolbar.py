"""The workspace on a long document: the toolbar (instructions, sets, label, Clear all,
Submit) stays on screen, `?` opens the shortcuts, and sets differ by number and pattern,
not by colour alone. Screenshots go to test-artifacts/screenshots/ for people to look at."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, TaskType
from tests.annotate.workflow_helpers import make_project
from tests.e2e.test_annotator_workspace import annotator
from tests.e2e.test_task_type_workspaces import PASSAGE, open_workspace, project_with

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
SENTENCE = "The long middle act wanders through scene after scene without much purpose . "


@pytest.fixture
def long_document(page, live_server):
    project = make_project(items=1, quota=1, text=SENTENCE * 450)
    annotator(project, "ann")
    open_workspace(page, live_server, project)
    return project


def _shot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"workspace-{name}.png"))


def test_the_toolbar_stays_in_view_at_the_bottom_of_a_7000_px_document(page, long_document):
    assert page.evaluate("document.documentElement.scrollHeight") > 7000
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function("() => window.scrollY > 6000")

    for control in (
        ".ws-toolbar .submit",
        ".ws-toolbar .clear-all",
        ".ws-toolbar .legend-set",
        ".ws-toolbar .instructions summary",
    ):
        expect(page.locator(control)).to_be_in_viewport()
    last = page.locator(".document .tok").last
    last.click()
    _shot(page, "long-document-bottom")
    page.click(".ws-toolbar .submit")
    page.wait_for_selector("#workspace[data-last-submitted]")

    annotation = Annotation.objects.get()
    tokens = long_document.items.get().documents.get().token_count
    assert [(s.start_token, s.end_token) for s in annotation.rationale_sets.get().spans.all()] == [
        (tokens - 1, tokens)
    ]


def test_the_instructions_toggle_from_the_toolbar_wherever_the_reader_is(page, long_document):
    page.evaluate("window.scrollTo(0, 5000)")
    summary = page.locator(".ws-toolbar .instructions summary")
    text = page.locator(".ws-toolbar .instruction-text")
    expect(text).to_be_visible()
    summary.click()
    expect(text).to_be_hidden()
    summary.click()
    expect(text).to_be_in_viewport()


def test_question_mark_opens_the_shortcuts_dialog_which_keeps_focus_and_closes_on_escape(
    page, long_document
):
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    assert page.evaluate("document.activeElement.closest('dialog') !== null")
    _shot(page, "shortcuts-dialog")
    for _ in range(4):  # Tab goes round the dialog's own controls, never out of it
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.closest('dialog') !== null")
    page.keyboard.press("Enter")  # on Close: the dialog's button, not the workspace's submit
    expect(dialog).to_be_hidden()
    assert not page.locator("#workspace[data-last-submitted]").count()

    page.keyboard.press("?")
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.click(".ws-toolbar .help-button")
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")


def test_question_mark_typed_into_an_answer_is_text_not_a_shortcut(page, live_server, tmp_path):
    project = project_with(
        tmp_path,
        TaskType.READING_COMPREHENSION,
        [{"id": "q1", "question": "How long is the Nile?", "passage": PASSAGE, "answer": ""}],
        labels_from_annotators=True,
    )
    open_workspace(page, live_server, project)
    answer = page.locator(".ws-toolbar .answer-picker input[name=answer]")
    answer.click()
    answer.type("6,650 km?")

    expect(answer).to_have_value("6,650 km?")
    expect(page.get_by_role("dialog")).to_have_count(0)


def test_sets_differ_by_number_and_underline_and_the_legend_matches(page, long_document):
    tokens = page.locator(".document .tok")
    tokens.nth(1).click()
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("n")
    tokens.nth(5).click()
    page.keyboard.press("Shift+ArrowRight")

    first, second = tokens.nth(1), tokens.nth(5)
    assert first.get_attribute("data-set-number") == "1"
    assert second.get_attribute("data-set-number") == "2"
    assert "run-start" in first.get_attribute("class")
    assert "run-start" not in tokens.nth(2).get_attribute("class")  # one number per run

    def look(locator):
        return locator.evaluate(
            """(node) => {
                const style = getComputedStyle(node);
                const badge = getComputedStyle(node, "::before").content;
                return [style.textDecorationStyle, style.backgroundColor, badge];
            }"""
        )

    def number_over(locator):
        # A run's number is drawn in the text's layer of numbers, anchored at its first
        # token's corner (run_marks.js), not inside the token.
        return locator.evaluate(
            """(node) => {
                const box = node.getClientRects()[0];
                const badge = [...document.querySelectorAll(".run-badge")].find((b) => {
                    const r = b.getBoundingClientRect();
                    return Math.abs(r.left - box.left) < 1 && Math.abs(r.top - box.top) < 1;
                });
                return badge ? getComputedStyle(badge, "::before").content : "none";
            }"""
        )

    token_looks = [[*look(n)[:2], number_over(n)] for n in (first, second)]
    assert token_looks[0][0] != token_looks[1][0], "the sets' underlines differ"
    assert [t[2] for t in token_looks] == ['"1"', '"2"'], "each run shows its set's number"
    chips = page.locator(".ws-toolbar .legend-set")
    chip_looks = [look(chips.nth(0)), look(chips.nth(1))]
    assert [c[:2] for c in chip_looks] == [t[:2] for t in token_looks], "legend as the text"
    assert [c[2] for c in chip_looks] == ['"1"', '"2"']
    assert chips.all_inner_texts() == ["Set 1: 2 tokens", "Set 2: 2 tokens"]
    page.evaluate("window.scrollTo(0, 0)")
    _shot(page, "two-sets")


def test_submit_and_clear_all_do_not_look_alike_and_clear_all_asks_first(page, long_document):
    submit = page.locator(".ws-toolbar .submit")
    clear = page.locator(".ws-toolbar .clear-all")

    def look(locator):
        return locator.evaluate(
            "(n) => { const s = getComputedStyle(n);"
            " return [s.backgroundColor, s.color, s.borderStyle, s.fontWeight]; }"
        )

    submit_look, clear_look = look(submit), look(clear)
    assert submit_look[0] != clear_look[0] and submit_look[1] != clear_look[1]
    assert clear_look[2] == "dashed" and submit_look[2] == "solid"

    page.locator(".document .tok").nth(3).click()
    page.once("dialog", lambda dialog: dialog.dismiss())
    clear.click()
    expect(page.locator(".legend-set")).to_have_text(["Set 1: 1 token"])
    page.once("dialog", lambda dialog: dialog.accept())
    clear.click()
    expect(page.locator(".legend-set")).to_have_text(["Set 1: 0 tokens"])
    assert json.loads(
        page.evaluate("JSON.stringify(window.rationaleWorkspace.serialize().sets)")
    ) == [[]]
