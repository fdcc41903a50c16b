"""An annotator changes an answer they submitted, while it is still open to them
(`qc.answer_change_rules`). A change is a new version: the annotation row takes the new
answer, so reviewers, the checks and exports read the latest as they always did, and
`AnnotationVersion` keeps every version, the submitted one included."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotate.models import (
    Annotation,
    AnnotationVersion,
    Assignment,
    AssignmentStatus,
    RationaleSet,
    RationaleSpan,
)
from annotate.selectors import annotator_access_get
from annotate.services import rationale_sets_validate
from annotate.services.assignments.submission import label_problem
from config.exceptions import ApplicationError, ConflictError, NotFoundError
from qc.answer_change_rules import (
    AnswerFacts,
    answer_closed_reason,
)
from qc.answer_history_selectors import annotation_sets_plain
from qc.models import AuditAction, AuditEvent, Review
from qc.services.checks import annotation_quality_check
from qc.services.item_summaries import item_summaries_refresh

CLOSED_MESSAGES = {
    "participant": "a study's participants keep the answers they submitted as they were",
    "reviewed": "a reviewer has scored this answer: it can no longer change",
    "complete": "this item has all its annotations: its answers can no longer change",
    "project_archived": "this project is archived: it takes no more annotations",
    "item_deleted": "this item was deleted from the project",
}


@transaction.atomic
def annotation_change(
    *,
    assignment_id: int,
    worker,
    base_version: int,
    rationale_sets: list,
    label: str | None = None,
    time_spent_ms: int = 0,
) -> Annotation:
    """Store a new version of the worker's answer on this assignment. The annotation row
    is locked as `review_submit` locks it, so a change and a review are taken one after
    the other: whichever comes second sees the first (a change after a review is refused;
    a review after a change finds the sets it scored gone). `base_version` is the version
    the worker changed: another change since (another tab) answers 409 `stale`."""
    annotation = (
        Annotation.objects.select_for_update(of=("self",), no_key=True)
        .select_related("assignment__item__project", "assignment__variant")
        .filter(
            assignment_id=assignment_id,
            assignment__worker=worker,
            assignment__status=AssignmentStatus.SUBMITTED,
        )
        .first()
    )
    if annotation is None:
        raise NotFoundError("no answer of yours with this id")
    assignment = annotation.assignment
    item = assignment.item
    project = item.project
    access = annotator_access_get(project=project, user=worker)
    peers = Assignment.objects.filter(
        item_id=item.pk,
        variant_id=assignment.variant_id,
        round=assignment.round,
        status=AssignmentStatus.SUBMITTED,
    ).count()
    facts = AnswerFacts(
        participant=access.participant,
        reviewed=Review.objects.filter(annotation=annotation).exists(),
        complete=peers >= project.annotators_per_item,
        project_archived=project.archived_at is not None,
        item_deleted=item.deleted_at is not None,
    )
    closed = answer_closed_reason(facts, until=project.answers_editable_until)
    if closed is not None:
        raise ConflictError(CLOSED_MESSAGES[closed], extra={"code": closed})
    versions = list(AnnotationVersion.objects.filter(annotation=annotation).order_by("number"))
    current = versions[-1].number if versions else 1
    if base_version != current:
        raise ConflictError(
            f"this answer changed since you opened it (now version {current}); reload it",
            extra={"code": "stale", "version": current},
        )
    problem = label_problem(
        label, labels=project.labels, options=item.options, required=project.labels_from_annotators
    )
    if problem is not None:
        message, code = problem
        raise ApplicationError(message, extra={"code": code} if code else None)
    cleaned = rationale_sets_validate(item, rationale_sets, project.min_highlight)
    now = timezone.now()
    if not versions:
        AnnotationVersion.objects.create(
            annotation=annotation,
            number=1,
            label=annotation.label,
            time_spent_ms=annotation.time_spent_ms,
            rationale_sets=annotation_sets_plain(annotation),
            created_at=annotation.created_at,
        )
    RationaleSet.objects.filter(annotation=annotation).delete()
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
    annotation.label = label
    annotation.time_spent_ms = time_spent_ms
    annotation.save(update_fields=["label", "time_spent_ms"])
    number = current + 1
    AnnotationVersion.objects.create(
        annotation=annotation,
        number=number,
        label=label,
        time_spent_ms=time_spent_ms,
        rationale_sets=annotation_sets_plain(annotation),
        created_at=now,
    )
    AuditEvent.objects.create(
        project=project,
        actor=worker,
        worker=worker,
        action=AuditAction.ANSWER_CHANGE,
        reason=f"changed their answer on item {item.annotation_id_value}",
        details={"annotation": annotation.pk, "item": item.pk, "version": number},
    )
    # The flags, agreement and the data manager's summary follow the new sets now: the
    # periodic sweep checks only submissions never checked.
    annotation_quality_check(annotation_id=annotation.pk)
    item_summaries_refresh(project=project, item_ids=[item.pk])
    annotation.version = number
    return annotation
