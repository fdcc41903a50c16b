"""Curation in the browser: a curator works down the queue and curates an item by hand with
the keyboard and the mouse, an admin curates a batch by rule, and a researcher exports the
curated gold. Screenshots of both pages go to test-artifacts/screenshots/."""

import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from exports.models import Export
from qc.models import CuratedAnnotation
from tests.e2e.conftest import login
from tests.qc.curation_helpers import item_of, make_curation_project

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
TEXT = (
    "The film opens slowly and the first hour drags , but the final act is superb : the "
    "acting is moving , the score is haunting and the ending stays with you long after the "
    "credits ."
)
# Tokens: 10 but, 11 the, 12 final, 13 act, 14 is, 15 superb, 18 acting, 19 is, 20 moving,
# 23 score, 25 haunting.
HIGHLIGHTS = {
    # Three annotators who disagree.
    "i0": [[[(12, 16)], [(18, 21)]], [[(15, 16)], [(25, 26)]], [[(10, 16)]]],
    # Unanimous, one set; unanimous, two sets.
    "i1": [[[(15, 16)]], [[(15, 16)]], [[(15, 16)]]],
    "i2": [[[(15, 16)], [(20, 21)]], [[(20, 21)], [(15, 16)]], [[(15, 16)], [(20, 21)]]],
}


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"curation-{name}.png"), full_page=True)


@pytest.fixture
def curation():
    return make_curation_project(HIGHLIGHTS, text=TEXT)


def _gold(item) -> list[list[tuple[int, int]]]:
    curated = CuratedAnnotation.objects.get(item=item)
    return [
        [(span.start_token, span.end_token) for span in curated_set.spans.order_by("position")]
        for curated_set in curated.sets.order_by("position")
    ]


def test_curating_an_item_by_hand(page, live_server, curation):
    project, people, _ = curation
    base = live_server.url
    login(page, base, people["curator"].username)

    # The queue puts the item the annotators disagree on first; Enter opens it.
    page.goto(f"{base}/projects/{project.id}/curation/")
    page.wait_for_selector("#curation-queue[data-ready=true] tr.chosen")
    assert page.inner_text(".queue-table tbody tr:first-child td:first-child") == "i0"
    assert "Left to curate" in page.inner_text(".progress-figures")
    _shot(page, "queue")
    page.keyboard.press("Enter")
    page.wait_for_selector("#curation-item[data-ready=true]")
    assert page.locator(".annotation-entry").count() == 3
    # "?" lists every shortcut; Esc closes the list.
    page.keyboard.press("?")
    page.wait_for_selector("#curation-item-shortcuts[open]")
    assert "Words marked by at least k annotators" in page.inner_text("#curation-item-shortcuts")
    page.keyboard.press("Escape")
    page.wait_for_selector("#curation-item-shortcuts:not([open])", state="attached")
    # "superb" (token 15) was marked by all three annotators: the darkest share.
    assert "share-8" in page.get_attribute(".cm-tok[data-i='15'] ~ .cm-share", "class")

    # Words at least 2 annotators marked (k starts at the majority, 2 of 3): 12-15.
    page.keyboard.press("k")
    # "moving" by mouse into the same set; then a second set with "haunting" by keyboard.
    page.click(".cm-tok[data-doc='0'][data-i='20']")
    page.keyboard.press("n")
    for _ in range(5):  # the cursor is on "moving" (20); five words on is "haunting" (25)
        page.keyboard.press("ArrowRight")
    page.keyboard.press(" ")
    page.select_option(".gold-answer select", "pos")
    _shot(page, "item")
    page.keyboard.press("s")
    page.wait_for_selector("#curation-item[data-version='1'] .message.ok")

    i0 = item_of(project, "i0")
    assert _gold(i0) == [[(12, 16), (20, 21)], [(25, 26)]]
    assert CuratedAnnotation.objects.get(item=i0).label == "pos"
    assert CuratedAnnotation.objects.get(item=i0).curator == people["curator"]

    # Enter saves again and goes to the next item to curate (ties by id: i1).
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/curation/{item_of(project, 'i1').pk}/**")
    page.wait_for_selector("#curation-item[data-ready=true]")
    assert CuratedAnnotation.objects.get(item=i0).version == 2


def test_a_stale_save_is_refused_and_the_saved_version_can_be_loaded(page, live_server, curation):
    project, people, _ = curation
    base = live_server.url
    i0 = item_of(project, "i0")
    login(page, base, people["curator"].username)
    page.goto(f"{base}/projects/{project.id}/curation/{i0.pk}/")
    page.wait_for_selector("#curation-item[data-ready=true]")

    # Meanwhile the admin saves this item.
    from qc.services.curation import curated_annotation_save

    curated_annotation_save(
        project=project,
        item_id=i0.pk,
        curator=people["admin"],
        sets=[[{"docid": "d0", "start_token": 15, "end_token": 16}]],
        version=0,
    )
    page.click(".cm-tok[data-doc='0'][data-i='12']")
    page.keyboard.press("s")
    page.wait_for_selector("#curation-item[data-conflict=true]")
    assert "version 1" in page.inner_text(".message")
    _shot(page, "conflict")
    page.click(".message button")
    page.wait_for_selector("#curation-item[data-ready=true][data-version='1']")

    assert _gold(i0) == [[(15, 16)]]


def test_stale_gold_is_marked_on_the_queue_and_confirmed_on_the_item(page, live_server, curation):
    import uuid

    from annotate.models import Annotation
    from annotate.services import annotation_submit
    from annotate.services.assignments import assignment_revision_create
    from qc.services.curation import curated_annotation_save

    project, people, workers = curation
    i1 = item_of(project, "i1")
    curated_annotation_save(
        project=project,
        item_id=i1.pk,
        curator=people["admin"],
        sets=[[{"docid": "d1", "start_token": 15, "end_token": 16}]],
        version=0,
    )
    # After curation, an annotator revises their annotation of the item.
    sent_back = Annotation.objects.get(assignment__item=i1, assignment__worker=workers[0])
    revision = assignment_revision_create(annotation=sent_back)
    annotation_submit(
        assignment_id=revision.pk,
        worker=workers[0],
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": "d1", "start_token": 14, "end_token": 16}]],
        time_spent_ms=4_000,
    )
    base = live_server.url
    login(page, base, people["curator"].username)

    page.goto(f"{base}/projects/{project.id}/curation/?state=stale")
    page.wait_for_selector("#curation-queue[data-ready=true]")
    rows = page.locator(".queue-table tbody tr")
    assert rows.count() == 1
    assert "stale: an annotation changed after curation" in rows.first.inner_text()
    page.goto(f"{base}/projects/{project.id}/curation/{i1.pk}/")
    page.wait_for_selector("#curation-item[data-ready=true]")
    assert "stale: an annotation changed after curation" in page.inner_text(".curated-by")
    page.click(".curated-by button[data-action=confirm]")
    page.wait_for_selector(".message.ok")

    assert page.locator(".curated-by .curated-stale").count() == 0
    assert CuratedAnnotation.objects.get(item=i1).confirmed_by == people["curator"]
    assert _gold(i1) == [[(15, 16)]]


def test_curating_a_batch_by_rule(page, live_server, curation):
    project, people, _ = curation
    base = live_server.url
    login(page, base, people["admin"].username)
    page.goto(f"{base}/projects/{project.id}/curation/")
    page.wait_for_selector("#curation-queue[data-ready=true]")

    page.select_option("#rule-form select[name=test]", "unanimous")
    page.click("#rule-form button[type=submit]")
    page.wait_for_selector(".rule-result.ok")

    result = page.inner_text(".rule-result")
    assert "2 of 3 items curated" in result and "annotators disagree 1" in result
    assert set(
        CuratedAnnotation.objects.filter(item__project=project).values_list(
            "item__annotation_id", "rule"
        )
    ) == {("i1", "unanimous"), ("i2", "unanimous")}
    assert _gold(item_of(project, "i2")) == [[(15, 16)], [(20, 21)]]
    page.wait_for_selector("#curation-queue[data-ready=true]")
    assert page.locator(".queue-table tbody tr[data-item]").count() == 1
    _shot(page, "queue-after-rule")


def test_exporting_the_curated_gold(page, live_server, curation):
    project, people, _ = curation
    base = live_server.url
    from qc.curation_rules import AutoMergeRule
    from qc.services.curation import curation_auto_merge

    curation_auto_merge(
        project=project,
        curator=people["admin"],
        items=list(project.items.values_list("pk", flat=True)),
        rule=AutoMergeRule(),
    )
    login(page, base, people["researcher"].username)
    page.goto(f"{base}/projects/{project.id}/results/")
    page.select_option("select[name=aggregation]", "curated")
    page.click("#export-form button[type=submit]")
    page.wait_for_selector("#exports tbody tr[data-status=succeeded] a")

    export = Export.objects.get(project=project)
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / export.file_path) as archive:
        names = archive.namelist()
        train = archive.read(next(n for n in names if n.endswith("train.jsonl"))).decode()
        sheet = json.loads(archive.read(next(n for n in names if n.endswith("datasheet.json"))))
    lines = [json.loads(line) for line in train.splitlines()]
    assert sorted(line["annotation_id"] for line in lines) == ["i1", "i2"]
    assert sheet["curation"]["items_curated_by_rule"] == 2
    assert sheet["curation"]["items_left_out_not_curated"] == 1
