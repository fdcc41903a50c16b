"""Binding a worker to a chosen variant before their first "next" (crowd study links)."""

import pytest

from annotate.models import WorkerVariantBinding
from annotate.services import assignment_next
from annotate.services.variant_binding import worker_variant_bind
from config.exceptions import ApplicationError, ConflictError
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_bound_worker_gets_work_under_that_variant_and_no_ticket():
    project = make_project(items=2, variants=("a", "b", "c"))
    chosen = project.variants.get(name="c")
    worker = UserFactory()
    binding = worker_variant_bind(project=project, worker=worker, variant=chosen)
    assert (binding.variant, binding.ticket, binding.seed) == (
        chosen,
        None,
        project.allocation_seed,
    )
    assert assignment_next(project=project, worker=worker).variant == chosen
    project.refresh_from_db()
    assert project.allocated_workers == 0  # no place in the permuted blocks was taken
    # Binding again to the same variant is a no-op
    assert worker_variant_bind(project=project, worker=worker, variant=chosen).pk == binding.pk


def test_a_worker_keeps_the_variant_they_started_under():
    project = make_project(items=2, variants=("a", "b"))
    worker = UserFactory()
    first = assignment_next(project=project, worker=worker).variant
    other = project.variants.exclude(pk=first.pk).get()
    with pytest.raises(ConflictError) as conflict:
        worker_variant_bind(project=project, worker=worker, variant=other)
    assert conflict.value.extra["code"] == "bound_to_other_variant"
    assert WorkerVariantBinding.objects.get(worker=worker).variant == first


def test_variants_of_other_projects_retired_ones_and_mixing_projects_are_refused():
    project, elsewhere = make_project(items=1), make_project(items=1)
    worker = UserFactory()
    with pytest.raises(ApplicationError, match="not a variant of this project"):
        worker_variant_bind(project=project, worker=worker, variant=elsewhere.variants.get())
    variant = project.variants.get()
    variant.active = False
    variant.save()
    with pytest.raises(ApplicationError, match="retired"):
        worker_variant_bind(project=project, worker=worker, variant=variant)
    mixing = make_project(items=1, allow_variant_mixing=True)
    with pytest.raises(ApplicationError, match="several variants"):
        worker_variant_bind(project=mixing, worker=worker, variant=mixing.variants.get())
