"""The perturbation step in the browser: an author writes two perturbations with the live
diff, a checker edits and accepts one and rejects the other, and the accepted one is
served to an annotator as an item of its own."""

import uuid

import pytest

from annotate.models import Perturbation, PerturbationEvent, Role
from annotate.services import annotation_submit, assignment_next
from tests.annotate.perturbation_helpers import REVIEW, people, perturbation_project
from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

AUTHORED = REVIEW.replace("superb and moving", "superb , truly moving")
CHECKED = REVIEW.replace("superb and moving", "superb and truly moving")


def open_as(browser, base_url, user):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    login(page, base_url, user.username)
    return page


def annotate_everything(project, annotator):
    while (lease := assignment_next(project=project, worker=annotator)) is not None:
        annotation_submit(
            assignment_id=lease.pk,
            worker=annotator,
            client_uuid=uuid.uuid4(),
            rationale_sets=[
                [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 2}]
            ],
            time_spent_ms=20_000,
        )


def test_author_check_and_annotate_a_perturbation(browser, live_server):
    base = live_server.url
    project = perturbation_project()
    users = people(
        project,
        ("author", Role.AUTHOR),
        ("checker", Role.CHECKER),
        ("annotator", Role.ANNOTATOR),
    )
    annotate_everything(project, users["annotator"])  # so the next item is the new one

    # 1. The author finds the original on the Perturbations page and opens it.
    author = open_as(browser, base, users["author"])
    author.goto(f"{base}/projects/{project.id}/")
    author.click("#perturbations-link")
    author.wait_for_selector("#perturbations[data-ready=true]")
    assert author.locator("#originals tbody tr").count() == 2
    author.click("#originals tr[data-item=o0] a.button")
    author.wait_for_selector("#perturb-author[data-ready=true]")
    assert author.is_disabled("#save-perturbation")

    # 2. Types, an edit with its diff shown as it is typed, the gold label, save.
    author.check(".pt-type[data-type=syntax] input")
    author.check(".pt-type[data-type=dispensable_words] input")
    author.fill("textarea[data-position='0']", AUTHORED)
    assert author.locator(".pt-diff del").all_inner_texts() == ["and"]
    assert author.locator(".pt-diff ins").all_inner_texts() == [", truly"]
    assert author.inner_text(".pt-count") == "+2 −1 words"
    author.click(".pt-choices label:has(input[value=negative])")
    author.click("#save-perturbation")
    author.wait_for_selector("#perturb-author[data-last-saved]")
    assert "waits for a checker" in author.inner_text(".message.ok")
    assert author.locator("#existing-perturbations tbody tr").count() == 1
    first = Perturbation.objects.get()
    assert first.types == ["dispensable_words", "syntax"]
    assert (first.texts, first.label, first.author) == ([AUTHORED], "negative", users["author"])

    # A second one, of another original, for the checker to reject; a bad one is refused.
    author.goto(
        f"{base}/projects/{project.id}/perturbations/originals/{project.items.get(annotation_id='o1').id}/"
    )
    author.wait_for_selector("#perturb-author[data-ready=true]")
    author.check(".pt-type[data-type=important_words] input")
    author.fill("textarea[data-position='0']", REVIEW.replace("superb", "dreadful"))
    author.click("#save-perturbation")
    author.wait_for_selector("#perturb-author[data-last-saved]")
    assert Perturbation.objects.count() == 2

    # 3. The checker edits the first and accepts it, then rejects the second.
    checker = open_as(browser, base, users["checker"])
    checker.goto(f"{base}/projects/{project.id}/perturbations/check/")
    checker.wait_for_selector(f"#perturb-check[data-ready=true][data-current='{first.id}']")
    assert checker.inner_text("#queue-count") == "2"
    assert checker.locator(".pt-diff ins").all_inner_texts() == [", truly"]
    checker.click("#edit-perturbation")
    checker.fill("textarea[data-position='0']", CHECKED)
    assert checker.locator(".pt-diff ins").all_inner_texts() == ["truly"]
    checker.click(".pt-choices label:has(input[value=positive])")
    checker.click("#accept-perturbation")
    checker.wait_for_selector(f"#perturb-check[data-last-decided='{first.id}']")
    assert f"item o0-p{first.id} joins the annotation queue" in checker.inner_text(".message.ok")
    second = Perturbation.objects.exclude(pk=first.pk).get()
    checker.wait_for_selector(f"#perturb-check[data-current='{second.id}']")
    checker.click("#reject-perturbation")
    assert "Say why" in checker.inner_text(".message.error")
    checker.fill("textarea[name=comment]", "Dreadful flips the label: set it to negative.")
    checker.click("#reject-perturbation")
    checker.wait_for_selector(f"#perturb-check[data-last-decided='{second.id}']")
    checker.wait_for_selector("text=All caught up")

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.edited_in_check, first.label) == ("accepted", True, "positive")
    assert first.item.documents.get().text == CHECKED
    assert (second.status, second.item) == ("rejected", None)
    assert second.check_comment == "Dreadful flips the label: set it to negative."
    assert list(PerturbationEvent.objects.order_by("pk").values_list("action", flat=True)) == [
        "created",
        "created",
        "accepted",
        "rejected",
    ]

    # 4. The progress table counts them; the annotator is served the accepted item.
    author.goto(f"{base}/projects/{project.id}/perturbations/")
    author.wait_for_selector("#perturbations[data-ready=true]")
    assert author.locator("#progress-types tr[data-type=syntax] td.num").all_inner_texts() == [
        "0",
        "1",
        "0",
        "0",
    ]
    assert author.inner_text("[data-figure=unchanged]") == "0%"
    annotator = open_as(browser, base, users["annotator"])
    annotator.goto(f"{base}/projects/{project.id}/annotate/")
    annotator.wait_for_selector("#workspace[data-ready=true]")
    assert CHECKED.split()[-3:] == annotator.inner_text(".document").split()[-3:]
    assert "truly" in annotator.inner_text(".document")
    for page in (author, checker, annotator):
        assert page.errors == []
        page.context.close()


def test_the_word_diff_in_the_page(browser, live_server):
    project = perturbation_project(items=1)
    author = people(project, ("author", Role.AUTHOR))["author"]
    page = open_as(browser, live_server.url, author)

    result = page.evaluate(
        """async () => {
          const { diffWords, diffCounts } = await import('/static/frontend/word_diff.js');
          const show = (a, b) => diffWords(a, b).map((o) =>
            o.op === 'equal' ? o.a.text : o.op === 'delete' ? '-' + o.a.text : '+' + o.b.text).join(' ');
          return {
            dispensable: show('what are some reasons to travel alone', 'list some reasons to travel alone'),
            syntax: show('the customer commented the hotel', 'the hotel is commented by the customer'),
            chinese: show('我讨厌你', '我不喜欢你'),
            spacing: diffCounts(diffWords('a  b\\nc', 'a b c')),
            markup: show('<b>x</b>', '<i>x</i>'),
          };
        }"""
    )

    assert result["dispensable"] == "-what -are +list some reasons to travel alone"
    assert result["syntax"] == "the -customer +hotel +is commented +by the -hotel +customer"
    assert result["chinese"] == "我 -讨 -厌 +不 +喜 +欢 你"
    assert result["spacing"] == {"inserted": 0, "deleted": 0, "changed": False}
    assert result["markup"] == "< -b +i > x < / -b +i >"
    page.context.close()


def test_the_check_page_shows_no_actions_when_nothing_waits(browser, live_server):
    project = perturbation_project()
    users = people(project, ("checker", Role.CHECKER))
    checker = open_as(browser, live_server.url, users["checker"])

    checker.goto(f"{live_server.url}/projects/{project.id}/perturbations/check/")
    checker.wait_for_selector("[data-ready=true]")

    assert "All caught up" in checker.inner_text("#check-body")
    # Hidden, not merely marked hidden while a class keeps it on screen.
    assert checker.locator("#check-actions").is_hidden()
    assert checker.locator("#accept-perturbation").is_hidden()
    assert checker.errors == []
