"""Handing out work and taking it back: the assignment engine.

Rules: each (item, variant) collects `annotators_per_item` submissions; a worker is bound
to one variant per project (balanced, random, seeded) unless mixing is allowed; a worker
never gets the same item twice; leases expire and return the work to the pool; a worker
may skip. Concurrency: the item row is locked with SKIP LOCKED while a slot is taken, and
the partial unique constraint on (item, variant, round, slot) makes over-filling impossible
even if two transactions raced.
"""

from __future__ import annotations

import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.allocation import allocation_index
from annotate.gates import work_refusal
from annotate.models import (
    LIVE_ASSIGNMENT,
    Annotation,
    Assignment,
    AssignmentStatus,
    Document,
    InstructionVariant,
    Item,
    ItemVariantFill,
    Project,
    RationaleSet,
    RationaleSpan,
    WorkerVariantBinding,
)
from annotate.selectors import annotation_set_tokens, assignment_with_item_documents
from annotate.services import hot_path_sql
from annotate.signals import annotation_submitted
from config.bulk_sql import statistics_refresh
from config.exceptions import (
    ApplicationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
)
from config.prepared_sql import PreparedStatement, columns
from config.transactions import create_unless_taken
from rationale_metrics.span_rules import RationaleSetsProblem, rationale_sets_check


def _skip_locked() -> dict:
    return {"skip_locked": True} if connection.features.has_select_for_update_skip_locked else {}


def leases_expire(*, project: Project) -> int:
    """Mark first-round leases past their time as expired, which frees their quota slots
    and their fill counts. Rows another transaction holds (a late submit in progress) are
    skipped; it settles them. Revisions (round > 1) belong to their annotator and never
    expire."""
    expired = list(
        Assignment.objects.filter(
            item__project=project,
            status=AssignmentStatus.LEASED,
            round=1,
            lease_expires_at__lt=timezone.now(),
        )
        .select_for_update(of=("self",), **_skip_locked())
        .values_list("pk", "item_id", "variant_id")
    )
    if not expired:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, _, _ in expired]).update(
        status=AssignmentStatus.EXPIRED
    )
    # In a fixed order, so two transactions expiring at once cannot deadlock.
    for (item_id, variant_id), n in sorted(Counter((i, v) for _, i, v in expired).items()):
        fill_change(item_id, variant_id, -n)
    return len(expired)


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
        raise ApplicationError("this project has no active instruction variant yet")
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
        raise ApplicationError("this project has no active instruction variant yet")
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


# ---------------------------------------------------------------- fill counters


def fill_change(item_id: int, variant_id: int, delta: int) -> None:
    """Move an (item, variant)'s live count; called in the transaction that changes it."""
    ItemVariantFill.objects.filter(item_id=item_id, variant_id=variant_id).update(
        live=F("live") + delta
    )


def _live_counts(variant: InstructionVariant, item_ids=None) -> dict[int, int]:
    rows = Assignment.objects.filter(LIVE_ASSIGNMENT, variant=variant, round=1)
    if item_ids is not None:
        rows = rows.filter(item_id__in=item_ids)
    return dict(rows.values_list("item_id").annotate(n=Count("pk")).values_list("item_id", "n"))


# Creating this many fill rows (a variant on a big project, a big import) refreshes the
# table's planner statistics, which "next" relies on to find a free item by index.
FILL_ROWS_FOR_STATISTICS = 1_000


def fill_rows_sync(*, project: Project, variant: InstructionVariant) -> int:
    """Create the fill rows an (item, variant) lacks, counted from the assignments
    themselves; returns how many were created. Called when variants are created and
    datasets imported, and again whenever "next" finds nothing, as a safety net. The
    variant row is locked, so concurrent callers create the rows once, one after another."""
    with transaction.atomic():
        InstructionVariant.objects.select_for_update(no_key=True).filter(pk=variant.pk).first()
        created = _fill_rows_create(project, variant)
    if created >= FILL_ROWS_FOR_STATISTICS:
        statistics_refresh(ItemVariantFill)
    return created


def project_fill_rows_sync(*, project: Project) -> int:
    return sum(
        fill_rows_sync(project=project, variant=variant)
        for variant in InstructionVariant.objects.filter(project=project, active=True)
    )


def _fill_rows_create(project: Project, variant: InstructionVariant) -> int:
    # Two plain scans and a set difference: an anti-join here met a freshly imported
    # table without statistics and PostgreSQL planned it as a nested loop over both.
    have = set(ItemVariantFill.objects.filter(variant=variant).values_list("item_id", flat=True))
    missing = [
        pk
        for pk in Item.objects.filter(project=project).order_by().values_list("pk", flat=True)
        if pk not in have
    ]
    created = 0
    for start in range(0, len(missing), 5000):
        chunk = missing[start : start + 5000]
        live = _live_counts(variant, chunk)
        created += len(
            ItemVariantFill.objects.bulk_create(
                [ItemVariantFill(item_id=i, variant=variant, live=live.get(i, 0)) for i in chunk],
                ignore_conflicts=True,
            )
        )
    return created


def fill_rows_rebuild(*, project: Project) -> int:
    """Recount every fill row of the project from its assignments (a repair tool; the
    counters are kept exact by the services). Returns how many rows were corrected."""
    actual = Coalesce(
        Subquery(
            Assignment.objects.filter(
                LIVE_ASSIGNMENT, item=OuterRef("item_id"), variant=OuterRef("variant_id"), round=1
            )
            .values("item")
            .annotate(n=Count("pk"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        Value(0),
    )
    with transaction.atomic():
        for variant in InstructionVariant.objects.filter(project=project):
            fill_rows_sync(project=project, variant=variant)
        wrong = list(
            ItemVariantFill.objects.filter(variant__project=project)
            .annotate(actual=actual)
            .exclude(live=F("actual"))
            .values_list("pk", flat=True)
        )
        for start in range(0, len(wrong), 5000):
            ItemVariantFill.objects.filter(pk__in=wrong[start : start + 5000]).update(live=actual)
    return len(wrong)


def _next_fill(project: Project, worker, variant: InstructionVariant) -> ItemVariantFill | None:
    """The (item, variant) to hand out: not full, not held out, never given to this
    worker; fullest first, so complete items accumulate. Locked, skipping rows others hold."""
    mine = Assignment.objects.filter(item=OuterRef("item_id"), worker=worker)
    return (
        ItemVariantFill.objects.filter(
            variant=variant, live__lt=project.annotators_per_item, item__held_out=False
        )
        .exclude(Exists(mine))
        .order_by("-live", "item_id")
        .select_for_update(of=("self",), **_skip_locked())
        .first()
    )


def _take_slot(item_id: int, variant, round_number: int, quota: int) -> int | None:
    used = set(
        Assignment.objects.filter(
            LIVE_ASSIGNMENT, item_id=item_id, variant=variant, round=round_number
        ).values_list("slot", flat=True)
    )
    return next((slot for slot in range(quota) if slot not in used), None)


def assignment_next(*, project: Project, worker) -> Assignment | None:
    """The worker's current lease (a revision owed counts), or a new one, with its item and
    documents attached; None when nothing is left for them. Raises PermissionDeniedError
    when a gate refuses them; the gate runs in its own transaction, so what it records
    stands even when it refuses."""
    refusal = work_refusal(project=project, worker=worker)
    if refusal is not None:
        raise PermissionDeniedError(refusal.message, extra={"code": refusal.code, **refusal.extra})
    # A project that mixes variants chooses one per request; otherwise the lease statement
    # reads the worker's bound variant itself, and only a first visit (or a retired
    # variant) binds one here first.
    variant = _variant_for_mixing(project, worker) if project.allow_variant_mixing else None
    if hot_path_sql.available():
        if _expiry_sweep_due(project):
            with transaction.atomic():
                leases_expire(project=project)
        assignment = hot_path_sql.lease(
            project=project, worker_id=worker.pk, variant=variant, now=timezone.now()
        )
        if assignment is hot_path_sql.UNBOUND:
            variant = _variant_for_worker(project, worker)
            assignment = hot_path_sql.lease(
                project=project, worker_id=worker.pk, variant=variant, now=timezone.now()
            )
        if assignment is not None:
            _variant_freeze(assignment.variant)
            return assignment
    variant = variant or _variant_for_worker(project, worker)
    assignment = _lease_next(project, worker, variant)
    if assignment is None:
        return None
    return assignment_with_item_documents(assignment, project=project, variant=assignment.variant)


def _variant_freeze(variant: InstructionVariant) -> None:
    """A variant is frozen at first use: editing it then makes a new version."""
    if variant.frozen_at is None:
        InstructionVariant.objects.filter(pk=variant.pk, frozen_at__isnull=True).update(
            frozen_at=timezone.now()
        )


EXPIRY_SWEEP_SECONDS = 5
# When this process last asked the cache whether a project's sweep is due.
_sweep_asked_at: dict[int, float] = {}


def _expiry_sweep_due(project: Project) -> bool:
    """At most one expiry sweep per project every few seconds (any process, through a
    cache key), so "next" does not scan leases on every call; a worker who finds nothing
    sweeps regardless. Each process asks the cache at most that often too, so "next"
    pays that round trip every few seconds instead of every time."""
    now = time.monotonic()
    if now - _sweep_asked_at.get(project.pk, -EXPIRY_SWEEP_SECONDS) < EXPIRY_SWEEP_SECONDS:
        return False
    _sweep_asked_at[project.pk] = now
    return cache.add(f"rw:lease-sweep:{project.pk}", 1, timeout=EXPIRY_SWEEP_SECONDS)


def expiry_sweep_asked_forget() -> None:
    """Forget when this process last asked (for tests, whose projects reuse ids)."""
    _sweep_asked_at.clear()


@transaction.atomic
def _lease_next(project: Project, worker, variant: InstructionVariant) -> Assignment | None:
    now = timezone.now()
    swept = _expiry_sweep_due(project)
    if swept:
        leases_expire(project=project)
    current = (
        Assignment.objects.filter(
            Q(lease_expires_at__gte=now) | Q(round__gt=1),
            item__project=project,
            worker=worker,
            status=AssignmentStatus.LEASED,
        )
        .order_by("created_at")
        .first()
    )
    if current is not None:
        return current
    synced = False
    for _attempt in range(5):
        fill = _next_fill(project, worker, variant)
        if fill is None:
            if not swept:  # expired leases may be holding the last free slots
                leases_expire(project=project)
                swept = True
                continue
            if synced or not fill_rows_sync(project=project, variant=variant):
                return None
            synced = True
            continue
        slot = _take_slot(fill.item_id, variant, 1, project.annotators_per_item)
        if slot is None:  # the counter was behind the slots: correct it and look again
            fill.live = _live_counts(variant, [fill.item_id]).get(fill.item_id, 0)
            fill.save(update_fields=["live"])
            continue
        try:
            with transaction.atomic():
                assignment = Assignment.objects.create(
                    item_id=fill.item_id,
                    worker=worker,
                    variant=variant,
                    round=1,
                    slot=slot,
                    lease_expires_at=now + timedelta(seconds=project.lease_seconds),
                )
        except IntegrityError:
            continue
        fill_change(fill.item_id, variant.pk, +1)
        _variant_freeze(variant)
        return assignment
    return None


def _owned(assignment_id: int, worker, *, lock: bool = False) -> Assignment:
    queryset = Assignment.objects.select_related("item__project", "variant")
    if lock:
        queryset = queryset.select_for_update(of=("self",))
    assignment = queryset.filter(pk=assignment_id, worker=worker).first()
    if assignment is None:
        raise NotFoundError("assignment not found")
    return assignment


@transaction.atomic
def assignment_skip(*, assignment_id: int, worker) -> Assignment:
    assignment = _owned(assignment_id, worker, lock=True)
    if assignment.status == AssignmentStatus.SUBMITTED:
        raise ConflictError("this assignment was already submitted")
    if assignment.status == AssignmentStatus.SKIPPED:
        return assignment
    if assignment.status == AssignmentStatus.LEASED and assignment.round == 1:
        fill_change(assignment.item_id, assignment.variant_id, -1)
    assignment.status = AssignmentStatus.SKIPPED
    assignment.save(update_fields=["status"])
    return assignment


MAX_DRAFT_BYTES = 256 * 1024


@transaction.atomic
def assignment_draft_save(*, assignment_id: int, worker, draft: dict) -> Assignment:
    import json

    assignment = _owned(assignment_id, worker, lock=True)
    if assignment.status != AssignmentStatus.LEASED:
        raise ConflictError(
            f"this assignment is {assignment.status}; drafts are kept only while it is open"
        )
    if len(json.dumps(draft)) > MAX_DRAFT_BYTES:
        raise ApplicationError(f"draft is larger than {MAX_DRAFT_BYTES} bytes")
    assignment.draft = draft
    assignment.draft_saved_at = timezone.now()
    assignment.save(update_fields=["draft", "draft_saved_at"])
    return assignment


@dataclass
class SubmitResult:
    annotation: Annotation
    replayed: bool = False  # a retry of a submit that had already been stored
    late: bool = False  # the lease had expired, and the work was kept


def rationale_sets_validate(
    item: Item, sets: list, min_highlight: int
) -> list[list[tuple[Document, int, int]]]:
    """The sets with their documents, checked against the item's documents
    (`rationale_metrics.span_rules`, the one span rule); ApplicationError names the field."""
    documents = {d.docid: d for d in item.documents.all()}
    try:
        rows = rationale_sets_check(
            sets,
            token_counts={docid: d.token_count for docid, d in documents.items()},
            min_highlight=min_highlight,
        )
    except RationaleSetsProblem as problem:
        extra = {"code": problem.code} if problem.code else None
        raise ApplicationError(problem.message, extra=extra) from None
    return [[(documents[docid], start, end) for docid, start, end in spans] for spans in rows]


def label_problem(
    label: str | None, *, labels: list[str], options: list[str], required: bool
) -> tuple[str, str | None] | None:
    """(message, code) for what is wrong with a submitted label, or None. A project that
    takes labels from its annotators requires one; a given label must be one of the
    project's labels (when it lists any) and of the item's options (when it has any)."""
    if label is None:
        if required:
            return (
                "pick a label before submitting: this project takes the label from its annotators",
                "label_required",
            )
        return None
    if labels and label not in labels:
        return f"label {label!r} is not one of the project's labels {labels}", None
    if options and label not in options:
        return f"label {label!r} is not one of this item's options {options}", None
    return None


def _replay(client_uuid: uuid.UUID, worker) -> SubmitResult | None:
    existing = (
        Annotation.objects.select_related("assignment").filter(client_uuid=client_uuid).first()
    )
    if existing is None:
        return None
    if existing.assignment.worker_id != worker.pk:
        raise ConflictError("this submission id belongs to another submission")
    return SubmitResult(annotation=existing, replayed=True)


def annotation_submit(
    *,
    assignment_id: int,
    worker,
    client_uuid: uuid.UUID,
    rationale_sets: list,
    label: str | None = None,
    time_spent_ms: int = 0,
) -> SubmitResult:
    """Store a submission exactly once. A retry with the same client_uuid returns the
    stored annotation (found under the assignment's row lock, or through the unique
    client_uuid when it names another assignment); a submit after the lease expired is
    kept if the quota has room."""
    plain = _shape_checked(rationale_sets) if hot_path_sql.available() else None
    if plain is not None and isinstance(time_spent_ms, int) and time_spent_ms >= 0:
        now = timezone.now()
        annotation = hot_path_sql.submit(
            assignment_id=assignment_id,
            worker_id=worker.pk,
            client_uuid=client_uuid,
            sets=plain,
            label=label,
            time_spent_ms=time_spent_ms,
            now=now,
        )
        if annotation is not None:
            _announce_submission(annotation.pk)
            return SubmitResult(annotation=annotation)
    try:
        with transaction.atomic():
            result = _submit(
                assignment_id, worker, client_uuid, rationale_sets, label, time_spent_ms
            )
            if not result.replayed:
                _announce_submission(result.annotation.pk)
            return result
    except IntegrityError:
        # A concurrent retry of the same submission won the race: answer as a replay.
        replay = _replay(client_uuid, worker)
        if replay is not None:
            return replay
        raise


def _shape_checked(rationale_sets) -> list[list[tuple[str, int, int]]] | None:
    """The sets as rows when their shape is right; None sends the submission to the general
    service, which checks them again against the documents and words the problem.
    Whether the docids and token counts allow the spans is the statement's to check."""
    try:
        return rationale_sets_check(rationale_sets, token_counts=None, min_highlight=None)
    except RationaleSetsProblem:
        return None


def _announce_submission(annotation_id: int) -> None:
    """Tell the other apps (the quality checks) once the submission is committed."""
    transaction.on_commit(
        lambda: annotation_submitted.send(sender=Annotation, annotation_id=annotation_id),
        robust=True,
    )


def _submit(
    assignment_id, worker, client_uuid, rationale_sets, label, time_spent_ms
) -> SubmitResult:
    assignment = _owned(assignment_id, worker, lock=True)
    project = assignment.item.project
    if assignment.status == AssignmentStatus.SUBMITTED:
        stored = Annotation.objects.filter(assignment=assignment).first()
        if stored is not None and stored.client_uuid == client_uuid:
            return SubmitResult(annotation=stored, replayed=True)
        raise ConflictError("this assignment was already submitted with another submission id")
    if assignment.status == AssignmentStatus.SKIPPED:
        raise ConflictError("this assignment was skipped; it cannot be submitted")
    problem = label_problem(
        label,
        labels=project.labels,
        options=assignment.item.options,
        required=project.labels_from_annotators,
    )
    if problem is not None:
        message, code = problem
        raise ApplicationError(message, extra={"code": code} if code else None)
    if not isinstance(time_spent_ms, int) or time_spent_ms < 0:
        raise ApplicationError("time_spent_ms must be a non-negative integer")
    cleaned = rationale_sets_validate(assignment.item, rationale_sets, project.min_highlight)
    now = timezone.now()
    late = assignment.round == 1 and (
        assignment.status == AssignmentStatus.EXPIRED or assignment.lease_expires_at < now
    )
    if assignment.status == AssignmentStatus.EXPIRED:
        # Its slot may have gone to someone else: take a free one, or refuse clearly.
        ItemVariantFill.objects.select_for_update().filter(
            item_id=assignment.item_id, variant_id=assignment.variant_id
        ).first()
        slot = _take_slot(
            assignment.item_id, assignment.variant, assignment.round, project.annotators_per_item
        )
        if slot is None:
            raise ConflictError(
                "your lease on this item expired and other annotators have since completed it; "
                "this submission could not be kept",
                extra={"code": "lease_expired_quota_full"},
            )
        assignment.slot = slot
        fill_change(assignment.item_id, assignment.variant_id, +1)
    assignment.status = AssignmentStatus.SUBMITTED
    assignment.submitted_at = now
    assignment.draft = None
    assignment.save(update_fields=["status", "submitted_at", "slot", "draft"])
    revision_of = None
    if assignment.round > 1:
        revision_of = Annotation.objects.filter(
            assignment__item=assignment.item,
            assignment__worker=worker,
            assignment__round=assignment.round - 1,
        ).first()
    annotation = Annotation.objects.create(
        assignment=assignment,
        client_uuid=client_uuid,
        label=label,
        time_spent_ms=time_spent_ms,
        revision_of=revision_of,
    )
    sets = RationaleSet.objects.bulk_create(
        [RationaleSet(annotation=annotation, position=i) for i in range(len(cleaned))]
    )
    RationaleSpan.objects.bulk_create(
        [
            RationaleSpan(
                rationale_set=rset, document=doc, start_token=start, end_token=end, position=j
            )
            for rset, rows in zip(sets, cleaned, strict=True)
            for j, (doc, start, end) in enumerate(rows)
        ]
    )
    return SubmitResult(annotation=annotation, late=late)


def assignment_revision_create(*, annotation: Annotation) -> Assignment:
    """Send an annotation back to its annotator: the next round of the same (item,
    variant, slot), opened with the previous highlights as the draft. Revisions do not
    expire; the unique (item, worker, round) makes a second one for a round impossible."""
    previous = annotation.assignment
    draft_sets = [
        [[docid, sorted(ids)] for docid, ids in rset["tokens"].items()]
        for rset in annotation_set_tokens(annotation)
    ]
    now = timezone.now()
    return Assignment.objects.create(
        item=previous.item,
        worker=previous.worker,
        variant=previous.variant,
        round=previous.round + 1,
        slot=previous.slot,
        lease_expires_at=now + timedelta(seconds=previous.item.project.lease_seconds),
        draft={"sets": draft_sets or [[]], "current": 0},
        draft_saved_at=now,
    )
