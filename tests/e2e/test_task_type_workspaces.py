"""The workspace shaped by the task type, in the browser: a pair side by side (stacked on a
narrow screen), a question above its passage with the gold answer marked, options to
choose from when the labels come from the annotators, and Chinese per character.

`test_screenshots` also saves the pair, reading-comprehension and multiple-choice
workspaces at desktop and phone widths to test-artifacts/screenshots/annotator/ (ignored by
git), beside the walk-through's pages, for people to look at."""

import json
from pathlib import Path

import pytest

from annotate.models import Annotation, Document, ProjectMembership, Role, TaskType
from annotate.services import dataset_import, variant_create
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSAGE = (
    "The Nile is a major north-flowing river in northeastern Africa. It flows into the "
    "Mediterranean Sea and is about 6,650 km long."
)


def project_with(tmp_path, task_type, rows, *, username="ann", **fields):
    project = ProjectFactory(task_type=task_type, labels=fields.pop("labels", []), **fields)
    path = tmp_path / f"{task_type}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    dataset_import(project=project, path=path)
    variant_create(
        project=project,
        name="supports",
        text="Highlight the words that support the answer.",
    )
    user = UserFactory(username=username)
    ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    return project


def open_workspace(page, live_server, project, username="ann"):
    login(page, live_server.url, username)
    page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
    page.wait_for_selector("#workspace[data-ready=true]")


def stored_spans():
    annotation = Annotation.objects.get()
    return [
        (span.document.docid, span.start_token, span.end_token)
        for rset in annotation.rationale_sets.order_by("position")
        for span in rset.spans.order_by("position")
    ]


PAIR = {
    "id": "p1",
    "text_a": "A man is playing a guitar on stage.",
    "text_b": "Someone is performing music.",
    "label": "entailment",
}


def test_pair_texts_are_named_side_by_side_and_a_span_in_text_2_keeps_its_docid(
    page, live_server, tmp_path
):
    project = project_with(
        tmp_path,
        TaskType.SENTENCE_PAIR,
        [PAIR],
        labels=["entailment", "neutral", "contradiction"],
        text_names=["Premise", "Hypothesis"],
    )
    open_workspace(page, live_server, project)

    panels = page.locator(".documents.pair .doc-panel")
    assert panels.locator(".panel-title").all_inner_texts() == ["PREMISE", "HYPOTHESIS"]
    assert page.get_by_role("region", name="Hypothesis").count() == 1
    first, second = panels.nth(0).bounding_box(), panels.nth(1).bounding_box()
    assert second["x"] > first["x"] + first["width"] - 1, "side by side"
    assert abs(second["y"] - first["y"]) < 2
    assert "entailment" in page.inner_text(".answer-card")

    hypothesis = panels.nth(1).locator(".tok")
    assert hypothesis.nth(2).inner_text() == "performing"
    hypothesis.nth(2).hover()
    page.mouse.down()
    hypothesis.nth(3).hover()
    page.mouse.up()
    assert "2 highlighted" in panels.nth(1).inner_text()
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert stored_spans() == [("p1:b", 2, 4)]


def test_keyboard_crosses_from_text_1_into_text_2(page, live_server, tmp_path):
    row = {"id": "k", "text_a": "One two", "text_b": "Three four", "label": "x"}
    project = project_with(tmp_path, TaskType.SENTENCE_PAIR, [row])
    open_workspace(page, live_server, project)

    assert page.locator(".doc-panel .panel-title").all_inner_texts() == ["TEXT 1", "TEXT 2"]
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert stored_spans() == [("k:b", 0, 1)]


def test_pair_texts_stack_on_a_narrow_screen(browser, live_server, tmp_path):
    project = project_with(tmp_path, TaskType.SENTENCE_PAIR, [PAIR])
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        open_workspace(page, live_server, project)
        panels = page.locator(".documents.pair .doc-panel")
        first, second = panels.nth(0).bounding_box(), panels.nth(1).bounding_box()

        assert second["y"] >= first["y"] + first["height"] - 1, "text 2 below text 1"
        assert abs(second["x"] - first["x"]) < 2
        assert first["x"] + first["width"] <= 390, "no sideways scrolling"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_reading_comprehension_shows_the_question_above_the_passage_and_marks_the_answer(
    page, live_server, tmp_path
):
    row = {
        "id": "r1",
        "question": "Into which sea does the Nile flow?",
        "passage": PASSAGE,
        "answer": "Mediterranean Sea",
    }
    project = project_with(tmp_path, TaskType.READING_COMPREHENSION, [row])
    open_workspace(page, live_server, project)

    question = page.locator(".question-panel")
    passage = page.locator(".doc-panel")
    assert question.bounding_box()["y"] + question.bounding_box()["height"] <= (
        passage.bounding_box()["y"] + 1
    ), "question above passage"
    assert "Into which sea does the Nile flow?" in question.inner_text()
    assert question.locator(".tok").count() == 0, "question rationales are off here"
    mark = passage.locator("mark.gold-answer")
    assert mark.count() == 1
    assert mark.locator(".tok").all_inner_texts() == ["Mediterranean", "Sea"]
    assert mark.get_attribute("title") == "Gold answer"
    assert "Gold answer:" in mark.locator(".sr-only").first.text_content()
    assert page.locator(".no-answer-badge").count() == 0
    # The mark looks unlike a highlight: a frame, no fill.
    style = mark.evaluate(
        "m => [getComputedStyle(m).borderTopStyle, getComputedStyle(m).backgroundColor]"
    )
    assert style == ["solid", "rgba(0, 0, 0, 0)"]

    mark.locator(".tok").nth(0).click()
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-last-submitted]")
    at = Document.objects.get(docid="r1:passage").token_texts().index("Mediterranean")
    assert stored_spans() == [("r1:passage", at, at + 1)]


def test_reading_comprehension_without_an_answer_shows_a_badge(page, live_server, tmp_path):
    row = {"id": "r2", "question": "Who named the Nile?", "passage": PASSAGE, "answer": None}
    project = project_with(tmp_path, TaskType.READING_COMPREHENSION, [row])
    open_workspace(page, live_server, project)

    badge = page.locator(".doc-panel .no-answer-badge")
    assert badge.is_visible()
    assert "No answer" in badge.inner_text()
    assert page.locator("mark.gold-answer").count() == 0
    assert "does not hold one" in page.inner_text(".answer-card")


def test_question_tokens_take_rationales_when_the_project_allows(page, live_server, tmp_path):
    row = {"id": "r3", "question": "How long is the Nile?", "passage": PASSAGE, "answer": None}
    project = project_with(
        tmp_path, TaskType.READING_COMPREHENSION, [row], question_rationales=True
    )
    open_workspace(page, live_server, project)

    question_tokens = page.locator(".question-panel .tok")
    assert question_tokens.nth(1).inner_text() == "long"
    question_tokens.nth(1).click()
    page.locator(".doc-panel .tok").nth(1).click()
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert sorted(stored_spans()) == [("r3:passage", 1, 2), ("r3:question", 1, 2)]


def test_multiple_choice_with_labels_from_annotators_requires_an_option(
    page, live_server, tmp_path
):
    row = {
        "id": "m1",
        "question": "Where would you keep milk cold?",
        "options": ["oven", "fridge", "<b>drawer</b>"],
        "label": "fridge",
    }
    project = project_with(tmp_path, TaskType.MULTIPLE_CHOICE, [row], labels_from_annotators=True)
    open_workspace(page, live_server, project)

    options = page.locator(".options .option")
    assert options.locator(".option-text").all_inner_texts() == ["oven", "fridge", "<b>drawer</b>"]
    assert page.locator(".option.gold, .correct-tag").count() == 0, "the gold stays hidden"
    assert "Question:" not in page.inner_text(".ws-main")
    page.locator(".document .tok").nth(4).click()
    page.keyboard.press("Enter")
    assert "Choose an option" in page.inner_text(".message")
    assert Annotation.objects.count() == 0

    options.nth(1).click()
    page.keyboard.press("Enter")  # from the chosen option
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert Annotation.objects.get().label == "fridge"


def test_multiple_choice_marks_the_gold_option(page, live_server, tmp_path):
    row = {"question": "Cold?", "options": ["oven", "fridge"], "label": "fridge"}
    project = project_with(tmp_path, TaskType.MULTIPLE_CHOICE, [row])
    open_workspace(page, live_server, project)

    gold = page.locator(".option.gold")
    assert gold.locator(".option-text").inner_text() == "fridge"
    assert gold.get_attribute("aria-label") == "fridge (the correct answer)"


def test_a_refused_label_shows_the_servers_words(page, live_server, tmp_path):
    project = project_with(
        tmp_path,
        TaskType.CLASSIFICATION,
        [{"id": "s", "text": "Fine film .", "label": "pos"}],
        labels=["neg", "pos"],
        labels_from_annotators=True,
    )
    open_workspace(page, live_server, project)
    assert page.locator(".gold-label").count() == 0
    project.labels = ["good", "bad"]  # changed under the annotator's feet
    project.save()

    page.get_by_label("pos", exact=True).check()
    page.locator(".document .tok").nth(0).click()
    page.keyboard.press("Enter")

    page.wait_for_function("() => document.querySelector('.message').textContent.includes('label')")
    assert "is not one of the project's labels" in page.inner_text(".message")
    assert Annotation.objects.count() == 0


def test_chinese_shows_no_spaces_and_selects_per_character(page, live_server, tmp_path):
    text = "我喜欢这部电影。结局很差！"
    project = project_with(
        tmp_path,
        TaskType.CLASSIFICATION,
        [{"id": "z", "text": text, "label": "pos"}],
        language="zh",
    )
    open_workspace(page, live_server, project)

    document = page.locator(".doc-panel .document")
    assert document.inner_text() == text
    assert document.get_attribute("lang") == "zh"
    tokens = document.locator(".tok")
    assert tokens.all_inner_texts() == list(text)
    tokens.nth(1).hover()
    page.mouse.down()
    tokens.nth(2).hover()
    page.mouse.up()
    page.keyboard.press("n")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_selector("#workspace[data-last-submitted]")

    assert stored_spans() == [("z", 1, 3), ("z", 3, 4)]


# ------------------------------------------------------------------ screenshots


SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots" / "annotator"


def test_screenshots(browser, live_server, tmp_path):
    out = SHOTS
    out.mkdir(parents=True, exist_ok=True)
    pair = project_with(
        tmp_path,
        TaskType.SENTENCE_PAIR,
        [
            {
                "id": "snli-1",
                "text_a": "A man in a blue shirt is playing an acoustic guitar on a small stage "
                "while a crowd watches.",
                "text_b": "Someone is performing music for an audience.",
                "label": "entailment",
            }
        ],
        username="pair",
        name="SNLI sample: premise and hypothesis",
        labels=["entailment", "neutral", "contradiction"],
        text_names=["Premise", "Hypothesis"],
    )
    rc = project_with(
        tmp_path,
        TaskType.READING_COMPREHENSION,
        [
            {
                "id": "squad-7",
                "question": "Into which sea does the Nile flow?",
                "passage": PASSAGE + " Its waters have supported agriculture along its banks "
                "since ancient times.",
                "answer": "Mediterranean Sea",
            }
        ],
        username="rc",
        name="SQuAD-style reading comprehension",
        question_rationales=True,
    )
    rc_none = project_with(
        tmp_path,
        TaskType.READING_COMPREHENSION,
        [{"id": "squad-9", "question": "Who named the Nile?", "passage": PASSAGE, "answer": ""}],
        username="rcnone",
        name="SQuAD 2.0: unanswerable questions",
    )
    mc = project_with(
        tmp_path,
        TaskType.MULTIPLE_CHOICE,
        [
            {
                "id": "cose-3",
                "question": "Where would you keep milk so that it stays cold overnight?",
                "options": ["oven", "refrigerator", "cupboard", "windowsill", "backpack"],
                "label": "refrigerator",
            }
        ],
        username="mc",
        name="CoS-E-style commonsense questions",
    )
    mc_pick = project_with(
        tmp_path,
        TaskType.MULTIPLE_CHOICE,
        [
            {
                "id": "cose-4",
                "question": "What do people use to write on a blackboard?",
                "options": ["pen", "chalk", "brush"],
                "label": "chalk",
            }
        ],
        username="mcpick",
        name="Commonsense: annotators choose",
        labels_from_annotators=True,
    )
    pair_pick = project_with(
        tmp_path,
        TaskType.SENTENCE_PAIR,
        [{**PAIR, "id": "snli-2"}],
        username="pairpick",
        name="NLI: annotators label",
        labels=["entailment", "neutral", "contradiction"],
        text_names=["Premise", "Hypothesis"],
        labels_from_annotators=True,
    )
    rc_pick = project_with(
        tmp_path,
        TaskType.READING_COMPREHENSION,
        [{"id": "squad-8", "question": "How long is the Nile?", "passage": PASSAGE, "answer": ""}],
        username="rcpick",
        name="Reading comprehension: annotators answer",
        labels_from_annotators=True,
    )
    shots = [
        ("pair", pair, "pair", [(".doc-panel >> nth=1 >> .tok >> nth=2", 2)]),
        ("pair-annotator-picks", pair_pick, "pairpick", []),
        ("reading-comprehension-annotator-answers", rc_pick, "rcpick", []),
        ("reading-comprehension", rc, "rc", [(".doc-panel .tok >> nth=4", 2)]),
        ("reading-comprehension-no-answer", rc_none, "rcnone", []),
        ("multiple-choice", mc, "mc", [(".document .tok >> nth=5", 2)]),
        ("multiple-choice-annotator-picks", mc_pick, "mcpick", []),
    ]
    # Each annotator signs in once: the narrow pass opens a fresh context (no draft kept in
    # the browser from the desktop pass) with the session the desktop pass signed in to.
    signed_in: dict[str, dict] = {}
    for width, height, suffix in ((1280, 900, "desktop"), (390, 844, "narrow")):
        for name, project, username, drags in shots:
            context = browser.new_context(
                viewport={"width": width, "height": height}, storage_state=signed_in.get(username)
            )
            page = context.new_page()
            if username not in signed_in:
                login(page, live_server.url, username)
                signed_in[username] = context.storage_state()
            page.goto(f"{live_server.url}/projects/{project.id}/annotate/")
            page.wait_for_selector("#workspace[data-ready=true]")
            page.locator(".instructions summary").click()  # collapsed, as after a first read
            for selector, count in drags:
                start = page.locator(selector)
                start.click()
                for _ in range(count - 1):
                    page.keyboard.press("Shift+ArrowRight")
            page.screenshot(path=str(out / f"task-type-{name}-{suffix}.png"), full_page=True)
            context.close()
    written = {p.name for p in out.glob("task-type-*.png") if p.stat().st_size > 0}
    assert written >= {
        f"task-type-{name}-{suffix}.png" for name, *_ in shots for suffix in ("desktop", "narrow")
    }


def test_an_admin_names_the_pair_texts_on_the_project_page(page, live_server, tmp_path):
    project = project_with(tmp_path, TaskType.SENTENCE_PAIR, [PAIR])
    admin = UserFactory(username="boss")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/settings/")

    page.fill("input[name=text_name_1]", "Claim")
    page.click("#policy-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('.admin-status').textContent !== ''")
    # One name alone is refused, and the refusal sits under the first name's field.
    assert page.get_attribute("input[name=text_name_1]", "aria-invalid") == "true"
    assert page.locator("#policy-form .field-error").count() == 1

    page.fill("input[name=text_name_2]", "Evidence")
    page.check("input[name=labels_from_annotators]")
    page.click("#policy-form button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('.admin-status').textContent === 'Policies saved.'"
    )

    project.refresh_from_db()
    assert project.text_names == ["Claim", "Evidence"]
    assert project.labels_from_annotators is True
