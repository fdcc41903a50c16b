"""A bulk send-back on a filter while annotators submit, on PostgreSQL: nothing half-done
(every "revise" verdict has its one revision, every revision its verdict), nothing lost
(every submit stored), and the audit event counts what was sent back."""

import uuid

import pytest
from django.http import QueryDict

from annotate.models import Annotation, Assignment, AssignmentStatus, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from qc.models import AuditAction, AuditEvent, ReviewVerdict, VerdictOutcome
from qc.services.item_bulk import item_bulk_run
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.concurrency import run_at_once
from tests.factories import UserFactory

ANNOTATORS = 6
ITEMS = 30
ROUNDS = 4


def _submit(lease, worker):
    return annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": text_docid(lease), "start_token": 0, "end_token": 2}]],
        time_spent_ms=2000,
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_bulk_send_back_while_annotators_submit(postgres_only):
    project = make_project(items=ITEMS, quota=3)
    admin = UserFactory(username="bulk-admin")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    workers = []
    for n in range(ANNOTATORS):
        worker = UserFactory(username=f"bulk-annotator{n}")
        ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
        workers.append(worker)
    # Work already submitted when the send-back starts: what it must send back.
    for worker in workers:
        _submit(assignment_next(project=project, worker=worker), worker)
    submitted_before = Annotation.objects.count()
    stored = []

    def annotate(worker):
        for _ in range(ROUNDS):
            lease = assignment_next(project=project, worker=worker)
            if lease is None:
                return
            stored.append(_submit(lease, worker).annotation.pk)

    def send_back():
        outcome = item_bulk_run(
            project=project,
            acting_user=admin,
            action="send_back",
            item_filter=QueryDict(""),
            args={"comment": "again"},
        )
        stored.append(("bulk", outcome))

    errors = run_at_once(
        lambda who: send_back() if who == "admin" else annotate(who),
        [("admin",), *[(w,) for w in workers]],
        timeout=240,
    )

    assert errors == []
    (bulk,) = [entry[1] for entry in stored if isinstance(entry, tuple)]
    submits = [entry for entry in stored if not isinstance(entry, tuple)]
    # Nothing lost: every submit is stored once.
    assert Annotation.objects.count() == submitted_before + len(submits)
    # Nothing half-done: a "revise" verdict of the send-back has exactly one revision,
    # for the same annotator, and no revision exists without its verdict.
    sent_back = ReviewVerdict.objects.filter(
        outcome=VerdictOutcome.REVISE, means__sent_back_by=admin.username
    ).select_related("annotation__assignment")
    assert sent_back.count() >= submitted_before
    for verdict in sent_back:
        previous = verdict.annotation.assignment
        revision = Assignment.objects.get(
            item=previous.item, worker=previous.worker, round=previous.round + 1
        )
        assert revision.status == AssignmentStatus.LEASED
    assert Assignment.objects.filter(round=2).count() == sent_back.count()
    # The work submitted after the send-back chose its items is untouched and undecided.
    undecided = Annotation.objects.filter(verdict__isnull=True).count()
    assert undecided + sent_back.count() == Annotation.objects.count()
    # One audit event, counting the items whose work went back.
    event = AuditEvent.objects.get(action=AuditAction.BULK_ACTION)
    assert event.details["touched"] == bulk["touched"]
    assert bulk["touched"] == len({v.annotation.assignment.item_id for v in sent_back})
