"""Reviewers submitting at the same moment on PostgreSQL: each counted once, the verdict
computed once, one revision opened."""

import threading
import uuid

import pytest
from django.db import connection

from annotate.models import Assignment, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from qc.models import Review, ReviewVerdict, WorkerProfile
from qc.services import review_submit
from tests.annotate.workflow_helpers import make_project
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
    barrier = threading.Barrier(REVIEWERS)
    outcomes: list[str] = []
    lock = threading.Lock()

    def score(reviewer):
        try:
            barrier.wait()
            review_submit(
                annotation_id=annotation.pk,
                reviewer=reviewer,
                comprehensiveness=1,
                set_scores=[{"rationale_set": set_id, "sufficiency": 1, "compactness": 1}],
            )
            result = "stored"
        except Exception as exc:  # the losers of the race: recorded and asserted below
            result = type(exc).__name__
        finally:
            connection.close()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=score, args=(r,)) for r in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert outcomes.count("stored") == needed
    assert set(outcomes) <= {"stored", "ConflictError"}
    assert Review.objects.filter(annotation=annotation).count() == needed
    assert ReviewVerdict.objects.filter(annotation=annotation).count() == 1
    assert Assignment.objects.filter(item=lease.item, worker=annotator, round=2).count() == 1
    assert WorkerProfile.objects.get(user=annotator).judged_count == 1
