"""Senior review: score an annotation, and when its last review lands, decide once:
accept it, send it back to its annotator for another round, or discard it."""

from __future__ import annotations

from django.db import transaction

from annotate.models import Annotation
from annotate.permissions import project_writable_check
from annotate.services import assignment_revision_create
from config.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from qc.models import Review, ReviewVerdict, SetScore, VerdictOutcome
from qc.review_rules import SCALES, ReviewScores, Thresholds, verdict
from qc.services.item_summaries import item_summaries_refresh
from qc.services.workers import worker_verdict_record


def _score(value, name: str, where: str) -> int:
    low, high = SCALES[name]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ApplicationError(f"{where}.{name}: must be an integer from {low} to {high}")
    return value


@transaction.atomic
def review_submit(
    *,
    annotation_id: int,
    reviewer,
    comprehensiveness: int,
    set_scores: list[dict],
    comment: str = "",
) -> Review:
    """Record one reviewer's scores. The annotation row is locked, so concurrent reviews
    are counted one after the other and the verdict is computed exactly once."""
    annotation = (
        Annotation.objects.select_for_update(of=("self",), no_key=True)
        .select_related("assignment__item__project", "assignment__worker")
        .filter(pk=annotation_id)
        .first()
    )
    if annotation is None or annotation.assignment.item.deleted_at is not None:
        raise NotFoundError("annotation not found")
    project = annotation.assignment.item.project
    project_writable_check(project)  # under /annotations/, out of the permission's reach
    if annotation.assignment.worker_id == reviewer.pk:
        raise PermissionDeniedError("you cannot review your own annotation")
    if ReviewVerdict.objects.filter(annotation=annotation).exists():
        raise ConflictError("this annotation has been decided already", extra={"code": "decided"})
    reviews = list(annotation.reviews.values_list("reviewer_id", flat=True))
    if reviewer.pk in reviews:
        raise ConflictError("you have reviewed this annotation already", extra={"code": "reviewed"})
    if len(reviews) >= project.reviewers_per_annotation:
        raise ConflictError("this annotation has all its reviews", extra={"code": "full"})
    _score(comprehensiveness, "comprehensiveness", "review")
    sets = list(annotation.rationale_sets.order_by("position").values_list("pk", flat=True))
    if not isinstance(set_scores, list):
        raise ApplicationError("set_scores must be a list with one entry per rationale set")
    by_set = {}
    for n, entry in enumerate(set_scores):
        where = f"set_scores[{n}]"
        if not isinstance(entry, dict) or entry.get("rationale_set") not in sets:
            raise ApplicationError(f"{where}.rationale_set: not a rationale set of this annotation")
        if entry["rationale_set"] in by_set:
            raise ApplicationError(f"{where}.rationale_set: scored twice")
        by_set[entry["rationale_set"]] = (
            _score(entry.get("sufficiency"), "sufficiency", where),
            _score(entry.get("compactness"), "compactness", where),
            str(entry.get("comment") or "")[:5000],
        )
    missing = [s for s in sets if s not in by_set]
    if missing:
        raise ApplicationError(
            f"set_scores: score every rationale set; missing {len(missing)} of {len(sets)}"
        )
    review = Review.objects.create(
        annotation=annotation,
        reviewer=reviewer,
        comprehensiveness=comprehensiveness,
        comment=str(comment or "")[:5000],
    )
    SetScore.objects.bulk_create(
        [
            SetScore(
                review=review,
                rationale_set_id=set_id,
                sufficiency=sufficiency,
                compactness=compactness,
                comment=set_comment,
            )
            for set_id, (sufficiency, compactness, set_comment) in by_set.items()
        ]
    )
    if len(reviews) + 1 >= project.reviewers_per_annotation:
        _decide(annotation)
    return review


def _decide(annotation: Annotation) -> ReviewVerdict:
    """Mean over reviewers per property against the project's thresholds. A failure goes
    back to the same annotator as the next round, until the project's last round."""
    project = annotation.assignment.item.project
    set_order = list(annotation.rationale_sets.order_by("position").values_list("pk", flat=True))
    scores = []
    for review in annotation.reviews.prefetch_related("set_scores"):
        per_set = {
            s.rationale_set_id: (s.sufficiency, s.compactness) for s in review.set_scores.all()
        }
        scores.append(
            ReviewScores(
                comprehensiveness=review.comprehensiveness,
                sets=tuple(per_set[pk] for pk in set_order),
            )
        )
    result = verdict(
        scores,
        Thresholds(
            sufficiency=project.sufficiency_threshold,
            compactness=project.compactness_threshold,
            comprehensiveness=project.comprehensiveness_threshold,
        ),
        round_number=annotation.assignment.round,
        max_rounds=project.max_rounds,
    )
    decided = ReviewVerdict.objects.create(
        annotation=annotation,
        outcome=result.outcome,
        means=result.means,
        failed_properties=result.failed,
    )
    worker_verdict_record(
        project=project,
        worker=annotation.assignment.worker,
        accepted=result.outcome == VerdictOutcome.ACCEPTED,
    )
    if result.outcome == VerdictOutcome.REVISE:
        assignment_revision_create(annotation=annotation)
    # The data manager shows the verdict at once, not after its next refresh.
    item_summaries_refresh(project=project, item_ids=[annotation.assignment.item_id])
    return decided
