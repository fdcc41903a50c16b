"""Reviewers submitting at the same moment on PostgreSQL: each counted once, the verdict
computed once, one revision opened."""

import uuid

import pytest

from annotate.models import Assignment, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from qc.models import Review, ReviewVerdict, WorkerRecord
from qc.services import review_submit
from tests.annotate.workflow_helpers import make_project
from tests.concurrency import run_at_once
from tests.factories import UserFactory

REVIEWERS = 8


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("needed", [2, REVIEWERS])
def test_simultaneous_reviews_are_counted_once_and_decided_once(postgres_only, needed):
    project = make_project(items=1, quota=1, reviewers_per_annotation=needed)
    annotator = UserFactory(username="annotator")
    ProjectMembership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    lease = assignment_next(project=project, worker=annotator)
    annotation = annotation_submit(
        assignment_id=lease.pk,
        worker=annotator,
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": "d0", "start_token": 0, "end_token": 3}]],
    ).annotation
    set_id = annotation.rationale_sets.get().pk
    reviewers = [UserFactory(username=f"reviewer{n}") for n in range(REVIEWERS)]

    def score(reviewer):
        review_submit(
            annotation_id=annotation.pk,
            reviewer=reviewer,
            comprehensiveness=1,
            set_scores=[{"rationale_set": set_id, "sufficiency": 1, "compactness": 1}],
        )

    # The losers of the race raise; each outcome is "stored" or the error's type.
    errors = run_at_once(score, [(r,) for r in reviewers], timeout=120)
    outcomes = ["stored"] * (REVIEWERS - len(errors)) + [e.split(":")[0] for e in errors]

    assert outcomes.count("stored") == needed
    assert set(outcomes) <= {"stored", "ConflictError"}
    assert Review.objects.filter(annotation=annotation).count() == needed
    assert ReviewVerdict.objects.filter(annotation=annotation).count() == 1
    assert Assignment.objects.filter(item=lease.item, worker=annotator, round=2).count() == 1
    assert WorkerRecord.objects.get(project=project, profile__user=annotator).judged_count == 1
