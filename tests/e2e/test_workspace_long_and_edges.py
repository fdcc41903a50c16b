"""The workspace at its edges and at length: tokens of every script and shape select as one,
a phone shows the text and the label with the toolbar under the thumb, a change touches only
the tokens it changes, and long documents have keys and a minimap to move by."""

import pytest

from annotate.models import Document, ProjectMembership, Role
from annotate.tokenization import tokenize_text
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

EDGES = (
    "Wow , the family \U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 waved "
    "\U0001f44b\U0001f3fd at the cafe\u0301 and said \u0645\u0631\u062d\u0628\u0627 "
    "\u0628\u0627\u0644\u0639\u0627\u0644\u0645 to \u05e9\u05dc\u05d5\u05dd friends !"
)


def project_with(text, *, language="en", labels=("neg", "pos")):
    project = make_project(items=1, quota=1, text=text, labels=labels)
    if language != "en":
        project.language = language
        project.save(update_fields=["language"])
        tokens = tokenize_text(text, language=language)
        Document.objects.filter(project=project).update(
            tokens=tokens.token_offsets.tolist(),
            sentences=tokens.sentence_ranges.tolist(),
            token_count=len(tokens.token_offsets),
        )
    user = UserFactory(username="ann")
    ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    return project


def open_workspace(page, live_server, project):
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")
    return page.locator(".document .tok")


def marked(page):
    return page.eval_on_selector_all(
        ".document .tok.sel", "(nodes) => nodes.map((n) => Number(n.dataset.i))"
    )


def marked_becomes(page, expected):
    """Waits until the marked tokens are `expected`, then checks them: read at once, a tap
    may not be applied yet (CI saw the state before a tap, under load)."""
    page.wait_for_function(
        "(want) => JSON.stringify([...document.querySelectorAll('.document .tok.sel')]"
        ".map((n) => Number(n.dataset.i))) === JSON.stringify(want)",
        arg=expected,
        timeout=10_000,
    )
    assert marked(page) == expected


def centre(locator):
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def clear(page):
    page.evaluate("window.rationaleWorkspace.clearSet(true)")
    assert marked(page) == []


def test_emoji_marks_and_right_to_left_words_select_as_one_token(page, live_server):
    project = project_with(EDGES)
    tokens = open_workspace(page, live_server, project)
    texts = tokens.evaluate_all("(nodes) => nodes.map((n) => n.textContent)")
    edges = [
        "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",  # a ZWJ family
        "\U0001f44b\U0001f3fd",  # a skin tone
        "cafe\u0301",  # a combining accent
        "\u0645\u0631\u062d\u0628\u0627",  # Arabic
        "\u05e9\u05dc\u05d5\u05dd",  # Hebrew
        ",",  # punctuation
    ]
    for word in edges:
        n = texts.index(word)
        tokens.nth(n).click()
        assert marked(page) == [n], f"a click on {word!r}"
        clear(page)

        page.mouse.move(*centre(tokens.nth(n - 1)))
        page.mouse.down()
        page.mouse.move(*centre(tokens.nth(n)), steps=4)
        page.mouse.up()
        assert marked(page) == [n - 1, n], f"a drag onto {word!r}"
        clear(page)

        tokens.nth(n - 1).click()
        page.keyboard.press("Shift+ArrowRight")
        assert marked(page) == [n - 1, n], f"Shift+Arrow onto {word!r}"
        clear(page)

    # The Arabic pair reads right to left, each word one box.
    first, second = texts.index(edges[3]), texts.index(edges[3]) + 1
    assert tokens.nth(first).bounding_box()["x"] > tokens.nth(second).bounding_box()["x"]
    for n in (first, second, texts.index(edges[4])):
        assert tokens.nth(n).evaluate("(node) => node.getClientRects().length") == 1


def test_chinese_characters_select_by_click_drag_and_shift_arrow(page, live_server):
    project = project_with("我很喜欢这部电影，情节很好。", language="zh")
    tokens = open_workspace(page, live_server, project)
    assert tokens.nth(2).text_content() == "喜"

    tokens.nth(2).click()
    assert marked(page) == [2]
    page.keyboard.press("Shift+ArrowRight")
    assert marked(page) == [2, 3]
    clear(page)

    page.mouse.move(*centre(tokens.nth(4)))
    page.mouse.down()
    for n in (5, 6, 7):
        page.mouse.move(*centre(tokens.nth(n)), steps=3)
    page.mouse.up()
    assert marked(page) == [4, 5, 6, 7]


def phone(browser):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    return context, page


def test_a_word_that_wraps_onto_the_next_line_is_one_token(browser, live_server):
    url = "https://example.org/" + "/".join(f"section{n}" for n in range(12))
    project = project_with(f"Read {url} today .")
    context, page = phone(browser)
    try:
        tokens = open_workspace(page, live_server, project)
        link = tokens.nth(1)
        assert link.text_content() == url
        pieces = "(node) => [...node.getClientRects()].map((r) => [r.x + r.width / 2, r.y + r.height / 2])"
        boxes = link.evaluate(pieces)
        assert len(boxes) >= 2, "the link wraps"
        page.touchscreen.tap(*boxes[-1])  # its last piece, on another line
        marked_becomes(page, [1])
        page.touchscreen.tap(*link.evaluate(pieces)[0])  # its first piece, where it is now
        marked_becomes(page, [])
    finally:
        context.close()


def test_a_phone_shows_the_text_and_the_label_first_and_the_toolbar_at_the_bottom(
    browser, live_server, tmp_path
):
    project = project_with(" ".join(f"word{n}" for n in range(400)))
    context, page = phone(browser)
    try:
        tokens = open_workspace(page, live_server, project)
        toolbar = page.locator(".ws-toolbar").bounding_box()
        assert toolbar["y"] + toolbar["height"] == pytest.approx(844, abs=1), "at the bottom"
        label = page.locator(".answer-card .gold-label").bounding_box()
        first = tokens.nth(0).bounding_box()
        assert label["y"] + label["height"] <= toolbar["y"], "the label on the first screen"
        assert first["y"] + first["height"] <= toolbar["y"], "the text on the first screen"
        submit = page.locator(".ws-toolbar .submit").bounding_box()
        assert submit["y"] >= 844 / 2, "Submit within the thumb's reach"
        page.touchscreen.tap(*centre(tokens.nth(0)))
        assert marked(page) == [0]
        page.screenshot(path=str(tmp_path / "workspace-phone.png"))
    finally:
        context.close()


def test_keys_jump_between_highlights_and_to_the_next_sets(page, live_server):
    project = project_with(" ".join(f"w{n}" for n in range(300)))
    tokens = open_workspace(page, live_server, project)
    ws = "window.rationaleWorkspace"
    page.evaluate(
        f"""() => {{
          const ws = {ws};
          ws.rationale.applyRun("d0", 10, 11, "add");
          ws.rationale.applyRun("d0", 50, 50, "add");
          ws.rationale.applyRun("d0", 200, 202, "add");
          ws.rationale.startNew();
          ws.rationale.applyRun("d0", 120, 121, "add");
          ws.refreshAll();
          ws.moveCursor({{doc: 0, token: 100}});
        }}"""
    )

    def cursor():
        return int(page.locator(".tok.cursor").get_attribute("data-i"))

    for key, expected in (("[", 50), ("[", 10), ("[", 10), ("]", 50), ("]", 120), ("]", 200)):
        page.keyboard.press(key)
        assert cursor() == expected, key
    assert tokens.nth(200).is_visible()

    page.keyboard.press("s")  # from set 2 to set 1: its first highlight
    assert cursor() == 10
    assert page.locator(".legend-set.current").inner_text().startswith("Set 1")
    page.keyboard.press("s")
    assert cursor() == 120

    page.keyboard.press("?")
    dialog = page.locator("#shortcuts-dialog")
    assert "Go to the next or previous highlight" in dialog.inner_text()
    assert "Go to the next set's highlights" in dialog.inner_text()


def test_the_minimap_marks_each_run_follows_changes_and_takes_you_there(page, live_server):
    text = "\n\n".join(" ".join(f"w{p}x{n}" for n in range(60)) for p in range(20))
    project = project_with(text)
    tokens = open_workspace(page, live_server, project)
    ticks = page.locator(".minimap .minimap-mark")
    assert ticks.count() == 0

    tokens.nth(5).click()
    page.keyboard.press("Shift+ArrowRight")
    assert ticks.count() == 1, "one run, one tick"
    page.evaluate(
        """() => {
          window.minimapAdded = 0;
          new MutationObserver((records) => {
            for (const r of records) window.minimapAdded += r.addedNodes.length + r.removedNodes.length;
          }).observe(document.querySelector(".minimap"), {childList: true});
        }"""
    )
    page.evaluate("window.rationaleWorkspace.jumpTo({doc: 0, token: 1100})")
    page.keyboard.press("Space")
    assert ticks.count() == 2
    assert page.evaluate("window.minimapAdded") == 1, "the tick added, nothing redrawn"
    top_first, top_last = (
        float(ticks.nth(n).evaluate("(t) => parseFloat(t.style.top)")) for n in (0, 1)
    )
    assert top_first < 10 < 80 < top_last, "the ticks stand where the runs are"

    page.evaluate("window.scrollTo(0, 0)")
    page.locator('.minimap-mark[data-key="0:1100"]').click()
    assert page.locator(".tok.cursor").get_attribute("data-i") == "1100"
    assert tokens.nth(1100).is_visible()
    box = tokens.nth(1100).bounding_box()
    assert 0 <= box["y"] <= 900

    page.keyboard.press("z")
    assert ticks.count() == 1, "undo takes the tick away"


MUTATIONS_JS = """() => {
  window.touched = new Set();
  new MutationObserver((records) => {
    for (const r of records) {
      const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (node && node.closest(".doc-text")) window.touched.add(node);
    }
  }).observe(document.querySelector(".doc-text"),
             {subtree: true, attributes: true, childList: true, characterData: true});
}"""


def test_each_change_touches_only_the_tokens_it_changes(page, live_server):
    text = "\n\n".join(" ".join(f"w{p}x{n}" for n in range(100)) for p in range(20))
    project = project_with(text)
    tokens = open_workspace(page, live_server, project)
    # Many tokens highlighted already: a change must not repaint them.
    page.mouse.move(*centre(tokens.nth(0)))
    page.mouse.down()
    page.mouse.move(*centre(tokens.nth(60)), steps=6)
    page.mouse.up()
    page.evaluate(MUTATIONS_JS)

    def touched_by(action):
        page.evaluate("window.touched.clear()")
        action()
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))")
        return page.evaluate("window.touched.size")

    assert touched_by(lambda: tokens.nth(80).click()) <= 3  # the token, the old cursor, the next
    assert touched_by(lambda: page.keyboard.press("Shift+ArrowRight")) <= 3
    assert touched_by(lambda: page.keyboard.press("n")) == 0
    assert touched_by(lambda: tokens.nth(90).click()) <= 3
    assert touched_by(lambda: page.keyboard.press("z")) <= 2
    assert touched_by(lambda: page.keyboard.press("y")) <= 2
    page.mouse.move(*centre(tokens.nth(100)))
    page.mouse.down()
    page.mouse.move(*centre(tokens.nth(101)))
    assert touched_by(lambda: page.mouse.move(*centre(tokens.nth(102)))) <= 3, "a drag step"
    page.mouse.up()
    assert page.evaluate("document.querySelectorAll('.document .tok').length") == 2000
