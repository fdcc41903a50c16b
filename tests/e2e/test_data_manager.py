"""The data manager in the browser: the item page with every round lined up under its
agreement strip; the table filtered, sorted and searched, a view saved, and a bulk action
run on everything a filter matches."""

import os
import uuid
from pathlib import Path

import pytest

from annotate.models import Document, Item, ItemDocument, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from annotate.tokenization import tokenize_texts
from qc.models import ItemView
from qc.services import review_submit
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TEXT = "The pacing drags , but the final act is superb and moving ."
# Where to write screenshots for a person to look at (unset: none are written).
SCREENSHOTS = os.environ.get("RW_SCREENSHOTS")


def shot(page, name: str, *, full_page: bool = True) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=full_page)


def person(project, username, role):
    user = UserFactory(username=username)
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def annotate(project, worker, spans):
    assignment = assignment_next(project=project, worker=worker)
    docid = text_docid(assignment)
    return annotation_submit(
        assignment_id=assignment.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [{"docid": docid, "start_token": start, "end_token": end}] for start, end in spans
        ],
        time_spent_ms=42_000,
    ).annotation


def score(annotation, reviewer, sufficiency, comment=""):
    review_submit(
        annotation_id=annotation.pk,
        reviewer=reviewer,
        comprehensiveness=3,
        set_scores=[
            {"rationale_set": s.pk, "sufficiency": sufficiency, "compactness": 4}
            for s in annotation.rationale_sets.order_by("position")
        ],
        comment=comment,
    )


def test_the_item_page_lines_up_every_round_under_the_agreement_strip(
    browser, live_server, django_capture_on_commit_callbacks
):
    project = make_project(items=1, quota=2, text=TEXT, reviewers_per_annotation=1)
    person(project, "boss", Role.ADMIN)
    annie, bert = person(project, "annie", Role.ANNOTATOR), person(project, "bert", Role.ANNOTATOR)
    rita = person(project, "rita", Role.REVIEWER)
    with django_capture_on_commit_callbacks(execute=True):
        # annie: "final act" and "superb" (two sets), sent back, then "final act is superb".
        first = annotate(project, annie, [(6, 8), (9, 10)])
        score(first, rita, sufficiency=1, comment="Add what links them.")
        annotate(project, annie, [(6, 10)])
        # bert: "pacing drags".
        annotate(project, bert, [(1, 3)])
    item = Item.objects.get(project=project)

    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.set_default_timeout(15_000)
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/data/items/{item.id}/")
    page.wait_for_selector("#item-page[data-ready=true]")
    shot(page, "item-page")

    rows = page.locator(".annotation-table tbody tr")
    assert rows.count() == 3
    assert "Add what links them." in page.inner_text(".annotation-table")
    assert "sent back" in rows.nth(0).inner_text()
    # Each line of the first row holds the same tokens, so they stand one under the other.
    block = page.locator(".aligned-block").first
    lines = block.locator(".aligned-line")
    assert lines.count() == 5  # the strip, annie r1, annie r2, her changes, bert
    texts = {lines.nth(n).locator(".line-text").inner_text() for n in range(lines.count())}
    assert texts == {TEXT}
    lefts = [lines.nth(n).locator(".tok").nth(7).bounding_box()["x"] for n in range(5)]
    assert max(lefts) - min(lefts) < 1
    # The strip counts each annotator's latest round: "final act is superb" by annie,
    # "pacing drags" by bert, so half of them each, and no token by everyone.
    strip = block.locator(".agreement-line .tok")
    assert strip.nth(7).get_attribute("class") == "tok share-2"
    assert strip.nth(0).get_attribute("class") == "tok share-0"
    summary = page.inner_text(".agreement-summary")
    assert "every annotator: 0" in summary and "some (disagreement): 6" in summary
    # The revision: "is" added, nothing removed; set 2 of round 1 told apart from set 1.
    diff = block.locator(".diff-line")
    assert diff.locator(".tok.added").all_inner_texts() == ["is"]
    assert diff.locator(".tok.removed").count() == 0
    first_round = block.locator(f".annotation-line[data-annotation='{first.pk}']")
    assert first_round.locator(".tok.set-1").all_inner_texts() == ["superb"]

    # Earlier rounds can be hidden; the curation link is there for an admin.
    page.uncheck("#show-earlier")
    assert page.locator(".aligned-block").first.locator(".annotation-line").count() == 2
    assert page.get_attribute("#open-curation", "href") == (
        f"/projects/{project.id}/curation/{item.id}/"
    )

    # Mark it gold from here: a confirmation, then the page says so.
    page.click("#mark-gold")
    page.click(".confirm-dialog button[type=submit]")
    page.wait_for_selector(".message.ok")
    page.wait_for_selector("#unmark-gold")
    assert "1 item changed" in page.inner_text(".message")
    assert "gold" in page.inner_text(".item-chips")
    item.refresh_from_db()
    assert item.marked_gold

    # Send it back: the comment is required, then annie's latest round gets a verdict.
    page.click("#send-back")
    page.click(".confirm-dialog button[type=submit]")
    assert "Write a comment first." in page.inner_text(".confirm-dialog")
    page.fill(".confirm-dialog textarea", "Mark the whole clause.")
    page.click(".confirm-dialog button[type=submit]")
    page.wait_for_selector(".message.ok")
    latest = page.locator(".annotation-table tbody tr").nth(1)
    latest.locator(".verdict-revise").wait_for()
    assert "Mark the whole clause." in latest.inner_text()


def test_a_long_document_stays_usable(browser, live_server, django_capture_on_commit_callbacks):
    words = " ".join(f"word{n}" for n in range(5000))
    project = make_project(items=1, quota=3, text=words)
    person(project, "boss", Role.ADMIN)
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(3):
            worker = person(project, f"long{n}", Role.ANNOTATOR)
            annotate(project, worker, [(n * 100, n * 100 + 400), (4000, 4100 + n)])
    item = Item.objects.get(project=project)

    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.set_default_timeout(15_000)
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/data/items/{item.id}/")
    page.wait_for_selector("#item-page[data-ready=true]")

    assert page.locator(".aligned-block").count() == 125
    shot(page, "item-page-long", full_page=False)
    # The whole text's strip at a glance: a click near its end goes to that part.
    overview = page.locator(".agreement-overview")
    box = overview.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.81, box["y"] + box["height"] / 2)
    page.wait_for_function("() => window.scrollY > 2000")
    # No token has a listener of its own: the page's text carries one per document.
    assert page.locator(".agreement-line .tok.share-5").count() == 300
    page.locator(".aligned-block").nth(100).scroll_into_view_if_needed()
    page.locator(".aligned-block").nth(100).locator(".agreement-line .tok").first.hover()
    title = page.locator(".aligned-block").nth(100).locator(".agreement-line .tok").first
    assert "100% of annotators" in title.get_attribute("title")


def add_items(project, rows):
    """Items with texts of their own: (annotation_id, text, label, split) each."""
    texts = [text for _, text, _, _ in rows]
    tokenized = tokenize_texts(texts, language="en")
    for (name, text, label, split), tokens in zip(rows, tokenized, strict=True):
        document = Document.objects.create(
            project=project,
            docid=f"doc-{name}",
            text=text,
            tokens=tokens.token_offsets,
            sentences=tokens.sentence_ranges,
            token_count=len(tokens.token_offsets),
            text_sha256=name,
            tokenizer="test",
        )
        item = Item.objects.create(project=project, annotation_id=name, label=label, split=split)
        ItemDocument.objects.create(item=item, document=document, position=0)


@pytest.fixture
def catalogue(db, django_capture_on_commit_callbacks):
    """Six film reviews; two annotators disagree on one, agree on another."""
    project = make_project(items=0, quota=2)
    add_items(
        project,
        [
            ("r1", "A tender and luminous film about grief .", "pos", "train"),
            ("r2", "The plot collapses under its own weight .", "neg", "train"),
            ("r3", "Wonderful acting , wonderful music , a joy .", "pos", "test"),
            ("r4", "Dull , slow and far too long .", "neg", "test"),
            ("r5", "A luminous debut with a fierce heart .", "pos", "val"),
            ("r6", "Nothing here works , not even the jokes .", "neg", "val"),
        ],
    )
    person(project, "boss", Role.ADMIN)
    ann, ben = person(project, "ann", Role.ANNOTATOR), person(project, "ben", Role.ANNOTATOR)
    with django_capture_on_commit_callbacks(execute=True):
        # Both take r1 then r2: they agree on r1's "tender and luminous", not at all on r2.
        annotate(project, ann, [(1, 4)])
        annotate(project, ben, [(1, 4)])
        annotate(project, ann, [(1, 2)])
        annotate(project, ben, [(4, 6)])
    return project


def open_manager(browser, base, project, query=""):
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.set_default_timeout(15_000)
    login(page, base, "boss")
    page.goto(f"{base}/projects/{project.id}/data/items/{query}")
    page.wait_for_selector("#data-manager[data-ready=true]")
    return page


def shown_items(page) -> list[str]:
    return page.locator(".dm-table tbody .item-link").all_inner_texts()


def wait_for_list(page):
    page.wait_for_selector("#data-manager[data-ready=true]")


def test_filter_sort_and_search_live_in_the_address(browser, live_server, catalogue):
    project = catalogue
    page = open_manager(browser, live_server.url, project)
    shot(page, "data-manager")

    assert shown_items(page) == ["r1", "r2", "r3", "r4", "r5", "r6"]
    assert "6 items" in page.inner_text(".dm-count")

    # A set filter from the column's header: the split.
    page.click("th[data-column=split] .filter-button")
    page.check(".filter-editor input[value=test]")
    page.click(".filter-editor button[type=submit]")
    page.wait_for_function("() => location.search.includes('split=test')")
    wait_for_list(page)
    assert shown_items(page) == ["r3", "r4"]
    assert "Split: test" in page.inner_text(".filter-chips")

    # Removing it, then sorting by agreement (kappa): the most disagreement first, then
    # the other way round.
    page.click(".filter-chip[data-filter=split] .chip-remove")
    page.wait_for_function("() => !location.search.includes('split=')")
    wait_for_list(page)
    page.click("th[data-column=kappa] .sort-button")
    page.wait_for_function("() => location.search.includes('ordering=kappa')")
    wait_for_list(page)
    assert page.get_attribute("th[data-column=kappa]", "aria-sort") == "ascending"
    assert shown_items(page)[:2] == ["r2", "r1"]
    page.click("th[data-column=kappa] .sort-button")
    page.wait_for_function("() => location.search.includes('ordering=-kappa')")
    wait_for_list(page)
    assert page.get_attribute("th[data-column=kappa]", "aria-sort") == "descending"
    rated = [name for name in shown_items(page) if name in ("r1", "r2")]
    assert rated == ["r1", "r2"]

    # Full-text search, then a range filter on kappa: both in the address, both kept.
    page.fill("#dm-search-input", "luminous")
    page.press("#dm-search-input", "Enter")
    page.wait_for_function("() => location.search.includes('search=luminous')")
    wait_for_list(page)
    assert sorted(shown_items(page)) == ["r1", "r5"]
    page.click("th[data-column=kappa] .filter-button")
    page.fill(".filter-editor input[name=kappa_min]", "0.5")
    page.click(".filter-editor button[type=submit]")
    page.wait_for_function("() => location.search.includes('kappa_min=0.5')")
    wait_for_list(page)
    assert shown_items(page) == ["r1"]
    shot(page, "data-manager-filtered")
    # The export form takes the same filter.
    assert page.get_attribute("#dm-export", "href") == (
        f"/projects/{project.id}/results/?item_filter=search%3Dluminous%26kappa_min%3D0.5"
    )

    # The address reproduces the view in a fresh page.
    again = open_manager(
        browser, live_server.url, project, "?" + page.evaluate("location.search.slice(1)")
    )
    assert shown_items(again) == ["r1"]
    assert again.input_value("#dm-search-input") == "luminous"

    # A bad range is refused in the editor, before it reaches the server.
    page.click("th[data-column=f1] .filter-button")
    page.fill(".filter-editor input[name=f1_min]", "0.9")
    page.fill(".filter-editor input[name=f1_max]", "0.1")
    page.click(".filter-editor button[type=submit]")
    assert "lower bound is above" in page.inner_text(".filter-editor .error")


def test_a_saved_view_is_a_tab_that_reproduces_its_filter(browser, live_server, catalogue):
    project = catalogue
    page = open_manager(browser, live_server.url, project, "?label=neg")
    assert shown_items(page) == ["r2", "r4", "r6"]

    page.click("#view-save")
    page.fill(".confirm-dialog input[name=view-name]", "Negatives")
    page.check(".confirm-dialog input[name=view-shared]")
    page.click(".confirm-dialog button[type=submit]")
    page.wait_for_selector(".view-tab[aria-current=page][data-view]")
    assert "Negatives" in page.inner_text(".view-tab[aria-current=page]")
    assert "shared" in page.inner_text(".view-tab[aria-current=page]")

    page.click(".view-tab:not([data-view])")  # All items
    page.wait_for_function("() => location.search === ''")
    wait_for_list(page)
    assert len(shown_items(page)) == 6
    page.click(".view-tab[data-view]")
    page.wait_for_function("() => location.search.includes('label=neg')")
    wait_for_list(page)
    assert shown_items(page) == ["r2", "r4", "r6"]

    # Narrowed, the tab says it changed until the change is saved into the view.
    page.click("th[data-column=split] .filter-button")
    page.check(".filter-editor input[value=test]")
    page.click(".filter-editor button[type=submit]")
    page.wait_for_selector(".tab-modified")
    page.click("#view-update")
    # The status line may still say the view was saved before; the mark going away is
    # what says the update arrived.
    page.wait_for_selector(".tab-modified", state="detached")
    assert ItemView.objects.get().query == "split=test&label=neg"
    assert "saved" in page.inner_text(".message.ok").lower()

    # Renamed, made private, then deleted.
    page.click("#view-rename")
    page.fill(".confirm-dialog input[name=view-name]", "Negative tests")
    page.click(".confirm-dialog button[type=submit]")
    page.wait_for_selector(".view-tab[aria-current=page]:has-text('Negative tests')")
    page.click("#view-share")
    page.wait_for_function(
        "() => !document.querySelector('.view-tab[aria-current=page] .tab-shared')"
    )
    assert not ItemView.objects.get().shared
    page.click("#view-delete")
    page.click(".confirm-dialog button[type=submit]")
    page.wait_for_function("() => !document.querySelector('.view-tab[data-view]')")
    assert not ItemView.objects.exists()


def test_a_bulk_action_on_the_chosen_rows_says_how_many_it_changed(browser, live_server, catalogue):
    project = catalogue
    page = open_manager(browser, live_server.url, project, "?split=train,val&page_size=25")
    assert shown_items(page) == ["r1", "r2", "r5", "r6"]

    page.check("#dm-select-page")
    assert "4 items selected" in page.inner_text(".selection-bar")
    page.locator(".dm-table tbody tr").nth(1).locator("input[type=checkbox]").uncheck()
    assert "3 items selected" in page.inner_text(".selection-bar")
    page.check("#dm-select-page")

    page.select_option("#dm-bulk-action", "mark_gold")
    page.click("#dm-bulk-apply")
    dialog = page.locator(".confirm-dialog")
    assert "4 items" in dialog.inner_text()
    shot(page, "data-manager-bulk-confirm")
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector(".message.ok")
    assert "4 items changed" in page.inner_text(".message")
    assert set(Item.objects.filter(marked_gold=True).values_list("annotation_id", flat=True)) == {
        "r1",
        "r2",
        "r5",
        "r6",
    }


def test_select_all_matching_sends_the_filter_not_the_page(browser, live_server, catalogue):
    project = catalogue
    page = open_manager(browser, live_server.url, project, "?split=train,val")
    # Two rows a page (the menu's smallest is 25), so the filter matches more than is shown.
    page.evaluate(
        "window.rationaleDataManager.state.pageSize = 2; window.rationaleDataManager.load()"
    )
    wait_for_list(page)
    assert shown_items(page) == ["r1", "r2"]

    page.check("#dm-select-page")
    page.click("#dm-select-all")
    assert "All 4 matching items are selected" in page.inner_text(".selection-bar")
    with page.expect_request("**/items/bulk/") as sent:
        page.select_option("#dm-bulk-action", "exclude")
        page.click("#dm-bulk-apply")
        page.locator(".confirm-dialog button[type=submit]").click()
    page.wait_for_selector(".message.ok, .message.error")
    assert "error" not in page.get_attribute(".message", "class"), page.inner_text(".message")

    assert sent.value.post_data_json["filter"] == "split=train%2Cval"
    assert "ids" not in sent.value.post_data_json
    assert Item.objects.filter(excluded=True).count() == 4


def test_the_table_is_used_from_the_keyboard(browser, live_server, catalogue):
    project = catalogue
    page = open_manager(browser, live_server.url, project)

    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "dm-search-input"
    page.locator(".dm-table tbody tr").first.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("x")
    assert "1 item selected" in page.inner_text(".selection-bar")
    page.keyboard.press("Enter")
    page.wait_for_selector("#item-page[data-ready=true]")
    assert page.inner_text("h1") == "Item r2"
    # Back to the list as it was left.
    page.click("#back-to-list")
    page.wait_for_selector("#data-manager[data-ready=true]")
