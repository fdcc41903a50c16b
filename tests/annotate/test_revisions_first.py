"""A revision owed is served before new work, on both paths of "next" (README: a failure
goes back to the same annotator as the next round; *Start annotating* shows it)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus
from tests.qc.helpers import make_review_project, next_assignment, review, submit


@pytest.fixture
def sent_back(db, hot_path, django_capture_on_commit_callbacks):
    """The annotator submitted item A, and both reviewers score it low: A is owed back."""
    project, people = make_review_project(items=3)
    with django_capture_on_commit_callbacks(execute=True):
        first = next_assignment(project, people["annotator"])
        annotation_id = submit(first, people["annotator"])["annotation_id"]
    return project, people, first, annotation_id


def _fail(people, annotation_id):
    review(people["reviewer1"], annotation_id, compactness=1)
    outcome = review(people["reviewer2"], annotation_id, compactness=1)
    assert outcome.data["verdict"]["outcome"] == "revise"


def test_a_revision_owed_comes_before_a_new_item(sent_back):
    project, people, first, annotation_id = sent_back
    _fail(people, annotation_id)

    served = next_assignment(project, people["annotator"])

    assert served["round"] == 2
    assert served["item"]["annotation_id"] == first["item"]["annotation_id"]


def test_a_revision_owed_comes_before_a_first_round_lease_already_open(sent_back):
    """The annotator took item B before A came back: A's revision is served first, and B
    stays leased to them for afterwards."""
    project, people, first, annotation_id = sent_back
    open_lease = next_assignment(project, people["annotator"])
    assert (
        open_lease["round"] == 1
        and open_lease["item"]["annotation_id"] != first["item"]["annotation_id"]
    )
    _fail(people, annotation_id)

    served = next_assignment(project, people["annotator"])

    assert (served["round"], served["item"]["annotation_id"]) == (2, first["item"]["annotation_id"])
    assert Assignment.objects.get(pk=open_lease["id"]).status == AssignmentStatus.LEASED


def test_after_the_revision_is_resubmitted_the_open_lease_is_served_again(
    sent_back, django_capture_on_commit_callbacks
):
    project, people, _first, annotation_id = sent_back
    open_lease = next_assignment(project, people["annotator"])
    _fail(people, annotation_id)
    with django_capture_on_commit_callbacks(execute=True):
        revision = next_assignment(project, people["annotator"])
        submit(revision, people["annotator"], 1, 4)

    served = next_assignment(project, people["annotator"])

    assert served["id"] == open_lease["id"] and served["round"] == 1


def test_a_revision_owed_comes_first_even_after_its_lease_time_has_passed(sent_back):
    """Revisions never expire: an old revision still comes before a newer open lease."""
    project, people, first, annotation_id = sent_back
    _fail(people, annotation_id)
    Assignment.objects.filter(round=2).update(
        lease_expires_at=timezone.now() - timedelta(days=1),
        created_at=timezone.now() - timedelta(days=1),
    )

    served = next_assignment(project, people["annotator"])

    assert (served["round"], served["item"]["annotation_id"]) == (2, first["item"]["annotation_id"])


def test_two_revisions_owed_come_oldest_first(db, hot_path, django_capture_on_commit_callbacks):
    project, people = make_review_project(items=3)
    annotations = []
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            leased = next_assignment(project, people["annotator"])
            annotations.append((leased, submit(leased, people["annotator"])["annotation_id"]))
    for _leased, annotation_id in reversed(annotations):  # the second one goes back first
        _fail(people, annotation_id)

    served = next_assignment(project, people["annotator"])

    assert served["round"] == 2
    assert served["item"]["annotation_id"] == annotations[1][0]["item"]["annotation_id"]
