"""Qualification in the browser: a candidate takes the gold test in the workspace, waits
for an admin, the admin reads the answers on the quality page and accepts, and the
candidate then gets ordinary work. Gold answers never reach the candidate's page."""

import pytest

from annotate.models import Item, ProjectMembership, Role
from qc.models import AuditEvent, ProjectWorker
from qc.services import gold_items_set, quality_policy_update
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import UserFactory
from tests.qc.helpers import add_reference

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_test_then_manual_selection_then_work(browser, live_server):
    base = live_server.url
    project = make_project(items=3, quota=1)
    gold = Item.objects.filter(project=project).order_by("pk").first()
    add_reference(gold, 5, 8)
    gold_items_set(project=project, annotation_ids=[gold.annotation_id])
    quality_policy_update(
        project=project, test_enabled=True, manual_selection=True, test_pass_f1=0.5
    )
    for name, role in (("cand", Role.ANNOTATOR), ("boss", Role.ADMIN)):
        ProjectMembership.objects.create(
            project=project, user=UserFactory(username=name), role=role
        )

    candidate = browser.new_context().new_page()
    candidate.set_default_timeout(15_000)
    gold_requests = []
    candidate.on(
        "response",
        lambda r: (
            gold_requests.append(r.text())
            if "/api/" in r.url and r.request.method != "OPTIONS"
            else None
        ),
    )
    login(candidate, base, "cand")
    candidate.goto(f"{base}/projects/{project.id}/annotate/")
    candidate.wait_for_selector("#workspace[data-mode=test][data-ready=true]")
    assert "Qualification test: item 1 of 1" in candidate.inner_text(".test-banner")
    assert candidate.locator("text=Skip item").count() == 0
    tokens = candidate.locator(".document .tok")
    for n in (5, 6, 7):
        tokens.nth(n).click()
    candidate.keyboard.press("Enter")
    candidate.wait_for_selector("#workspace[data-refused=pending_selection]")
    assert "Waiting for a decision" in candidate.inner_text(".refusal")
    assert not any('"gold"' in body or '"f1"' in body for body in gold_requests)

    admin = browser.new_context().new_page()
    admin.set_default_timeout(15_000)
    login(admin, base, "boss")
    admin.goto(f"{base}/projects/{project.id}/quality/")
    admin.wait_for_selector("#quality[data-ready=true]")
    card = admin.locator(".candidate[data-worker=cand]")
    assert "Attempt 1: mean F1 1 (passed)" in card.inner_text()
    admin.on("dialog", lambda dialog: dialog.accept("exact answers"))
    card.locator("button", has_text="Accept").click()
    admin.wait_for_selector("text=cand is now qualified.")
    admin.wait_for_selector("#audit td[data-column=Action]:text-is('accept')")
    assert "exact answers" in admin.inner_text("#audit")

    candidate.goto(f"{base}/projects/{project.id}/annotate/")
    candidate.wait_for_selector("#workspace[data-ready=true][data-assignment]")
    assert candidate.locator(".test-banner").count() == 0
    assert ProjectWorker.objects.get(worker__username="cand").status == "qualified"
    assert AuditEvent.objects.filter(
        worker__username="cand", action="accept", actor__username="boss"
    ).exists()
    candidate.context.close()
    admin.context.close()
