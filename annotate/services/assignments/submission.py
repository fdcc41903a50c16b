"""Taking a submission exactly once: the fast statement for the common case, the general
service for everything else, both under the same rules (rationale_metrics.span_rules for
spans, `label_problem` for labels)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    Document,
    DocumentRole,
    Item,
    ItemVariantFill,
    RationaleSet,
    RationaleSpan,
)
from annotate.services import hot_path_sql
from annotate.services.assignments.fill_counters import fill_change
from annotate.services.assignments.leasing import _owned, _take_slot
from annotate.signals import annotation_submitted
from annotate.suggestion_selectors import item_suggestions
from config.exceptions import (
    ApplicationError,
    ConflictError,
)
from rationale_metrics.span_rules import RationaleSetsProblem, rationale_sets_check


@dataclass
class SubmitResult:
    annotation: Annotation
    replayed: bool = False  # a retry of a submit that had already been stored
    late: bool = False  # the lease had expired, and the work was kept


def rationale_sets_validate(
    item: Item, sets: list, min_highlight: int
) -> list[list[tuple[Document, int, int]]]:
    """The sets with their documents, checked against the item's documents
    (`rationale_metrics.span_rules`, the one span rule); ApplicationError names the field.
    A reading-comprehension question takes rationales only where the project allows."""
    links = list(item.item_documents.select_related("document"))
    documents = {link.document.docid: link.document for link in links}
    closed = {}
    if not item.project.question_rationales:
        closed = {
            link.document.docid: "is the question: this project takes no rationales in the question"
            for link in links
            if link.role == DocumentRole.QUESTION
        }
    try:
        rows = rationale_sets_check(
            sets,
            token_counts={docid: d.token_count for docid, d in documents.items()},
            min_highlight=min_highlight,
            closed=closed,
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


def _replay(
    client_uuid: uuid.UUID, worker, assignment_id: int, body: _SubmitBody
) -> SubmitResult | None:
    """The stored submission a retry names by its client UUID; None when there is none.
    A UUID is one submission: sent again for another assignment, or with another body,
    it is refused rather than answered with what was stored."""
    existing = (
        Annotation.objects.select_related("assignment").filter(client_uuid=client_uuid).first()
    )
    if existing is None:
        return None
    if existing.assignment.worker_id != worker.pk:
        raise ConflictError("this submission id belongs to another submission")
    if existing.assignment_id != assignment_id:
        raise ConflictError(
            "this submission id was already used for another item; a new submission needs a new id",
            extra={"code": "client_uuid_reused"},
        )
    _same_body_or_conflict(existing, body)
    return SubmitResult(annotation=existing, replayed=True)


@dataclass(frozen=True)
class _SubmitBody:
    rationale_sets: object
    label: str | None
    time_spent_ms: object
    suggestions_accepted: list[dict] | None = None


def _same_suggestions_accepted(stored: Annotation, sent: list[dict] | None) -> bool:
    """The model suggestions a retry says were accepted are those stored: none claimed
    where none were shown, and the same tokens where some were."""
    if stored.suggestions is None:
        return sent is None
    try:
        claimed = sorted({(a["docid"], a["token"]) for a in sent or []})
    except (KeyError, TypeError):
        return False
    return claimed == sorted((docid, token) for docid, token in stored.suggestions["accepted"])


def _same_body_or_conflict(stored: Annotation, body: _SubmitBody) -> None:
    """A retry must resend what was stored: a different body under the same client UUID is
    a different submission, which would otherwise be answered as stored and lost."""
    spans = (
        RationaleSpan.objects.filter(rationale_set__annotation=stored)
        .order_by("rationale_set__position", "position")
        .values_list("rationale_set__position", "document__docid", "start_token", "end_token")
    )
    stored_sets: dict[int, list] = {}
    for position, docid, start, end in spans:
        stored_sets.setdefault(position, []).append((docid, start, end))
    try:
        sent = rationale_sets_check(body.rationale_sets, token_counts=None, min_highlight=None)
    except RationaleSetsProblem:
        sent = None
    differences = [
        name
        for name, same in (
            ("rationale_sets", sent == [sorted(rows) for _, rows in sorted(stored_sets.items())]),
            ("label", body.label == stored.label),
            ("time_spent_ms", body.time_spent_ms == stored.time_spent_ms),
            (
                "suggestions_accepted",
                _same_suggestions_accepted(stored, body.suggestions_accepted),
            ),
        )
        if not same
    ]
    if differences:
        raise ConflictError(
            "this submission id was already used with a different body "
            f"({', '.join(differences)} differ): a retry must resend the same submission, "
            "and a new one needs a new id",
            extra={"code": "client_uuid_reused", "fields": differences},
        )


def annotation_submit(
    *,
    assignment_id: int,
    worker,
    client_uuid: uuid.UUID,
    rationale_sets: list,
    label: str | None = None,
    time_spent_ms: int = 0,
    suggestions_accepted: list[dict] | None = None,
) -> SubmitResult:
    """Store a submission exactly once. A retry with the same client_uuid returns the
    stored annotation (found under the assignment's row lock, or through the unique
    client_uuid when it names another assignment); a submit after the lease expired is
    kept if the quota has room. Under a variant that shows model suggestions, the
    annotation records them and which of them were accepted (`suggestions_accepted`,
    tokens that must be suggested and highlighted); elsewhere that field is refused."""
    plain = (
        _shape_checked(rationale_sets)
        if hot_path_sql.available() and suggestions_accepted is None
        else None
    )
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
                assignment_id,
                worker,
                client_uuid,
                rationale_sets,
                label,
                time_spent_ms,
                suggestions_accepted,
            )
            if not result.replayed:
                _announce_submission(result.annotation.pk)
            return result
    except IntegrityError:
        # A concurrent retry of the same submission won the race: answer as a replay.
        body = _SubmitBody(rationale_sets, label, time_spent_ms, suggestions_accepted)
        replay = _replay(client_uuid, worker, assignment_id, body)
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


def _taken_out_of_work_check(assignment: Assignment) -> None:
    """Say so when the assignment ended because its item was deleted or its project
    archived (read afresh: the rows loaded with the lock may predate that change)."""
    item = Item.all_objects.select_related("project").get(pk=assignment.item_id)
    if item.deleted_at is not None:
        raise ConflictError(
            "this item was deleted from the project while you worked on it; your work on it "
            "could not be kept. Ask for the next item.",
            extra={"code": "item_deleted"},
        )
    if item.project.archived_at is not None:
        raise ConflictError(
            "this project is archived: it takes no more annotations",
            extra={"code": "project_archived"},
        )


def _suggestions_record(
    assignment: Assignment, cleaned: list, accepted: list[dict] | None
) -> dict | None:
    """What the annotation records of the model suggestions its variant showed: None when
    it showed none (and then nothing may be claimed accepted)."""
    settings = assignment.variant.suggestions
    if not settings:
        if accepted is not None:
            raise ApplicationError(
                "suggestions_accepted: this item was shown no model suggestions",
                extra={"code": "no_suggestions", "field": "suggestions_accepted"},
            )
        return None
    suggested = item_suggestions(variant=assignment.variant, item=assignment.item) or []
    offered = {(docid, token) for docid, token in suggested}
    highlighted = {
        (document.docid, token)
        for rows in cleaned
        for document, start, end in rows
        for token in range(start, end)
    }
    taken = sorted({(a["docid"], a["token"]) for a in accepted or []})
    for docid, token in taken:
        if (docid, token) not in offered:
            raise ApplicationError(
                f"suggestions_accepted: token {token} of {docid!r} was not suggested",
                extra={"code": "not_suggested", "field": "suggestions_accepted"},
            )
        if (docid, token) not in highlighted:
            raise ApplicationError(
                f"suggestions_accepted: token {token} of {docid!r} is accepted but not "
                "highlighted in any set",
                extra={"code": "accepted_not_highlighted", "field": "suggestions_accepted"},
            )
    return {
        "run": settings["run"],
        "k": settings["k"],
        "suggested": [list(t) for t in sorted(offered)],
        "accepted": [list(t) for t in taken],
    }


def _submit(
    assignment_id,
    worker,
    client_uuid,
    rationale_sets,
    label,
    time_spent_ms,
    suggestions_accepted=None,
) -> SubmitResult:
    assignment = _owned(assignment_id, worker, lock=True)
    project = assignment.item.project
    if assignment.status == AssignmentStatus.SUBMITTED:
        stored = Annotation.objects.filter(assignment=assignment).first()
        if stored is not None and stored.client_uuid == client_uuid:
            _same_body_or_conflict(
                stored,
                _SubmitBody(rationale_sets, label, time_spent_ms, suggestions_accepted),
            )
            return SubmitResult(annotation=stored, replayed=True)
        raise ConflictError("this assignment was already submitted with another submission id")
    if assignment.status == AssignmentStatus.SKIPPED:
        _taken_out_of_work_check(assignment)
        raise ConflictError(
            "this assignment was skipped or released (its worker may no longer work on this "
            "project); it cannot be submitted"
        )
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
    suggestions = _suggestions_record(assignment, cleaned, suggestions_accepted)
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
        suggestions=suggestions,
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
