"""The agreement page's "stale" notice reads as a sentence
(docs/design/architecture.md#the-interface): the API says how many annotations were submitted
since the report was computed, the page words it."""

import uuid

from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from qc.agreement import agreement_report_refresh, agreement_report_with_news
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


def submit_one(project, username):
    worker = UserFactory(username=username)
    lease = assignment_next(project=project, worker=worker)
    annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 1}]
        ],
    )


def test_the_report_counts_the_annotations_submitted_since(db):
    project = make_project(items=3, quota=2)
    submit_one(project, "early")
    assert agreement_report_with_news(project=project)[1] == 0  # no report yet

    agreement_report_refresh(project_id=project.pk)
    submit_one(project, "late-1")
    submit_one(project, "late-2")

    report, news = agreement_report_with_news(project=project)
    assert report.annotations_seen == 1 and news == 2


def test_the_api_gives_the_count_beside_stale(db):
    project = make_project(items=3, quota=2)
    researcher = UserFactory(username="researcher")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    agreement_report_refresh(project_id=project.pk)
    submit_one(project, "late")

    body = client_for(researcher).get(reverse("qc:agreement", args=[project.id])).data

    assert body["stale"] is True and body["annotations_since"] == 1
