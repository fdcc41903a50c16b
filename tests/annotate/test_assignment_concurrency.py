"""Fifty concurrent annotators on PostgreSQL: quotas hold, no repeats, nothing lost."""

import time
import uuid

import pytest
from django.db.models import Count

from annotate.models import Annotation, Assignment, AssignmentStatus
from annotate.services import annotation_submit, assignment_next
from annotate.services.assignments import fill_rows_rebuild
from tests.annotate.workflow_helpers import make_project
from tests.concurrency import run_at_once
from tests.factories import UserFactory

# Each test runs on both implementations of "next" and "submit" (tests/annotate/conftest.py).
pytestmark = pytest.mark.usefixtures("hot_path")

WORKERS = 50


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_workers(postgres_only):
    project = make_project(items=20, variants=("a", "b"), quota=3)
    workers = [UserFactory(username=f"c{n}") for n in range(WORKERS)]
    acknowledged: list[int] = []

    def work(worker):
        misses = 0
        while misses < 3:
            lease = assignment_next(project=project, worker=worker)
            if lease is None:
                misses += 1
                time.sleep(0.05)
                continue
            docid = lease.item.documents.get().docid
            result = annotation_submit(
                assignment_id=lease.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=[[{"docid": docid, "start_token": 0, "end_token": 2}]],
                time_spent_ms=30_000,  # a realistic time: too-fast work gets blocked
            )
            acknowledged.append(result.annotation.pk)

    errors = run_at_once(work, [(w,) for w in workers])

    assert errors == []
    submitted = Assignment.objects.filter(item__project=project, status=AssignmentStatus.SUBMITTED)
    per_cell = submitted.values("item", "variant").annotate(n=Count("pk"))
    assert max(row["n"] for row in per_cell) <= 3
    assert sorted(row["n"] for row in per_cell) == [3] * 40, "every (item, variant) filled exactly"
    per_worker_item = submitted.values("item", "worker").annotate(n=Count("pk"))
    assert max(row["n"] for row in per_worker_item) == 1
    assert sorted(acknowledged) == sorted(Annotation.objects.values_list("pk", flat=True))
    assert len(acknowledged) == 120
    assert fill_rows_rebuild(project=project) == 0, "fill counters drifted under concurrency"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_expiry_and_reissue_under_load_never_overfill(postgres_only):
    """Leases of one second: slow workers lose theirs while others take the slot; a late
    submit is kept only if the quota still has room. No cell ever exceeds its quota."""
    from config.exceptions import ConflictError

    project = make_project(items=6, variants=("a",), quota=2, lease_seconds=1)
    workers = [UserFactory(username=f"e{n}") for n in range(16)]
    outcomes: list[str] = []

    def work(n, worker):
        for _ in range(4):
            lease = assignment_next(project=project, worker=worker)
            if lease is None:
                break
            if n % 3 == 0:
                time.sleep(1.2)  # slow: the lease expires before the submit
            docid = lease.item.documents.get().docid
            try:
                result = annotation_submit(
                    assignment_id=lease.pk,
                    worker=worker,
                    client_uuid=uuid.uuid4(),
                    rationale_sets=[[{"docid": docid, "start_token": 0, "end_token": 1}]],
                    time_spent_ms=30_000,
                )
                outcomes.append("late" if result.late else "on time")
            except ConflictError:
                outcomes.append("refused")

    errors = run_at_once(work, list(enumerate(workers)))

    assert errors == []
    submitted = Assignment.objects.filter(item__project=project, status=AssignmentStatus.SUBMITTED)
    per_cell = submitted.values("item", "variant").annotate(n=Count("pk"))
    assert max(row["n"] for row in per_cell) <= 2
    assert "late" in outcomes or "refused" in outcomes  # expiry really happened
    assert fill_rows_rebuild(project=project) == 0
