"""The annotator's previous items: from the workspace's Previous key to their latest answer,
a change saved as a new version, older answers by key, and a reviewed one shown closed."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.models import Annotation, AnnotationVersion, Assignment, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from qc.services import review_submit
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.e2e.conftest import login
from tests.e2e.test_annotator_workspace import annotator
from tests.e2e.test_task_type_workspaces import open_workspace
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _submitted(project, worker, start: int):
    lease = assignment_next(project=project, worker=worker)
    annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [{"docid": text_docid(lease), "start_token": start, "end_token": start + 1}]
        ],
    )
    Assignment.objects.filter(pk=lease.pk).update(
        submitted_at=timezone.now() - timedelta(minutes=10 - start)
    )


def test_previous_key_opens_the_latest_answer_and_a_change_is_a_new_version(page, live_server):
    project = make_project(
        items=3, quota=1, text="The pacing drags , but the final act is superb ."
    )
    worker = annotator(project, "ann")
    _submitted(project, worker, 1)
    _submitted(project, worker, 4)
    open_workspace(page, live_server, project)

    page.keyboard.press("p")
    page.wait_for_selector(".answer-view .answer-doc")
    latest = Annotation.objects.order_by("-pk").first()
    expect(page.locator(".answer-view h2")).to_contain_text("version 1")
    expect(page.locator(".answer-doc .tok.sel")).to_have_count(1)
    expect(page.locator(".answer-doc .tok.sel")).to_have_text("but")

    page.locator(".answer-doc .tok").nth(5).click()
    page.keyboard.press("Enter")
    expect(page.locator(".answer-view h2")).to_contain_text("version 2")
    assert AnnotationVersion.objects.filter(annotation=latest).count() == 2
    spans = [(s.start_token, s.end_token) for s in latest.rationale_sets.get().spans.all()]
    assert spans == [(4, 6)]

    page.keyboard.press("p")  # the older answer
    expect(page.locator(".answer-view h2")).to_contain_text("Item i0")
    expect(page.locator(".answer-doc .tok.sel")).to_have_text("pacing")
    expect(page.locator(".answers-table tbody tr")).to_have_count(2)


def test_a_reviewed_answer_is_shown_closed_without_a_save(page, live_server):
    project = make_project(items=1, quota=1)
    worker = annotator(project, "ann")
    _submitted(project, worker, 0)
    login(page, live_server.url, "ann")
    reviewer = UserFactory(username="rev")
    ProjectMembership.objects.create(project=project, user=reviewer, role=Role.REVIEWER)
    annotation = Annotation.objects.get()
    review_submit(
        annotation_id=annotation.pk,
        reviewer=reviewer,
        comprehensiveness=3,
        set_scores=[
            {
                "rationale_set": annotation.rationale_sets.get().pk,
                "sufficiency": 3,
                "compactness": 4,
            }
        ],
    )

    page.goto(f"{live_server.url}/projects/{project.id}/answers/?open=latest")

    expect(page.locator(".answer-state")).to_contain_text("reviewer has scored it")
    expect(page.locator(".answer-view button.primary")).to_have_count(0)


def test_changes_to_a_previous_answer_are_undone_and_redone_by_key_and_button(page, live_server):
    project = make_project(
        items=2, quota=1, text="The pacing drags , but the final act is superb ."
    )
    worker = annotator(project, "ann")
    _submitted(project, worker, 4)
    login(page, live_server.url, "ann")
    page.goto(f"{live_server.url}/projects/{project.pk}/answers/?open=latest")
    highlighted = page.locator(".answer-doc .tok.sel")
    expect(highlighted).to_have_text(["but"])
    undo = page.locator(".answer-edits .undo")
    redo = page.locator(".answer-edits .redo")
    expect(undo).to_be_disabled()

    page.locator(".answer-doc .tok").nth(5).click()
    page.locator(".answer-doc .tok").nth(6).click()
    expect(highlighted).to_have_text(["but", "the", "final"])
    page.keyboard.press("Control+z")
    expect(highlighted).to_have_text(["but", "the"])
    page.keyboard.press("z")
    expect(highlighted).to_have_text(["but"])
    expect(undo).to_be_disabled()
    page.keyboard.press("Control+Shift+Z")
    expect(highlighted).to_have_text(["but", "the"])
    page.keyboard.press("Control+y")
    expect(highlighted).to_have_text(["but", "the", "final"])
    expect(redo).to_be_disabled()
    undo.click()
    expect(highlighted).to_have_text(["but", "the"])
    redo.click()
    undo.click()

    page.locator(".answer-view button.primary").click()
    expect(page.locator(".answer-view h2")).to_contain_text("version 2")
    annotation = Annotation.objects.get()
    spans = [(s.start_token, s.end_token) for s in annotation.rationale_sets.get().spans.all()]
    assert spans == [(4, 6)]
