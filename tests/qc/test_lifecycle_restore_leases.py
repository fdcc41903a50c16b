"""Delete and restore lose no annotator's work: the leases a deletion ends go back, with
their drafts, to the annotators who held them when the deletion is restored; a first
round whose lease ran out meanwhile is expired instead, its item back in the pool."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import (
    LIVE_ASSIGNMENT,
    Assignment,
    AssignmentStatus,
    Item,
    ItemVariantFill,
    ProjectMembership,
    Role,
)
from annotate.services import assignment_draft_save, assignment_next
from annotate.services.assignments import assignment_revision_create
from qc.services.lifecycle import (
    import_delete,
    import_restore,
    items_delete,
    items_restore,
    project_delete,
    project_restore,
)
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.concurrency import run_at_once
from tests.factories import UserFactory
from tests.qc.test_lifecycle_deletion import _split_into_imports

DRAFT = {"sets": [[{"docid": "d0", "start_token": 0, "end_token": 1}]]}


def _annotators(project, count: int, prefix: str = "w") -> list:
    workers = [UserFactory(username=f"{prefix}{n}") for n in range(count)]
    for worker in workers:
        ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    return workers


def _live_fill(item_id: int) -> int:
    return ItemVariantFill.objects.get(item_id=item_id).live


@pytest.fixture
def admin(db):
    return UserFactory(username="lead")


def test_a_restored_item_comes_back_to_its_annotator_with_the_draft(db, admin):
    project = make_project(items=2, quota=1)
    [worker] = _annotators(project, 1)
    lease = assignment_next(project=project, worker=worker)
    assignment_draft_save(assignment_id=lease.pk, worker=worker, draft=DRAFT)
    items_delete(project=project, item_ids=[lease.item_id], acting_user=admin)
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.SKIPPED

    items_restore(project=project, item_ids=[lease.item_id], acting_user=admin)

    back = Assignment.objects.get(pk=lease.pk)
    assert (back.status, back.draft, back.withdrawn_at) == (AssignmentStatus.LEASED, DRAFT, None)
    assert _live_fill(lease.item_id) == 1
    assert assignment_next(project=project, worker=worker).pk == lease.pk
    submit_first_tokens(back, worker)
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.SUBMITTED


def test_a_lease_that_ran_out_meanwhile_is_expired_and_its_item_back_in_the_pool(db, admin):
    project = make_project(items=1, quota=1)
    first, second = _annotators(project, 2)
    lease = assignment_next(project=project, worker=first)
    items_delete(project=project, item_ids=[lease.item_id], acting_user=admin)
    Assignment.objects.filter(pk=lease.pk).update(
        lease_expires_at=timezone.now() - timedelta(minutes=1)
    )

    items_restore(project=project, item_ids=[lease.item_id], acting_user=admin)

    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.EXPIRED
    assert _live_fill(lease.item_id) == 0
    taken = assignment_next(project=project, worker=second)
    assert taken.item_id == lease.item_id
    assert _live_fill(lease.item_id) == 1


def test_a_revision_owed_comes_back_whatever_its_lease_time(db, admin):
    project = make_project(items=1, quota=1)
    [worker] = _annotators(project, 1)
    first = assignment_next(project=project, worker=worker)
    result = submit_first_tokens(first, worker)
    revision = assignment_revision_create(annotation=result.annotation)
    Assignment.objects.filter(pk=revision.pk).update(
        lease_expires_at=timezone.now() - timedelta(days=1)
    )
    items_delete(project=project, item_ids=[first.item_id], acting_user=admin)

    items_restore(project=project, item_ids=[first.item_id], acting_user=admin)

    assert Assignment.objects.get(pk=revision.pk).status == AssignmentStatus.LEASED
    assert Assignment.objects.get(pk=first.pk).status == AssignmentStatus.SUBMITTED
    assert assignment_next(project=project, worker=worker).pk == revision.pk


def test_an_annotator_removed_meanwhile_does_not_get_it_back(db, admin):
    project = make_project(items=1, quota=1)
    leaver, other = _annotators(project, 2)
    lease = assignment_next(project=project, worker=leaver)
    items_delete(project=project, item_ids=[lease.item_id], acting_user=admin)
    ProjectMembership.objects.filter(project=project, user=leaver).delete()

    items_restore(project=project, item_ids=[lease.item_id], acting_user=admin)

    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.SKIPPED
    assert assignment_next(project=project, worker=other).item_id == lease.item_id


@pytest.mark.parametrize("where", ["project", "everywhere"])
def test_an_annotator_blocked_meanwhile_does_not_get_it_back(db, admin, where):
    from qc.models import ProjectWorker, QualificationStatus, WorkerProfile, WorkerStatus

    project = make_project(items=1, quota=1)
    blocked, other = _annotators(project, 2)
    lease = assignment_next(project=project, worker=blocked)
    items_delete(project=project, item_ids=[lease.item_id], acting_user=admin)
    if where == "project":
        ProjectWorker.objects.update_or_create(
            project=project, worker=blocked, defaults={"status": QualificationStatus.BLOCKED}
        )
    else:
        WorkerProfile.objects.update_or_create(
            user=blocked,
            defaults={"external_id": blocked.username, "status": WorkerStatus.BLOCKED},
        )

    items_restore(project=project, item_ids=[lease.item_id], acting_user=admin)

    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.SKIPPED
    assert _live_fill(lease.item_id) == 0
    assert assignment_next(project=project, worker=other).item_id == lease.item_id


def test_only_the_deletion_restored_gives_back_its_leases(db, admin):
    """A lease ended by archiving, or skipped by its annotator, stays ended; an import's
    restore gives back what its own deletion ended."""
    project = make_project(items=4, quota=1)
    gone, _ = _split_into_imports(project)
    workers = _annotators(project, 4)
    leases = [assignment_next(project=project, worker=w) for w in workers]
    on_gone = [a for a in leases if a.item.import_job_id == gone.pk]
    skipped = on_gone[0]
    Assignment.objects.filter(pk=skipped.pk).update(status=AssignmentStatus.SKIPPED)
    import_delete(project=project, job_id=gone.pk, acting_user=admin)

    import_restore(project=project, job_id=gone.pk, acting_user=admin)

    statuses = {a.pk: Assignment.objects.get(pk=a.pk).status for a in on_gone}
    assert statuses[skipped.pk] == AssignmentStatus.SKIPPED
    assert [statuses[a.pk] for a in on_gone[1:]] == [AssignmentStatus.LEASED]


def test_a_restored_project_gives_every_lease_back(db, admin):
    project = make_project(items=3, quota=1)
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    workers = _annotators(project, 3)
    leases = [assignment_next(project=project, worker=w) for w in workers]
    project_delete(project=project, confirm_name=project.name, acting_user=admin)

    project_restore(project_id=project.pk, acting_user=admin)

    assert {Assignment.objects.get(pk=a.pk).status for a in leases} == {AssignmentStatus.LEASED}
    assert sorted(ItemVariantFill.objects.values_list("live", flat=True)) == [1, 1, 1]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_restoring_an_import_while_others_ask_for_work(postgres_only):
    """The admin restores an import while other annotators ask for work: the annotators
    who held its items get their leases back, nobody else takes their slots, and no item
    is leased past its quota."""
    project = make_project(items=8, quota=1)
    gone, kept = _split_into_imports(project)
    admin = UserFactory(username="lead")
    holders = _annotators(project, 4, "holder")
    leases = [assignment_next(project=project, worker=w) for w in holders]
    for lease in leases:
        Item.objects.filter(pk=lease.item_id).update(import_job=gone)
    held = {lease.item_id for lease in leases}
    Item.objects.filter(project=project).exclude(pk__in=held).update(import_job=kept)
    import_delete(project=project, job_id=gone.pk, acting_user=admin)
    others = _annotators(project, 6, "other")

    def act(kind, worker):
        if kind == "restore":
            import_restore(project=project, job_id=gone.pk, acting_user=admin)
        else:
            assignment_next(project=project, worker=worker)

    errors = run_at_once(act, [("restore", None)] + [("next", w) for w in others], timeout=120)

    assert errors == []
    for lease in leases:
        back = Assignment.objects.get(pk=lease.pk)
        assert (back.status, back.worker_id) == (AssignmentStatus.LEASED, lease.worker_id)
    live = Assignment.objects.filter(LIVE_ASSIGNMENT, item__project=project, round=1)
    per_item: dict[int, int] = {}
    for item_id in live.values_list("item_id", flat=True):
        per_item[item_id] = per_item.get(item_id, 0) + 1
    assert max(per_item.values()) == 1
    assert not live.filter(item_id__in=held).exclude(worker__in=holders).exists()
    assert {f.item_id: f.live for f in ItemVariantFill.objects.filter(item__project=project)} == {
        item.pk: per_item.get(item.pk, 0) for item in Item.objects.filter(project=project)
    }
