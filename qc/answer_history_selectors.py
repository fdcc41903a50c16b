"""An annotator's previous answers in a project: the list (newest first, summarised), one
answer with its item and its versions, and whether it is still open to change
(`qc.answer_change_rules`). Reviews are qc's, so these live here and not in annotate."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    Max,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, Substr

from annotate.models import (
    Annotation,
    AnnotationVersion,
    Assignment,
    AssignmentStatus,
    ItemDocument,
    Project,
    RationaleSet,
    RationaleSpan,
)
from config.exceptions import NotFoundError
from qc.answer_change_rules import AnswerFacts, answer_closed_reason
from qc.models import Review

SNIPPET_CHARS = 120


def _submitted_peers() -> Subquery:
    """How many submitted annotations the row's (item, variant, round) holds."""
    return Subquery(
        Assignment.objects.filter(
            item_id=OuterRef("item_id"),
            variant_id=OuterRef("variant_id"),
            round=OuterRef("round"),
            status=AssignmentStatus.SUBMITTED,
        )
        .order_by()
        .values("item_id")
        .annotate(n=Count("pk"))
        .values("n"),
        output_field=IntegerField(),
    )


def _per_annotation(rows, key: str, aggregate, *, default: int = 0):
    """One figure per annotation from `rows` (already filtered to the outer annotation):
    `aggregate` over them, grouped by `key`, or `default` where there are none."""
    return Coalesce(
        Subquery(rows.order_by().values(key).annotate(figure=aggregate).values("figure")),
        Value(default),
    )


def _answer_rows(worker) -> QuerySet[Assignment]:
    annotation = OuterRef("annotation")
    return (
        Assignment.objects.filter(
            worker=worker,
            status=AssignmentStatus.SUBMITTED,
            item__deleted_at__isnull=True,
            annotation__isnull=False,
        )
        .select_related("annotation", "item")
        .annotate(
            reviewed=Exists(Review.objects.filter(annotation=annotation)),
            peers=Coalesce(_submitted_peers(), Value(0)),
            version=_per_annotation(
                AnnotationVersion.objects.filter(annotation=annotation),
                "annotation",
                Max("number"),
                default=1,
            ),
            set_count=_per_annotation(
                RationaleSet.objects.filter(annotation=annotation), "annotation", Count("pk")
            ),
            tokens=_per_annotation(
                RationaleSpan.objects.filter(rationale_set__annotation=annotation),
                "rationale_set__annotation",
                Sum(F("end_token") - F("start_token")),
            ),
            snippet=Subquery(
                ItemDocument.objects.filter(item_id=OuterRef("item_id"))
                .order_by("position")
                .annotate(head=Substr("document__text", 1, SNIPPET_CHARS))
                .values("head")[:1]
            ),
        )
    )


def previous_answers(*, project: Project, worker) -> QuerySet[Assignment]:
    """The worker's submitted answers in the project, newest first (every round's)."""
    return _answer_rows(worker).filter(item__project=project).order_by("-submitted_at", "-pk")


def answer_closed(row: Assignment, *, project: Project, participant: bool) -> str | None:
    """Why the answer of a row from `previous_answers` may no longer change, or None."""
    facts = AnswerFacts(
        participant=participant,
        reviewed=row.reviewed,
        complete=row.peers >= project.annotators_per_item,
        project_archived=project.archived_at is not None,
        item_deleted=row.item.deleted_at is not None,
    )
    return answer_closed_reason(facts, until=project.answers_editable_until)


@dataclass(frozen=True)
class PreviousAnswer:
    row: Assignment
    closed: str | None
    versions: list[AnnotationVersion]
    rationale_sets: list[list[dict]]
    # The worker's next newer and next older answers in the project, for moving through them.
    newer_id: int | None
    older_id: int | None


def annotation_sets_plain(annotation: Annotation) -> list[list[dict]]:
    """The annotation's sets as the submit takes them."""
    spans = (
        RationaleSpan.objects.filter(rationale_set__annotation=annotation)
        .order_by("rationale_set__position", "position")
        .values_list("rationale_set__position", "document__docid", "start_token", "end_token")
    )
    sets: dict[int, list[dict]] = {
        position: []
        for position in RationaleSet.objects.filter(annotation=annotation)
        .order_by("position")
        .values_list("position", flat=True)
    }
    for position, docid, start, end in spans:
        sets[position].append({"docid": docid, "start_token": start, "end_token": end})
    return list(sets.values())


def previous_answer_get(*, worker, assignment_id: int) -> Assignment:
    """One of the worker's answers with its item's documents; anyone else's is not found."""
    row = (
        _answer_rows(worker)
        .filter(pk=assignment_id)
        .select_related("item__project", "variant")
        .prefetch_related("item__item_documents__document")
        .first()
    )
    if row is None:
        raise NotFoundError("no answer of yours with this id")
    return row


def previous_answer_detail(*, row: Assignment, worker, participant: bool) -> PreviousAnswer:
    """The answer's sets, versions, whether it may change, and its neighbours in the list."""
    project = row.item.project
    mine = Assignment.objects.filter(
        worker=worker,
        status=AssignmentStatus.SUBMITTED,
        item__project=project,
        item__deleted_at__isnull=True,
    )
    newer = (
        mine.filter(submitted_at__gt=row.submitted_at)
        .order_by("submitted_at", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    older = (
        mine.filter(submitted_at__lt=row.submitted_at)
        .order_by("-submitted_at", "-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return PreviousAnswer(
        row=row,
        closed=answer_closed(row, project=project, participant=participant),
        versions=list(AnnotationVersion.objects.filter(annotation=row.annotation)),
        rationale_sets=annotation_sets_plain(row.annotation),
        newer_id=newer,
        older_id=older,
    )


def latest_answer_id(*, project: Project, worker) -> int | None:
    """The worker's most recent answer in the project: where the workspace's Previous key
    goes."""
    return previous_answers(project=project, worker=worker).values_list("pk", flat=True).first()
