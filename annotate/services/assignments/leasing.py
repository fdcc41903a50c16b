"""Handing work out and taking it back: "next", leases and their expiry, skips, drafts,
and the revision round an annotation is sent back as."""

from __future__ import annotations

import time
from collections import Counter
from datetime import timedelta

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, Exists, ExpressionWrapper, F, OuterRef, Q, Subquery
from django.utils import timezone

from annotate.gates import work_refusal
from annotate.models import (
    LIVE_ASSIGNMENT,
    Annotation,
    Assignment,
    AssignmentStatus,
    InstructionVariant,
    ItemVariantFill,
    Project,
    ProjectMembership,
    Role,
    item_not_deleted,
)
from annotate.participants import consent_refusal
from annotate.selectors import annotation_set_tokens, assignment_with_item_documents
from annotate.services import hot_path_sql
from annotate.services.assignments.allocation import _variant_for_mixing, _variant_for_worker
from annotate.services.assignments.fill_counters import _live_counts, fill_change, fill_rows_sync
from config.exceptions import (
    ApplicationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
)


def _skip_locked() -> dict:
    return {"skip_locked": True} if connection.features.has_select_for_update_skip_locked else {}


def _leases_end(leased: list[tuple[int, int, int, int]], status: str) -> int:
    """Give locked leases (pk, item, variant, round) `status`, and their first rounds'
    slots back to their (item, variant) fills. Returns how many there were."""
    if not leased:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, *_ in leased]).update(status=status)
    first_rounds = Counter((item, variant) for _, item, variant, round_ in leased if round_ == 1)
    # In a fixed order, so two transactions changing fills at once cannot deadlock.
    for (item_id, variant_id), n in sorted(first_rounds.items()):
        fill_change(item_id, variant_id, -n)
    return len(leased)


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
        .values_list("pk", "item_id", "variant_id", "round")
    )
    return _leases_end(expired, AssignmentStatus.EXPIRED)


def _next_fill(project: Project, worker, variant: InstructionVariant) -> ItemVariantFill | None:
    """The (item, variant) to hand out: not full, not held out, never given to this
    worker; fullest first, so complete items accumulate. Locked, skipping rows others hold."""
    mine = Assignment.objects.filter(item=OuterRef("item_id"), worker=worker)
    return (
        ItemVariantFill.objects.filter(
            item_not_deleted(),
            variant=variant,
            live__lt=project.annotators_per_item,
            item__held_out=False,
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
    """The worker's current lease (a revision owed first), or a new one, with its item and
    documents attached; None when nothing is left for them. Raises PermissionDeniedError
    when a gate refuses them; the gate runs in its own transaction, so what it records
    stands even when it refuses."""
    if project.archived_at is not None:
        raise PermissionDeniedError(
            "This project is archived: it takes no more annotations. Your other projects are "
            "on the home page.",
            extra={"code": "project_archived"},
        )
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


_REVISION_FIRST = ExpressionWrapper(Q(round__gt=1), output_field=BooleanField())


@transaction.atomic
def _lease_next(project: Project, worker, variant: InstructionVariant) -> Assignment | None:
    now = timezone.now()
    swept = _expiry_sweep_due(project)
    if swept:
        leases_expire(project=project)
    # A revision owed is served before any first-round lease, however old that lease:
    # the reviewers are waiting on it, and it never expires to free its slot.
    current = (
        Assignment.objects.filter(
            Q(lease_expires_at__gte=now) | Q(round__gt=1),
            item__project=project,
            worker=worker,
            status=AssignmentStatus.LEASED,
        )
        .order_by(_REVISION_FIRST.desc(), "created_at", "pk")
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


def assignment_lease_for_worker(
    *, project: Project, item_id: int, worker, lease_until
) -> Assignment | None:
    """A first-round lease of an item made for a named worker (the data manager's "assign
    to annotators"), under their variant, open until `lease_until`. Their next "next"
    serves it as their open lease, oldest first, so the annotators' path is unchanged.
    None when they have had the item already or its quota under their variant is full.
    The fill row is locked, so "next" (which skips locked fills) cannot take the slot."""
    variant = _variant_for_worker(project, worker)
    if Assignment.objects.filter(item_id=item_id, worker=worker).exists():
        return None
    ItemVariantFill.objects.select_for_update().filter(item_id=item_id, variant=variant).first()
    slot = _take_slot(item_id, variant, 1, project.annotators_per_item)
    if slot is None:
        return None
    try:
        with transaction.atomic():
            assignment = Assignment.objects.create(
                item_id=item_id,
                worker=worker,
                variant=variant,
                round=1,
                slot=slot,
                lease_expires_at=lease_until,
            )
    except IntegrityError:
        return None
    fill_change(item_id, variant.pk, +1)
    _variant_freeze(variant)
    return assignment


def _owned(assignment_id: int, worker, *, lock: bool = False) -> Assignment:
    """The worker's assignment, provided their consent lets them work (read in the same
    query); else ConsentRequiredError."""
    consent = ProjectMembership.objects.filter(
        project=OuterRef("item__project_id"), user=worker, role=Role.ANNOTATOR
    ).values("consent")[:1]
    queryset = Assignment.objects.select_related("item__project", "variant").annotate(
        member_consent=Subquery(consent)
    )
    if lock:
        queryset = queryset.select_for_update(of=("self",))
    assignment = queryset.filter(pk=assignment_id, worker=worker).first()
    if assignment is None:
        raise NotFoundError("assignment not found")
    refusal = consent_refusal(assignment.member_consent)
    if refusal is not None:
        raise refusal
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


def worker_leases_release(*, project: Project | None, worker) -> int:
    """End every open lease of `worker` in `project` (in every project when None), first
    rounds and revisions, as a skip would: their slots go back to the others at once, and
    nothing can be drafted or submitted on them afterwards. For a worker who may no longer
    work there (blocked); the caller holds the transaction. Returns how many were released."""
    open_leases = Assignment.objects.filter(worker=worker, status=AssignmentStatus.LEASED)
    if project is not None:
        open_leases = open_leases.filter(item__project=project)
    leased = list(
        open_leases.select_for_update(of=("self",))
        .order_by("pk")
        .values_list("pk", "item_id", "variant_id", "round")
    )
    return _leases_end(leased, AssignmentStatus.SKIPPED)


def item_leases_end(*, item_ids: list[int], withdrawn_at=None) -> int:
    """End every unsubmitted assignment on these items: open leases (first rounds and
    revisions) and expired ones, which a late submit could still take. The items' fill rows
    are locked first, so a "next" running now either leased before (and its lease is ended
    here) or finds the rows held; each assignment row is locked, so a submit in progress
    either committed before (its annotation stays, with the item) or finds it ended. For
    items taken out of work (deleted, or their project archived); the caller holds the
    transaction. A deletion gives its instant as `withdrawn_at`, recorded on the ended
    assignments so that its restore gives them back (item_leases_give_back). Returns how
    many leases were open."""
    if not item_ids:
        return 0
    list(
        ItemVariantFill.objects.filter(item_id__in=item_ids)
        .select_for_update()
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    unsubmitted = list(
        Assignment.objects.filter(
            item_id__in=item_ids,
            status__in=[AssignmentStatus.LEASED, AssignmentStatus.EXPIRED],
        )
        .select_for_update(of=("self",))
        .order_by("pk")
        .values_list("pk", "item_id", "variant_id", "round", "status")
    )
    leased = [row[:4] for row in unsubmitted if row[4] == AssignmentStatus.LEASED]
    expired = [row[0] for row in unsubmitted if row[4] == AssignmentStatus.EXPIRED]
    Assignment.objects.filter(pk__in=expired).update(status=AssignmentStatus.SKIPPED)
    if withdrawn_at is not None:
        Assignment.objects.filter(pk__in=[row[0] for row in unsubmitted]).update(
            withdrawn_at=withdrawn_at
        )
    return _leases_end(leased, AssignmentStatus.SKIPPED)


def item_leases_give_back(
    *, project: Project, item_ids: list[int], kept_ended: frozenset[int] = frozenset()
) -> tuple[int, int]:
    """Give back the assignments the deletion of these (still deleted) items ended, to the
    annotators who held them: a revision, or a first round whose lease runs still, is
    leased again with its draft; a first round whose lease ran out meanwhile is expired, as
    the expiry sweep would have made it, so its slot is free for the pool (and a late
    submit may still take it, as any expired lease). An annotator who is no longer one of
    the project's, one of `kept_ended` (blocked meanwhile: the caller, in qc, knows who),
    or whose slot another assignment took meanwhile, keeps it ended. Call it
    before the items' fill rows are made again (they count the live assignments); the
    caller holds the transaction. Returns (leased again, expired)."""
    if not item_ids:
        return 0, 0
    withdrawn = list(
        Assignment.objects.filter(
            item_id__in=item_ids,
            status=AssignmentStatus.SKIPPED,
            withdrawn_at__isnull=False,
            withdrawn_at=F("item__deleted_at"),
        )
        .select_for_update(of=("self",))
        .order_by("pk")
        .values_list(
            "pk", "item_id", "worker_id", "variant_id", "round", "slot", "lease_expires_at"
        )
    )
    if not withdrawn:
        return 0, 0
    annotators = set(
        ProjectMembership.objects.filter(project=project, role=Role.ANNOTATOR).values_list(
            "user_id", flat=True
        )
    )
    taken = set(
        Assignment.objects.filter(
            LIVE_ASSIGNMENT, item_id__in={row[1] for row in withdrawn}
        ).values_list("item_id", "variant_id", "round", "slot")
    )
    now = timezone.now()
    leased, expired = [], []
    for pk, item_id, worker_id, variant_id, round_, slot, expires in withdrawn:
        if worker_id not in annotators or worker_id in kept_ended:
            continue
        if round_ == 1 and expires < now:
            expired.append(pk)
        elif (item_id, variant_id, round_, slot) not in taken:
            leased.append(pk)
    Assignment.objects.filter(pk__in=leased).update(status=AssignmentStatus.LEASED)
    Assignment.objects.filter(pk__in=expired).update(status=AssignmentStatus.EXPIRED)
    Assignment.objects.filter(pk__in=[row[0] for row in withdrawn]).update(withdrawn_at=None)
    return len(leased), len(expired)


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
