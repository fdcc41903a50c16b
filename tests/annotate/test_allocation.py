"""Allocating workers to instruction variants by permuted blocks."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotate.allocation import allocation_index
from annotate.models import WorkerVariantBinding
from annotate.services import assignment_next, assignment_skip
from qc.models import ProjectWorker, WorkerProfile
from tests.annotate.workflow_helpers import make_project
from tests.concurrency import run_at_once
from tests.factories import UserFactory


@given(
    seed=st.integers(min_value=0, max_value=2**32),
    variants=st.integers(min_value=1, max_value=9),
    workers=st.integers(min_value=1, max_value=60),
)
def test_no_variant_ever_leads_by_more_than_one_and_full_blocks_are_even(seed, variants, workers):
    counts = Counter()
    for ticket in range(1, workers + 1):
        index = allocation_index(ticket=ticket, seed=seed, variants=variants)
        assert 0 <= index < variants
        counts[index] += 1
        assert max(counts.values()) - min(counts[i] for i in range(variants)) <= 1
    if workers % variants == 0:
        assert set(counts.values()) == {workers // variants}


def test_the_order_within_blocks_is_shuffled_by_the_seed_and_replayable():
    def order(seed):
        return [allocation_index(ticket=t, seed=seed, variants=7) for t in range(1, 71)]

    assert order(3) == order(3)
    assert order(3) != order(4)
    blocks = {tuple(order(3)[start : start + 7]) for start in range(0, 70, 7)}
    assert len(blocks) > 1, "every block took the variants in the same order"


def test_a_ticket_and_a_variant_count_below_one_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        allocation_index(ticket=0, seed=1, variants=3)
    with pytest.raises(ValueError, match="at least 1"):
        allocation_index(ticket=1, seed=1, variants=0)


def test_each_binding_records_its_ticket_and_seed(db):
    project = make_project(variants=("a", "b", "c"), allocation_seed=11)
    workers = UserFactory.create_batch(4)

    for worker in workers:
        assignment_next(project=project, worker=worker)

    bindings = WorkerVariantBinding.objects.filter(project=project).order_by("ticket")
    assert [b.ticket for b in bindings] == [1, 2, 3, 4]
    assert {b.seed for b in bindings} == {11}
    names = [b.variant.name for b in bindings]
    assert sorted(names[:3]) == ["a", "b", "c"]
    expected = [
        ["a", "b", "c"][allocation_index(ticket=t, seed=11, variants=3)] for t in (1, 2, 3, 4)
    ]
    assert names == expected
    project.refresh_from_db()
    assert project.allocated_workers == 4


def test_a_returning_worker_keeps_their_variant_and_ticket(db):
    project = make_project(variants=("a", "b"))
    worker = UserFactory()
    first = assignment_next(project=project, worker=worker).variant

    assert assignment_next(project=project, worker=worker).variant == first
    project.refresh_from_db()
    assert project.allocated_workers == 1


def test_a_worker_whose_variant_was_retired_gets_a_new_ticket_for_new_work(db):
    project = make_project(variants=("a", "b"))
    worker = UserFactory()
    lease = assignment_next(project=project, worker=worker)
    retired = lease.variant
    retired.active = False
    retired.save(update_fields=["active"])
    binding = WorkerVariantBinding.objects.get(project=project, worker=worker)

    still_open = assignment_next(project=project, worker=worker)
    assignment_skip(assignment_id=lease.pk, worker=worker)
    new_work = assignment_next(project=project, worker=worker)
    binding.refresh_from_db()

    assert still_open.pk == lease.pk, "the open lease is theirs to finish"
    assert new_work.variant == binding.variant != retired and binding.variant.active
    assert binding.ticket == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_crowd_arriving_at_once_is_balanced_exactly(postgres_only):
    """Thirty first visits at the same moment under three variants: thirty distinct
    tickets, so ten complete blocks and ten workers per variant, however they raced."""
    project = make_project(items=40, variants=("a", "b", "c"), quota=3)
    workers = [UserFactory(username=f"crowd{n}") for n in range(30)]

    errors = run_at_once(
        lambda worker: assignment_next(project=project, worker=worker), [(w,) for w in workers]
    )

    assert errors == []
    bindings = WorkerVariantBinding.objects.filter(project=project)
    assert sorted(b.ticket for b in bindings) == list(range(1, 31))
    assert Counter(b.variant.name for b in bindings) == {"a": 10, "b": 10, "c": 10}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_worker_asking_eight_times_at_once_is_bound_once(postgres_only):
    project = make_project(items=10, variants=("a", "b", "c"), quota=3)
    worker = UserFactory(username="impatient")
    variants = []

    errors = run_at_once(
        lambda: variants.append(assignment_next(project=project, worker=worker).variant.pk),
        [()] * 8,
    )

    assert errors == []
    binding = WorkerVariantBinding.objects.get(project=project, worker=worker)
    assert set(variants) == {binding.variant_id}
    # The rest of a first visit, raced eight times: one profile, one standing.
    assert WorkerProfile.objects.filter(user=worker).count() == 1
    assert ProjectWorker.objects.filter(project=project, worker=worker).count() == 1
