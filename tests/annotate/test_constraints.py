"""Invariants that concurrent requests could break are database constraints."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import Assignment, InstructionVariant, RationaleSet, RationaleSpan
from tests.factories import ItemFactory, UserFactory


@pytest.fixture
def variant(project):
    return InstructionVariant.objects.create(project=project, name="words", text="Highlight words.")


def lease(item, worker, variant, slot, **extra):
    return Assignment.objects.create(
        item=item,
        worker=worker,
        variant=variant,
        slot=slot,
        lease_expires_at=timezone.now() + timedelta(minutes=5),
        **extra,
    )


def test_two_live_assignments_cannot_take_the_same_quota_slot(db, project, variant):
    item = ItemFactory(project=project)
    lease(item, UserFactory(), variant, slot=0)

    with pytest.raises(IntegrityError), transaction.atomic():
        lease(item, UserFactory(), variant, slot=0)


def test_an_expired_assignment_frees_its_slot(db, project, variant):
    item = ItemFactory(project=project)
    lease(item, UserFactory(), variant, slot=0, status="expired")

    lease(item, UserFactory(), variant, slot=0)

    assert Assignment.objects.filter(item=item).count() == 2


def test_a_worker_gets_an_item_once_per_round(db, project, variant):
    item, worker = ItemFactory(project=project), UserFactory()
    lease(item, worker, variant, slot=0, status="skipped")

    with pytest.raises(IntegrityError), transaction.atomic():
        lease(item, worker, variant, slot=1)


def test_a_rationale_set_has_exactly_one_owner(db, project):
    with pytest.raises(IntegrityError), transaction.atomic():
        RationaleSet.objects.create(position=0)


def test_a_span_cannot_end_before_it_starts(db, project):
    item = ItemFactory(project=project)
    rset = RationaleSet.objects.create(reference_item=item, position=0)

    with pytest.raises(IntegrityError), transaction.atomic():
        RationaleSpan.objects.create(
            rationale_set=rset,
            document=item.documents.get(),
            start_token=3,
            end_token=2,
            position=0,
        )


def test_variant_name_and_version_are_unique(db, project, variant):
    with pytest.raises(IntegrityError), transaction.atomic():
        InstructionVariant.objects.create(project=project, name="words", text="again")
