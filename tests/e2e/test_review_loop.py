"""The score-and-revise loop in the browser: an annotator submits, two reviewers score it
below the bar, the annotator sees why and revises, the reviewers pass it: accepted."""

import pytest

from annotate.models import Annotation, ProjectMembership, Role
from qc.models import ReviewVerdict
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TEXT = "The pacing drags , but the final act is superb and moving ."


def person(project, username, role):
    user = UserFactory(username=username)
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def open_as(browser, base_url, username):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    login(page, base_url, username)
    return page


def score(
    page, base_url, project, *, sufficiency, compactness, comprehensiveness, comment="", pick=None
):
    page.goto(f"{base_url}/projects/{project.id}/review/")
    page.wait_for_selector("#review[data-ready=true]")
    if pick is not None:  # choose from the queue instead of taking the oldest
        page.click(f".review-queue tr[data-annotation='{pick}'] button")
        page.wait_for_selector(f"#review[data-ready=true][data-annotation='{pick}']")
    form = page.locator(".review-form")
    form.locator(f"input[name^=sufficiency-][value='{sufficiency}']").check()
    form.locator(f"input[name^=compactness-][value='{compactness}']").check()
    form.locator(f"input[name=comprehensiveness][value='{comprehensiveness}']").check()
    if comment:
        form.locator("textarea[name=comment]").fill(comment)
    form.locator("button[type=submit]").click()
    page.wait_for_selector(".message.ok")
    return page.inner_text(".message")


def test_fail_revise_pass_in_the_browser(browser, live_server):
    base = live_server.url
    project = make_project(items=1, quota=1, text=TEXT, reviewers_per_annotation=2)
    person(project, "annie", Role.ANNOTATOR)
    person(project, "rita", Role.REVIEWER)
    person(project, "rob", Role.REVIEWER)

    # 1. The annotator highlights "final act" and submits.
    annotator = open_as(browser, base, "annie")
    annotator.goto(f"{base}/projects/{project.id}/annotate/")
    annotator.wait_for_selector("#workspace[data-ready=true]")
    tokens = annotator.locator(".document .tok")
    tokens.nth(6).click()
    tokens.nth(7).click()
    annotator.keyboard.press("Enter")
    annotator.wait_for_selector("#workspace[data-last-submitted]")

    # 2. Two reviewers are not sure it suffices; the reviewer page never names the annotator.
    rita = open_as(browser, base, "rita")
    rita.goto(f"{base}/projects/{project.id}/review/")
    rita.wait_for_selector("#review[data-ready=true]")
    assert "annie" not in rita.inner_text("#review")
    assert rita.locator(".whole-annotation .document .tok.sel").all_inner_texts() == [
        "final",
        "act",
    ]
    first = score(
        rita,
        base,
        project,
        sufficiency=2,
        compactness=4,
        comprehensiveness=2,
        comment="Add what the reviewer thought of the final act.",
    )
    assert "Other reviewers still have to score" in first
    rob = open_as(browser, base, "rob")
    verdict = score(rob, base, project, sufficiency=2, compactness=4, comprehensiveness=3)
    assert "revise" in verdict and "sufficiency" in verdict

    # 3. The annotator sees which properties failed, the scores and comments, and revises.
    annotator.goto(f"{base}/projects/{project.id}/annotate/")
    annotator.wait_for_selector("#workspace[data-revision='2']")
    feedback = annotator.inner_text(".feedback")
    assert "Revision: round 2 of 3" in feedback
    assert "sufficiency (mean 2, needs 2.67); comprehensiveness (mean 2.50, needs 2.67)" in feedback
    assert "Add what the reviewer thought of the final act." in feedback
    assert "rita" not in feedback and "rob" not in feedback
    assert annotator.locator(".legend-set").all_inner_texts() == ["Set 1: 2 tokens"]
    tokens = annotator.locator(".document .tok")
    tokens.nth(9).click()  # "superb"
    annotator.keyboard.press("Enter")
    annotator.wait_for_selector("#workspace[data-done=true]")

    # 4. The reviewers see the change since round 1 and pass it.
    rita.goto(f"{base}/projects/{project.id}/review/")
    rita.wait_for_selector("#review[data-ready=true]")
    assert "round 2 of 3" in rita.inner_text(".review-facts")
    assert rita.locator(".whole-annotation .tok.added").all_inner_texts() == ["superb"]
    assert rita.locator(".history details").count() == 1
    score(rita, base, project, sufficiency=3, compactness=4, comprehensiveness=3)
    revised = Annotation.objects.get(revision_of__isnull=False).pk
    passed = score(
        rob, base, project, sufficiency=3, compactness=4, comprehensiveness=3, pick=revised
    )
    assert "accepted" in passed

    # 5. The item is accepted, and every round's version is kept.
    newest = Annotation.objects.get(revision_of__isnull=False)
    assert ReviewVerdict.objects.get(annotation=newest).outcome == "accepted"
    assert ReviewVerdict.objects.get(annotation=newest.revision_of).outcome == "revise"
    assert Annotation.objects.count() == 2
    for page in (annotator, rita, rob):
        page.context.close()
