"""Which instruction variant a worker annotates under: bound once per project by
permuted blocks (between-subjects), or chosen per request where the project mixes them."""

from __future__ import annotations

import random

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q

from annotate.allocation import allocation_index
from annotate.models import (
    AssignmentStatus,
    InstructionVariant,
    Project,
    WorkerVariantBinding,
)
from config.exceptions import ConflictError
from config.prepared_sql import PreparedStatement, columns
from config.transactions import create_unless_taken


def _variant_for_mixing(project: Project, worker) -> InstructionVariant:
    """Within-subjects: the active variant with the fewest live first-round assignments."""
    variants = list(
        InstructionVariant.objects.filter(project=project, active=True)
        .annotate(
            live=Count(
                "assignments",
                filter=Q(
                    assignments__round=1,
                    assignments__status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED],
                ),
            )
        )
        .order_by("name", "version")
    )
    if not variants:
        raise ConflictError(
            "This project has no active instruction variant yet, so there is nothing to "
            "annotate. An admin activates one on the project's Instructions page.",
            extra={"code": "no_active_variant"},
        )
    fewest = min(v.live for v in variants)
    candidates = [v for v in variants if v.live == fewest]
    return random.Random(f"{project.allocation_seed}:{worker.pk}:{fewest}").choice(candidates)


_BOUND_VARIANT = PreparedStatement(
    "rw_bound_variant",
    f"SELECT {columns(InstructionVariant, 'v')} "  # noqa: S608 - model names only
    f"FROM {WorkerVariantBinding._meta.db_table} b "
    f"JOIN {InstructionVariant._meta.db_table} v ON v.id = b.variant_id "
    "WHERE b.project_id = %(project)s AND b.worker_id = %(worker)s",
    [("project", "bigint"), ("worker", "bigint")],
)


def _variant_for_worker(project: Project, worker) -> InstructionVariant:
    if project.allow_variant_mixing:
        return _variant_for_mixing(project, worker)
    # Every "next" asks this: a plain SELECT, which costs a third of the ORM's query.
    found = _BOUND_VARIANT.instances(
        InstructionVariant, {"project": project.pk, "worker": worker.pk}
    )
    bound = found[0] if found else None
    if bound is not None and bound.active:
        return bound
    return _variant_allocate(project, worker)


_ACTIVE_VARIANTS = PreparedStatement(
    "rw_active_variants",
    f"SELECT {columns(InstructionVariant, 'v')} "  # noqa: S608 - model names only
    f"FROM {InstructionVariant._meta.db_table} v "
    "WHERE v.project_id = %(project)s AND v.active ORDER BY v.name, v.version",
    [("project", "bigint")],
)


def _variant_allocate(project: Project, worker) -> InstructionVariant:
    """First visit (or the bound variant was retired): the worker's variant by permuted
    blocks over the project's active variants (`annotate.allocation`). The ticket comes
    from one atomic counter, so concurrent first visits do not wait on each other, and
    balance holds block by block however they interleave."""
    variants = _ACTIVE_VARIANTS.instances(InstructionVariant, {"project": project.pk})
    if not variants:
        raise ConflictError(
            "This project has no active instruction variant yet, so there is nothing to "
            "annotate. An admin activates one on the project's Instructions page.",
            extra={"code": "no_active_variant"},
        )
    ticket, seed = _allocation_ticket(project)
    chosen = variants[allocation_index(ticket=ticket, seed=seed, variants=len(variants))]
    if create_unless_taken(
        WorkerVariantBinding,
        project=project,
        worker=worker,
        variant=chosen,
        seed=seed,
        ticket=ticket,
    ):
        return chosen  # the first visit: bound in one statement
    # Bound already: by this worker's other request, or to a variant since retired.
    try:
        with transaction.atomic():
            binding = (
                WorkerVariantBinding.objects.select_for_update(of=("self",))
                .select_related("variant")
                .filter(project=project, worker=worker)
                .first()
            )
            if binding is None:
                WorkerVariantBinding.objects.create(
                    project=project, worker=worker, variant=chosen, seed=seed, ticket=ticket
                )
                return chosen
            if binding.variant.active:  # this worker's other request bound them meanwhile
                return binding.variant
            binding.variant, binding.seed, binding.ticket = chosen, seed, ticket
            binding.save(update_fields=["variant", "seed", "ticket"])
            return chosen
    except IntegrityError:  # this worker's other request created the binding first
        return (
            WorkerVariantBinding.objects.select_related("variant")
            .get(project=project, worker=worker)
            .variant
        )


def _allocation_ticket(project: Project) -> tuple[int, int]:
    """The next place in the project's allocation order, and the project's seed: one
    UPDATE ... RETURNING, whose row lock lasts only that statement when nothing encloses
    it (an enclosing transaction holds it to its end)."""
    table = connection.ops.quote_name(Project._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET allocated_workers = allocated_workers + 1 "  # noqa: S608 - model names only
            "WHERE id = %s RETURNING allocated_workers, allocation_seed",
            [project.pk],
        )
        ticket, seed = cursor.fetchone()
    project.allocated_workers = ticket
    return ticket, seed
