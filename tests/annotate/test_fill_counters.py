"""The fill counters behind "next item" stay equal to the live assignments through every
path that changes them, and items or variants added later join the pool."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotate.models import Assignment, Document, Item, ItemDocument, ItemVariantFill
from annotate.services import assignment_next, assignment_skip, variant_create
from annotate.services.assignments import expiry_sweep_asked_forget, fill_rows_rebuild
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.factories import UserFactory

# Each test runs on both implementations of "next" and "submit" (tests/annotate/conftest.py).
pytestmark = pytest.mark.usefixtures("hot_path")


def counters(project) -> dict:
    return {
        (f.item.annotation_id, f.variant.name): f.live
        for f in ItemVariantFill.objects.filter(item__project=project).select_related(
            "item", "variant"
        )
        if f.live
    }


def assert_exact(project):
    assert fill_rows_rebuild(project=project) == 0, "a counter drifted from the assignments"


def test_lease_skip_expire_late_submit_and_submit_keep_counters_exact(db):
    project = make_project(items=2, quota=2, lease_seconds=60)
    a, b, c = UserFactory(), UserFactory(), UserFactory()

    lease_a = assignment_next(project=project, worker=a)
    lease_b = assignment_next(project=project, worker=b)
    assert counters(project) == {("i0", "plain"): 2}
    assert_exact(project)

    assignment_skip(assignment_id=lease_b.pk, worker=b)
    assert counters(project) == {("i0", "plain"): 1}
    assignment_skip(assignment_id=lease_b.pk, worker=b)  # a repeated skip changes nothing
    assert counters(project) == {("i0", "plain"): 1}

    Assignment.objects.filter(pk=lease_a.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    cache.clear()  # the next call's periodic expiry sweep is due
    expiry_sweep_asked_forget()
    lease_c = assignment_next(project=project, worker=c)  # expires a's lease on the way
    assert lease_c.item.annotation_id == "i0"
    assert counters(project) == {("i0", "plain"): 1}
    assert_exact(project)

    late = submit_first_tokens(lease_a, a)  # the slot a lost is still free: kept
    assert late.late
    assert counters(project) == {("i0", "plain"): 2}
    submit_first_tokens(lease_c, c)
    assert counters(project) == {("i0", "plain"): 2}
    assert_exact(project)


def test_items_imported_after_work_began_are_served(db):
    project = make_project(items=1, quota=1)
    first, second = UserFactory(), UserFactory()
    submit_first_tokens(assignment_next(project=project, worker=first), first)
    assert assignment_next(project=project, worker=second) is None

    doc = Document.objects.create(
        project=project,
        docid="late",
        text="a late item",
        tokens=[[0, 1], [2, 6], [7, 11]],
        sentences=[[0, 3]],
        token_count=3,
        text_sha256="late",
        tokenizer="test",
    )
    item = Item.objects.create(project=project, annotation_id="late", label="pos", split="train")
    ItemDocument.objects.create(item=item, document=doc, position=0)

    lease = assignment_next(project=project, worker=second)
    assert lease is not None and lease.item == item
    assert_exact(project)


def test_a_variant_added_later_gets_its_counters(db):
    project = make_project(items=2, quota=1, variants=("a",), allow_variant_mixing=True)
    worker = UserFactory()
    submit_first_tokens(assignment_next(project=project, worker=worker), worker)
    variant_create(project=project, name="b", text="Another wording.")

    leases = {assignment_next(project=project, worker=UserFactory()).variant.name for _ in range(2)}

    assert "b" in leases
    assert_exact(project)


def test_rebuild_repairs_a_counter_that_drifted(db):
    project = make_project(items=1, quota=1)
    worker = UserFactory()
    lease = assignment_next(project=project, worker=worker)
    ItemVariantFill.objects.filter(item=lease.item).update(live=0)  # drift, e.g. a manual edit

    assert fill_rows_rebuild(project=project) == 1
    assert counters(project) == {("i0", "plain"): 1}


def test_a_worker_who_finds_nothing_sweeps_expired_leases_at_once(db):
    project = make_project(items=1, quota=1)
    first, second = UserFactory(), UserFactory()
    lease = assignment_next(project=project, worker=first)  # this call swept: the next may not
    Assignment.objects.filter(pk=lease.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )

    taken = assignment_next(project=project, worker=second)

    assert taken is not None and taken.item_id == lease.item_id
    assert_exact(project)


def test_the_rebuild_command_names_what_it_corrected(db, capsys):
    from django.core.management import call_command

    project = make_project(items=1, quota=1)
    lease = assignment_next(project=project, worker=UserFactory())
    ItemVariantFill.objects.filter(item=lease.item).update(live=0)

    call_command("fill_counters_rebuild", str(project.pk))

    assert f"{project.name}: 1 counter(s) corrected" in capsys.readouterr().out
