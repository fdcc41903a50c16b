"""Handing out work and taking it back: the assignment engine.

Rules: each (item, variant) collects `annotators_per_item` submissions; a worker is bound
to one variant per project (balanced, random, seeded) unless mixing is allowed; a worker
never gets the same item twice; leases expire and return the work to the pool; a worker
may skip. Concurrency: the item row is locked with SKIP LOCKED while a slot is taken, and
the partial unique constraint on (item, variant, round, slot) makes over-filling impossible
even if two transactions raced.
"""

from annotate.services.assignments.allocation import _BOUND_VARIANT
from annotate.services.assignments.fill_counters import (
    FILL_ROWS_FOR_STATISTICS,
    fill_change,
    fill_rows_rebuild,
    fill_rows_sync,
    item_variant_pin,
    project_fill_rows_sync,
)
from annotate.services.assignments.leasing import (
    EXPIRY_SWEEP_SECONDS,
    MAX_DRAFT_BYTES,
    assignment_draft_save,
    assignment_lease_for_worker,
    assignment_next,
    assignment_revision_create,
    assignment_skip,
    expiry_sweep_asked_forget,
    leases_expire,
    worker_leases_release,
)
from annotate.services.assignments.submission import (
    SubmitResult,
    annotation_submit,
    label_problem,
    rationale_sets_validate,
)

__all__ = [
    "EXPIRY_SWEEP_SECONDS",
    "FILL_ROWS_FOR_STATISTICS",
    "MAX_DRAFT_BYTES",
    "_BOUND_VARIANT",
    "SubmitResult",
    "annotation_submit",
    "assignment_draft_save",
    "assignment_lease_for_worker",
    "assignment_next",
    "assignment_revision_create",
    "assignment_skip",
    "expiry_sweep_asked_forget",
    "fill_change",
    "fill_rows_rebuild",
    "fill_rows_sync",
    "item_variant_pin",
    "label_problem",
    "leases_expire",
    "project_fill_rows_sync",
    "rationale_sets_validate",
    "worker_leases_release",
]
