"""Binding a worker to a chosen instruction variant, before their first "next".

The allocator (`assignments.allocation`) binds a worker on their first visit by permuted
blocks. A study link may instead fix the variant its recruits see (one platform study per
variant); that binding is made here, by hand as far as the allocator is concerned (no
ticket), so it neither takes nor disturbs a place in the permuted blocks.
"""

from __future__ import annotations

from django.db import transaction

from annotate.models import InstructionVariant, Project, WorkerVariantBinding
from config.exceptions import ApplicationError, ConflictError
from config.transactions import create_unless_taken


@transaction.atomic
def worker_variant_bind(
    *, project: Project, worker, variant: InstructionVariant
) -> WorkerVariantBinding:
    """Bind `worker` to `variant` in `project`; a no-op when they are bound to it already.

    Raises ConflictError when they are bound to another variant: a worker keeps the one
    variant they started under (between-subjects), so a second study link with other
    instructions cannot switch them.
    """
    if variant.project_id != project.pk:
        raise ApplicationError("variant: not a variant of this project")
    if not variant.active:
        raise ApplicationError(f"variant: {variant} is retired")
    if project.allow_variant_mixing:
        # "Next" chooses a variant per request in such projects and never reads bindings.
        raise ApplicationError("variant: this project lets each worker see several variants")
    binding = create_unless_taken(
        WorkerVariantBinding,
        project=project,
        worker=worker,
        variant=variant,
        seed=project.allocation_seed,
        ticket=None,
    )
    if binding is not None:
        return binding
    # Bound already: by an earlier visit, or by a concurrent one that won the insert.
    binding = WorkerVariantBinding.objects.select_related("variant").get(
        project=project, worker=worker
    )
    if binding.variant_id != variant.pk:
        raise ConflictError(
            f"this worker already works under the variant {binding.variant}",
            extra={"code": "bound_to_other_variant", "variant": binding.variant_id},
        )
    return binding
