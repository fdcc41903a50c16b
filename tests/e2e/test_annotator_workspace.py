"""The annotator's day in the browser: select, second set by keyboard, reload, submit."""

import time

import pytest

from annotate.models import Annotation, ProjectMembership, Role
from annotate.services import assignment_next
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def annotator(project, username):
    user = UserFactory(username=username)
    ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    return user


def test_annotator_flow_stores_exact_spans(page, live_server):
    project = make_project(
        items=1, quota=1, text="The pacing drags , but the final act is superb ."
    )
    annotator(project, "ann")
    login(page, live_server.url, "ann")

    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    assert "Highlight words (plain)." in page.inner_text(".instructions")
    tokens = page.locator(".document .tok")
    assert tokens.nth(2).inner_text() == "drags"

    tokens.nth(1).hover()
    page.mouse.down()
    tokens.nth(3).hover()
    page.mouse.up()
    page.keyboard.press("n")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    page.wait_for_selector("#workspace[data-draft-saved=true]")

    page.reload()
    page.wait_for_selector("#workspace[data-ready=true]")
    assert page.locator(".legend-set").all_inner_texts() == ["Set 1: 3 tokens", "Set 2: 2 tokens"]
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-last-submitted]")

    annotation = Annotation.objects.get()
    stored = [
        [
            (span.document.docid, span.start_token, span.end_token)
            for span in rset.spans.order_by("position")
        ]
        for rset in annotation.rationale_sets.order_by("position")
    ]
    assert stored == [[("d0", 1, 4)], [("d0", 5, 7)]]
    assert annotation.time_spent_ms > 0


def test_an_empty_submit_is_refused_in_the_page(page, live_server):
    project = make_project(items=1, quota=1)
    annotator(project, "ann")
    login(page, live_server.url, "ann")

    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    page.keyboard.press("Enter")

    assert "Highlight at least 1 word" in page.inner_text(".message")
    assert Annotation.objects.count() == 0


def test_a_second_annotator_cannot_open_the_first_ones_assignment(page, live_server):
    project = make_project(items=2, quota=2)
    first = annotator(project, "first")
    annotator(project, "second")
    lease = assignment_next(project=project, worker=first)
    login(page, live_server.url, "second")

    response = page.goto(f"{live_server.url}/assignments/{lease.pk}/")

    assert response.status == 404
    assert "assignment not found" in page.content()


def test_imported_markup_is_shown_as_text(page, live_server):
    hostile = "Nice <script>window.pwned = 1</script> and <b>bold</b> <img src=x onerror=window.pwned=2> ."
    project = make_project(items=1, quota=1, text=hostile)
    annotator(project, "ann")
    login(page, live_server.url, "ann")

    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")

    assert page.evaluate("window.pwned") is None
    assert page.locator(".document b, .document img, .document script").count() == 0
    assert "<script>window.pwned = 1</script>" in page.inner_text(".document")


def test_admin_adds_the_study_presets_and_sees_them(page, live_server):
    project = make_project(items=1, variants=())
    admin = UserFactory(username="boss")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    login(page, live_server.url, "boss")

    page.goto(f"{live_server.url}/projects/{project.id}/instructions/")
    page.click("#install-presets")
    page.wait_for_function("() => document.querySelectorAll('#variants tbody tr').length === 7")

    assert "Added 7 preset variant(s)." in page.inner_text(".admin-status")
    # Once all seven are variants, adding them is no longer the page's first action.
    button = page.locator("#install-presets")
    assert button.is_disabled()
    assert "secondary" in button.get_attribute("class")
    assert button.inner_text() == "All seven study presets are variants"


def test_undo_steps_back_the_highlights_not_the_time_spent(page, live_server):
    project = make_project(items=1, quota=1)
    annotator(project, "ann")
    login(page, live_server.url, "ann")
    started = time.monotonic()
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    tokens = page.locator(".document .tok")
    for n in range(4):
        tokens.nth(n).click()
    # Each undo, while the time spent was counted as restored state, added the time since
    # the page was shown once more: four undos after 1.5 s overstated it by some 6 s.
    page.wait_for_timeout(1500)
    for _ in range(4):
        page.keyboard.press("z")
    assert page.locator(".legend-set").all_inner_texts() == ["Set 1: 0 tokens"]
    tokens.nth(0).click()
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-last-submitted]")
    wall_ms = (time.monotonic() - started) * 1000

    annotation = Annotation.objects.get()
    assert 1500 <= annotation.time_spent_ms <= wall_ms


def test_admin_reads_and_edits_a_guide_variants_examples(page, live_server):
    """The guide presets' examples are shown under their text, one line each with the
    highlighted tokens in brackets, and an edit saves them as the variant's examples."""
    from annotate.models import InstructionVariant

    project = make_project(items=1, variants=())
    admin = UserFactory(username="boss")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/instructions/")
    page.click("#install-presets")
    page.wait_for_function("() => document.querySelectorAll('#variants tbody tr').length === 7")

    variant = InstructionVariant.objects.get(project=project, name="guide-minimal-words")
    row = page.locator("#variants tbody tr", has_text="guide-minimal-words")
    lines = row.locator("input[name=example]")
    assert lines.count() == len(variant.examples) > 0
    first = variant.examples[0]
    shown = lines.first.input_value().split(" ")
    assert [token.strip("[]") for token in shown] == first["tokens"]
    assert [i for i, token in enumerate(shown) if token.startswith("[")] == first["highlighted"]

    lines.first.fill("A [dull] and [lifeless] film .")
    row.locator("input[name=example-label]").first.fill("negative")
    row.locator("button", has_text="Add an example").click()
    lines.last.fill("[Superb] acting")
    row.locator("button", has_text="Save text and examples").click()
    page.wait_for_function(
        "() => document.querySelector('.admin-status').textContent.includes('Saved')"
    )

    saved = InstructionVariant.objects.filter(project=project, name="guide-minimal-words").latest(
        "version"
    )
    assert saved.examples[0]["tokens"] == ["A", "dull", "and", "lifeless", "film", "."]
    assert saved.examples[0]["highlighted"] == [1, 3]
    assert saved.examples[0]["label"] == "negative"
    assert saved.examples[-1] == {"tokens": ["Superb", "acting"], "highlighted": [0]}


def test_redo_brings_back_what_undo_took_by_key_and_by_button(page, live_server):
    project = make_project(items=1, quota=1)
    annotator(project, "ann")
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    tokens = page.locator(".document .tok")
    for n in range(3):
        tokens.nth(n).click()
    legend = page.locator(".legend-set")

    page.keyboard.press("z")
    page.keyboard.press("z")
    assert legend.all_inner_texts() == ["Set 1: 1 token"]
    page.keyboard.press("y")
    assert legend.all_inner_texts() == ["Set 1: 2 tokens"]
    page.keyboard.press("Control+Shift+Z")
    assert legend.all_inner_texts() == ["Set 1: 3 tokens"]
    page.keyboard.press("z")
    page.get_by_role("button", name="Redo (y)").click()
    assert legend.all_inner_texts() == ["Set 1: 3 tokens"]
    # A new change after an undo starts a new future: nothing is left to redo.
    page.keyboard.press("z")
    tokens.nth(5).click()
    page.keyboard.press("y")
    assert legend.all_inner_texts() == ["Set 1: 3 tokens"]


def test_a_change_made_just_before_leaving_reaches_the_server(page, live_server):
    """The autosave waits 600 ms after a change; leaving sooner flushes the draft in a
    request that outlives the page (pagehide), so the server has it, not only the
    browser's own copy."""
    from annotate.models import Assignment

    project = make_project(items=1, quota=1)
    worker = annotator(project, "ann")
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")

    page.locator(".document .tok").nth(2).click()
    page.goto(f"{live_server.url}/")  # at once, before the autosave's 600 ms

    assignment = Assignment.objects.get(worker=worker)
    for _ in range(50):  # the keepalive request may land just after the next page loads
        assignment.refresh_from_db()
        if assignment.draft:
            break
        time.sleep(0.1)
    assert assignment.draft is not None
    assert assignment.draft["sets"][0][0][1] == [2]


def test_nothing_moves_while_annotating(page, live_server):
    """Chromium's layout-shift entries over a scripted session (clicks, a drag that starts
    a run, a second set, the autosave's status line) sum to 0: a badge or a message takes
    room already reserved, so no word moves under the pointer."""
    project = make_project(
        items=1,
        quota=1,
        text=" ".join(f"word{n} ," if n % 7 == 6 else f"word{n}" for n in range(80)),
    )
    annotator(project, "ann")
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    page.evaluate(
        """() => {
          window.layoutShifts = [];
          new PerformanceObserver((list) => {
            for (const entry of list.getEntries()) window.layoutShifts.push(entry.value);
          }).observe({ type: "layout-shift" });
        }"""
    )
    tokens = page.locator(".document .tok")

    tokens.nth(3).click()
    first, last = tokens.nth(10).bounding_box(), tokens.nth(14).bounding_box()
    page.mouse.move(first["x"] + 2, first["y"] + first["height"] / 2)
    page.mouse.down()
    page.mouse.move(last["x"] + 2, last["y"] + last["height"] / 2, steps=8)
    page.mouse.up()
    page.keyboard.press("n")
    tokens.nth(30).click()
    page.wait_for_function(
        "() => document.querySelector('#workspace .message').textContent.includes('Draft saved')"
    )
    page.wait_for_timeout(300)

    assert page.evaluate("window.layoutShifts.reduce((sum, value) => sum + value, 0)") == 0


def test_a_drag_holds_exactly_the_run_from_its_start_to_the_pointer(page, live_server):
    """Out to token 6 and back to 3: tokens 1 to 3, not 1 to 6 (the tokens come back to
    what they were, here an earlier highlight on 5 is kept)."""
    project = make_project(items=1, quota=1, text=" ".join(f"w{n}" for n in range(12)))
    annotator(project, "ann")
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    tokens = page.locator(".document .tok")
    tokens.nth(5).click()

    def centre(n):
        box = tokens.nth(n).bounding_box()
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    page.mouse.move(*centre(1))
    page.mouse.down()
    for n in (2, 3, 4, 5, 6, 5, 4, 3):
        page.mouse.move(*centre(n), steps=3)
    page.mouse.up()

    marked = [n for n in range(12) if "sel" in tokens.nth(n).get_attribute("class").split()]
    assert marked == [1, 2, 3, 5]


def _touch_page(browser, live_server, project):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    return page, context.new_cdp_session(page)


def _centre(locator):
    box = locator.bounding_box()
    return {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}


def _marked(tokens, count):
    return [n for n in range(count) if "sel" in tokens.nth(n).get_attribute("class").split()]


def test_a_finger_taps_a_token_and_a_long_press_drags_a_run(browser, live_server):
    """Touch selects as a phone's text selection does: a tap toggles a token; holding a
    token starts a run that the finger then drags, out and back, without scrolling."""
    project = make_project(items=1, quota=1, text=" ".join(f"w{n}" for n in range(12)))
    annotator(project, "ann")
    page, touch = _touch_page(browser, live_server, project)
    tokens = page.locator(".document .tok")

    page.touchscreen.tap(**_centre(tokens.nth(0)))
    assert _marked(tokens, 12) == [0]

    start = _centre(tokens.nth(3))
    touch.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [start]})
    page.wait_for_timeout(600)  # longer than the long press
    for n in (4, 5, 6, 5):
        touch.send(
            "Input.dispatchTouchEvent",
            {"type": "touchMove", "touchPoints": [_centre(tokens.nth(n))]},
        )
    touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

    assert _marked(tokens, 12) == [0, 3, 4, 5]
    assert page.evaluate("window.scrollY") == 0


def test_a_finger_that_moves_at_once_scrolls_and_selects_nothing(browser, live_server):
    project = make_project(items=1, quota=1, text=" ".join(f"w{n}" for n in range(12)))
    annotator(project, "ann")
    page, touch = _touch_page(browser, live_server, project)
    tokens = page.locator(".document .tok")

    start = _centre(tokens.nth(3))
    touch.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [start]})
    for dy in (15, 40, 80):  # a swipe: it moves well before the long press
        touch.send(
            "Input.dispatchTouchEvent",
            {"type": "touchMove", "touchPoints": [{"x": start["x"], "y": start["y"] - dy}]},
        )
    touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    page.wait_for_timeout(600)

    assert _marked(tokens, 12) == []
