"""An annotator changing an answer while a reviewer scores it, on PostgreSQL: the two are
taken one after the other (both lock the annotation row), so exactly one of them lands
and a review always scores the sets the annotation holds."""

import uuid

import pytest

from annotate.models import AnnotationVersion, ProjectMembership, RationaleSet, Role
from annotate.services import annotation_submit, assignment_next
from qc.models import Review, SetScore
from qc.services import review_submit
from qc.services.answer_changes import annotation_change
from tests.annotate.workflow_helpers import make_project
from tests.concurrency import run_at_once
from tests.factories import UserFactory

PAIRS = 4


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_change_racing_a_review_lands_alone(postgres_only):
    project = make_project(items=PAIRS, quota=1)
    annotator = UserFactory(username="annotator")
    ProjectMembership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
    reviewer = UserFactory(username="reviewer")
    annotations = []
    for _ in range(PAIRS):
        lease = assignment_next(project=project, worker=annotator)
        annotations.append(
            annotation_submit(
                assignment_id=lease.pk,
                worker=annotator,
                client_uuid=uuid.uuid4(),
                rationale_sets=[
                    [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 3}]
                ],
            ).annotation
        )

    def review(annotation):
        review_submit(
            annotation_id=annotation.pk,
            reviewer=reviewer,
            comprehensiveness=2,
            set_scores=[
                {
                    "rationale_set": annotation.rationale_sets.get().pk,
                    "sufficiency": 2,
                    "compactness": 2,
                }
            ],
        )

    def change(annotation):
        annotation_change(
            assignment_id=annotation.assignment_id,
            worker=annotator,
            base_version=1,
            rationale_sets=[
                [
                    {
                        "docid": annotation.assignment.item.documents.get().docid,
                        "start_token": 1,
                        "end_token": 4,
                    }
                ]
            ],
        )

    work = [(review, a) for a in annotations] + [(change, a) for a in annotations]
    errors = run_at_once(lambda act, annotation: act(annotation), work, timeout=120)

    assert len(errors) == PAIRS, errors
    assert {e.split(":")[0] for e in errors} <= {"ConflictError", "ApplicationError"}
    for annotation in annotations:
        reviewed = Review.objects.filter(annotation=annotation).exists()
        changed = AnnotationVersion.objects.filter(annotation=annotation).exists()
        assert reviewed != changed
        if reviewed:  # the scores are of the sets the annotation holds
            current = set(
                RationaleSet.objects.filter(annotation=annotation).values_list("pk", flat=True)
            )
            scored = set(
                SetScore.objects.filter(review__annotation=annotation).values_list(
                    "rationale_set_id", flat=True
                )
            )
            assert scored == current
