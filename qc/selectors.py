"""Reads for quality control: the reviewer queue and what a reviewer sees, the feedback a
revising annotator sees, the pipeline counts, workers, candidates and the audit trail."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import timedelta

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    Item,
    ItemDocument,
    Project,
    RationaleSpan,
    item_not_deleted,
)
from annotate.selectors import annotation_set_tokens
from annotate.serializers import item_for_annotator
from annotate.task_types import text_names_shown
from annotate.variant_presets import variant_display_text
from config.exceptions import ApplicationError, NotFoundError
from qc.models import (
    AuditEvent,
    GoldItem,
    ProjectWorker,
    QualificationStatus,
    QualityFlag,
    QualityPolicy,
    Review,
    ReviewVerdict,
    VerdictOutcome,
    WorkerProfile,
    WorkerRecord,
)
from qc.review_rules import highlight_diff


def _review_queue(project: Project, reviewer):
    """What this reviewer may score: undecided, short of reviews, not their own and not
    reviewed by them. Those already under review come first, then the oldest."""
    return (
        Annotation.objects.filter(
            item_not_deleted("assignment__item"),
            assignment__item__project=project,
            assignment__status=AssignmentStatus.SUBMITTED,
            verdict__isnull=True,
        )
        .exclude(assignment__worker=reviewer)
        .exclude(reviews__reviewer=reviewer)
        .annotate(reviews_done=Count("reviews"))
        .filter(reviews_done__lt=project.reviewers_per_annotation)
        .order_by("-reviews_done", "pk")
    )


REVIEW_QUEUE_SORTS = {
    # Those already under review first, then the oldest: the order "next" serves.
    "queue": ("-reviews_done", "pk"),
    "oldest": ("created_at", "pk"),
    "newest": ("-created_at", "-pk"),
    "round": ("-assignment__round", "created_at", "pk"),
    "most_reviews": ("-reviews_done", "created_at", "pk"),
}


def review_queue_filtered(
    *,
    project: Project,
    reviewer,
    variant: int | None = None,
    annotator: int | None = None,
    round: int | None = None,
    flag: str | None = None,
    waited_hours: int | None = None,
    sort: str = "queue",
    now=None,
):
    """The reviewer's queue narrowed by variant, annotator (by id: the queue stays blind),
    round, quality flag ("any", "none" or a kind) and time waited since submission, in one
    of REVIEW_QUEUE_SORTS' orders, as rows for a page."""
    queue = _review_queue(project, reviewer)
    if variant is not None:
        queue = queue.filter(assignment__variant_id=variant)
    if annotator is not None:
        queue = queue.filter(assignment__worker_id=annotator)
    if round is not None:
        queue = queue.filter(assignment__round=round)
    if flag == "any":
        queue = queue.filter(Exists(QualityFlag.objects.filter(annotation=OuterRef("pk"))))
    elif flag == "none":
        queue = queue.filter(~Exists(QualityFlag.objects.filter(annotation=OuterRef("pk"))))
    elif flag:
        queue = queue.filter(
            Exists(QualityFlag.objects.filter(annotation=OuterRef("pk"), kind=flag))
        )
    if waited_hours is not None:
        queue = queue.filter(
            created_at__lte=(now or timezone.now()) - timedelta(hours=waited_hours)
        )
    return queue.order_by(*REVIEW_QUEUE_SORTS[sort]).values(
        "pk",
        "assignment__item__annotation_id",
        "assignment__round",
        "assignment__variant_id",
        "assignment__variant__name",
        "assignment__worker_id",
        "created_at",
        "reviews_done",
    )


def review_queue_next(*, project: Project, reviewer) -> Annotation | None:
    return _review_queue(project, reviewer).first()


def review_queue_size(*, project: Project, reviewer) -> int:
    return _review_queue(project, reviewer).count()


def annotation_project_id(*, annotation_id: int) -> int:
    project_id = (
        Annotation.objects.filter(pk=annotation_id)
        .values_list("assignment__item__project_id", flat=True)
        .first()
    )
    if project_id is None:
        raise NotFoundError("annotation not found")
    return project_id


def _union(sets: list[dict]) -> dict[str, set[int]]:
    union: dict[str, set[int]] = defaultdict(set)
    for rset in sets:
        for docid, ids in rset["tokens"].items():
            union[docid].update(ids)
    return union


def _reviews_of(annotation: Annotation) -> list[dict]:
    """Reviews with reviewers named by order only: the annotator never learns who."""
    positions = dict(annotation.rationale_sets.values_list("pk", "position"))
    return [
        {
            "reviewer": f"Reviewer {chr(ord('A') + n)}",
            "comprehensiveness": review.comprehensiveness,
            "comment": review.comment,
            "sets": sorted(
                (
                    {
                        "position": positions[s.rationale_set_id],
                        "sufficiency": s.sufficiency,
                        "compactness": s.compactness,
                        "comment": s.comment,
                    }
                    for s in review.set_scores.all()
                ),
                key=lambda s: s["position"],
            ),
        }
        for n, review in enumerate(
            Review.objects.filter(annotation=annotation).prefetch_related("set_scores")
        )
    ]


def _verdict_of(annotation: Annotation) -> dict | None:
    verdict = ReviewVerdict.objects.filter(annotation=annotation).first()
    if verdict is None:
        return None
    return {
        "outcome": verdict.outcome,
        "means": verdict.means,
        "failed": verdict.failed_properties,
    }


def _chain(annotation: Annotation) -> list[Annotation]:
    """The annotation's earlier rounds, oldest first."""
    chain = []
    current = annotation.revision_of
    while current is not None:
        chain.append(current)
        current = current.revision_of
    return chain[::-1]


def review_detail(*, annotation_id: int, reviewer) -> dict:
    """What a reviewer sees: the item, the highlights (read-only), earlier rounds with
    their scores and the change between rounds. Nothing names the annotator."""
    annotation = (
        Annotation.objects.select_related("assignment__item__project", "assignment__variant")
        .prefetch_related("assignment__item__item_documents__document")
        .filter(item_not_deleted("assignment__item"), pk=annotation_id)
        .first()
    )
    if annotation is None:
        raise NotFoundError("annotation not found")
    assignment = annotation.assignment
    project = assignment.item.project
    sets = annotation_set_tokens(annotation)
    history = [
        {
            "round": earlier.assignment.round,
            "sets": annotation_set_tokens(earlier),
            "verdict": _verdict_of(earlier),
            "reviews": _reviews_of(earlier),
        }
        for earlier in _chain(annotation)
    ]
    reviewers = list(annotation.reviews.values_list("reviewer_id", flat=True))
    return {
        "id": annotation.pk,
        "project": {
            "id": project.id,
            "name": project.name,
            "task_type": project.task_type,
            "language": project.language,
            "text_names": text_names_shown(project.task_type, project.text_names),
        },
        "round": assignment.round,
        "max_rounds": project.max_rounds,
        "reviews_done": len(reviewers),
        "reviews_needed": project.reviewers_per_annotation,
        "reviewed_by_you": reviewer.pk in reviewers,
        "verdict": _verdict_of(annotation),
        "label": annotation.label,
        "item": item_for_annotator(assignment.item),
        "variant": {
            "name": assignment.variant.name,
            "version": assignment.variant.version,
            "text": variant_display_text(assignment.variant.text, multi_set=project.multi_set_mode),
        },
        "sets": sets,
        "history": history,
        # The item's other annotations (the newest of each annotator's chain), by id: for
        # moving between them to compare. Ids only, so the review stays blind.
        "same_item": list(
            Annotation.objects.filter(
                assignment__item_id=assignment.item_id,
                assignment__status=AssignmentStatus.SUBMITTED,
                revisions__isnull=True,
            )
            .order_by("pk")
            .values_list("pk", flat=True)
        ),
        "diff": highlight_diff(_union(history[-1]["sets"]), _union(sets)) if history else None,
        "thresholds": _thresholds(project),
    }


def _thresholds(project: Project) -> dict:
    return {
        "sufficiency": project.sufficiency_threshold,
        "compactness": project.compactness_threshold,
        "comprehensiveness": project.comprehensiveness_threshold,
    }


def revision_feedback(*, assignment_id: int, worker) -> dict:
    """For a revision assignment: why the previous round failed, with the reviewers'
    scores and comments (anonymous) and the previous highlights."""
    assignment = (
        Assignment.objects.select_related("item__project")
        .filter(pk=assignment_id, worker=worker)
        .first()
    )
    if assignment is None:
        raise NotFoundError("assignment not found")
    if assignment.round == 1:
        return {"round": 1, "revision": False}
    previous = (
        Annotation.objects.filter(
            assignment__item=assignment.item,
            assignment__worker=worker,
            assignment__round=assignment.round - 1,
        )
        .select_related("assignment")
        .first()
    )
    if previous is None:
        raise NotFoundError("the earlier round of this revision is missing")
    return {
        "round": assignment.round,
        "max_rounds": assignment.item.project.max_rounds,
        "revision": True,
        "verdict": _verdict_of(previous),
        "thresholds": _thresholds(assignment.item.project),
        "reviews": _reviews_of(previous),
        "previous_sets": annotation_set_tokens(previous),
    }


# ---------------------------------------------------------------- admin views

PIPELINE_STAGES = ("submitted", "in_review", "revising", "accepted", "discarded")


def pipeline_counts(*, project: Project) -> dict:
    """Each annotation chain counted once, at its newest round: submitted (no review
    yet), in review, revising (sent back, not resubmitted), accepted, discarded."""
    newest = (
        Annotation.objects.filter(
            item_not_deleted("assignment__item"),
            assignment__item__project=project,
            revisions__isnull=True,
        )
        .annotate(reviews_done=Count("reviews"))
        .values_list("verdict__outcome", "reviews_done", "assignment__round")
    )
    counts = dict.fromkeys(PIPELINE_STAGES, 0)
    by_round: dict[int, Counter] = defaultdict(Counter)
    for outcome, reviews_done, round_number in newest:
        if outcome == VerdictOutcome.ACCEPTED:
            stage = "accepted"
        elif outcome == VerdictOutcome.DISCARDED:
            stage = "discarded"
        elif outcome == VerdictOutcome.REVISE:
            stage = "revising"
        else:
            stage = "in_review" if reviews_done else "submitted"
        counts[stage] += 1
        by_round[round_number][stage] += 1
    flags = dict(
        QualityFlag.objects.filter(
            item_not_deleted("annotation__assignment__item"),
            annotation__assignment__item__project=project,
        )
        .values_list("kind")
        .annotate(n=Count("pk"))
        .values_list("kind", "n")
    )
    return {
        "stages": counts,
        "by_round": {str(r): dict(c) for r, c in sorted(by_round.items())},
        "flags": flags,
        "reviewers_per_annotation": project.reviewers_per_annotation,
        "max_rounds": project.max_rounds,
        "thresholds": _thresholds(project),
    }


def worker_table(*, project: Project) -> list[dict]:
    flags: dict[int, Counter] = defaultdict(Counter)
    for worker_id, kind, n in (
        QualityFlag.objects.filter(
            item_not_deleted("annotation__assignment__item"),
            annotation__assignment__item__project=project,
        )
        .values_list("annotation__assignment__worker_id", "kind")
        .annotate(n=Count("pk"))
    ):
        flags[worker_id][kind] = n
    outcomes: dict[int, Counter] = defaultdict(Counter)
    for worker_id, outcome, n in (
        ReviewVerdict.objects.filter(
            item_not_deleted("annotation__assignment__item"),
            annotation__assignment__item__project=project,
        )
        .values_list("annotation__assignment__worker_id", "outcome")
        .annotate(n=Count("pk"))
    ):
        outcomes[worker_id][outcome] = n
    # This project's records only: what its rules read, never another project's import.
    records = {r.profile_id: r for r in WorkerRecord.objects.filter(project=project)}
    rows = []
    for standing in (
        ProjectWorker.objects.filter(project=project)
        .select_related("worker__worker_profile")
        .order_by("worker__username")
    ):
        profile = getattr(standing.worker, "worker_profile", None)
        record = None if profile is None else records.get(profile.pk) or WorkerRecord()
        rows.append(
            {
                "worker_id": standing.worker_id,
                "username": standing.worker.username,
                "status": standing.status,
                "reason": standing.reason,
                "warnings": standing.warnings,
                "aggregates": standing.aggregates,
                "flags": dict(flags[standing.worker_id]),
                "verdicts": dict(outcomes[standing.worker_id]),
                "profile": None
                if profile is None
                else {
                    "external_id": profile.external_id,
                    "approval_rate": record.approval_rate,
                    "approved_count": record.approved_count,
                    "locale": record.locale,
                    "is_master": record.is_master,
                    "status": profile.status,
                },
            }
        )
    return rows


def worker_record_get(*, project: Project, profile: WorkerProfile) -> WorkerRecord:
    """The project's record of the worker; an unsaved empty one (no history) when the
    project never imported or reviewed them. Never another project's."""
    # get(), not first(): one row by a unique key, without an ORDER BY compiled for it.
    try:
        return WorkerRecord.objects.get(project=project, profile=profile)
    except WorkerRecord.DoesNotExist:
        return WorkerRecord(project=project, profile=profile)


def candidate_list(*, project: Project) -> list[dict]:
    """The manual selection queue: everyone not yet qualified, with their test answers,
    times, flags and F1 against the gold (admins may see the gold)."""
    gold_tokens: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for gold_id, docid, start, end in RationaleSpan.objects.filter(
        rationale_set__reference_item__gold__item__project=project
    ).values_list(
        "rationale_set__reference_item__gold__pk", "document__docid", "start_token", "end_token"
    ):
        gold_tokens[gold_id][docid].extend(range(start, end))
    standings = (
        ProjectWorker.objects.filter(project=project)
        .exclude(status__in=[QualificationStatus.QUALIFIED, QualificationStatus.BLOCKED])
        .select_related("worker")
        .prefetch_related(
            "attempts__answers__gold_item__item__item_documents__document",
        )
        .order_by("status", "updated_at")
    )
    documents: dict[int, list[dict]] = {}  # per gold item, so the admin sees words, not ids

    def documents_of(gold_item) -> list[dict]:
        if gold_item.pk not in documents:
            documents[gold_item.pk] = item_for_annotator(gold_item.item, hide_gold=True)[
                "documents"
            ]
        return documents[gold_item.pk]

    return [
        {
            "worker_id": s.worker_id,
            "username": s.worker.username,
            "status": s.status,
            "reason": s.reason,
            "attempts": [
                {
                    "number": a.number,
                    "mean_f1": a.mean_f1,
                    "passed": a.passed,
                    "finished_at": a.finished_at,
                    "answers": [
                        {
                            "item": answer.gold_item.item.annotation_id,
                            "f1": answer.f1,
                            "seconds": answer.time_spent_ms / 1000,
                            "flags": answer.flags,
                            "tokens": answer.tokens,
                            "gold": {
                                k: sorted(v) for k, v in gold_tokens[answer.gold_item_id].items()
                            },
                            "documents": documents_of(answer.gold_item),
                        }
                        for answer in a.answers.all()
                    ],
                }
                for a in s.attempts.all()
            ],
        }
        for s in standings
    ]


def attempt_before_failed(*, attempt, pass_mark: float, max_attempts: int) -> dict | None:
    """The worker's failed attempt before this one, in numbers to tell them before they
    begin again: its mean token F1, the pass mark and the attempts left counting this one."""
    previous = (
        attempt.project_worker.attempts.filter(number__lt=attempt.number, passed=False)
        .order_by("-number")
        .first()
    )
    if previous is None:
        return None
    return {
        "number": previous.number,
        "mean_f1": previous.mean_f1,
        "pass_mark": pass_mark,
        "attempts_left": max(max_attempts - attempt.number + 1, 0),
    }


GOLD_SEARCH_MAX_LENGTH = 200


def gold_item_choices(*, project: Project, search: str = "") -> QuerySet[Item]:
    """The project's items an admin may pick as gold, found by id or by words of their
    text: each says whether it has a reference rationale to score against, was served as
    ordinary work, and is gold already (the service refuses the first two)."""
    if "\x00" in search:  # PostgreSQL cannot compare text holding NUL
        raise ApplicationError("search: must not contain a NUL character")
    items = Item.objects.filter(project=project)
    search = search.strip()
    if search:
        in_text = ItemDocument.objects.filter(item=OuterRef("pk"), document__text__icontains=search)
        items = items.filter(Q(annotation_id__icontains=search) | Exists(in_text))
    return (
        items.annotate(
            has_reference=Exists(
                RationaleSpan.objects.filter(rationale_set__reference_item=OuterRef("pk"))
            ),
            served=Exists(Assignment.objects.filter(item=OuterRef("pk"))),
            is_gold=Exists(GoldItem.objects.filter(item=OuterRef("pk"))),
        )
        .prefetch_related("item_documents__document")
        .order_by("-is_gold", "-has_reference", "served", "id")
    )


def gold_item_ids(*, project: Project) -> list[str]:
    return list(
        GoldItem.objects.filter(item_not_deleted(), item__project=project).values_list(
            "item__annotation_id", flat=True
        )
    )


def audit_list(*, project: Project, limit: int = 200) -> list[dict]:
    return [
        {
            "at": e.created_at,
            "action": e.action,
            "worker": e.worker.username if e.worker else "",
            "actor": e.actor.username if e.actor else "platform",
            "reason": e.reason,
        }
        for e in AuditEvent.objects.filter(project=project).select_related("worker", "actor")[
            :limit
        ]
    ]


# ---------------------------------------------------------------- for datasheets


def quality_summary(*, project: Project) -> dict:
    """How the project controlled quality, for an export's datasheet: qualification rules
    and test, the workers' standings, review outcomes per round, and flag counts."""
    policy = QualityPolicy.objects.filter(project=project).first() or QualityPolicy(project=project)
    rules = {
        "min_approval_rate_percent": policy.min_approval_rate,
        "max_approval_rate_percent": policy.max_approval_rate,
        "min_approved_count": policy.min_approved_count,
        "max_approved_count": policy.max_approved_count,
        "allowed_locales": policy.allowed_locales or "any",
        "masters_only": policy.masters_only,
    }
    standings = dict(
        ProjectWorker.objects.filter(project=project)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    verdicts: dict[str, dict[str, int]] = defaultdict(dict)
    for round_number, outcome, n in (
        ReviewVerdict.objects.filter(
            item_not_deleted("annotation__assignment__item"),
            annotation__assignment__item__project=project,
        )
        .values_list("annotation__assignment__round", "outcome")
        .annotate(n=Count("pk"))
        .order_by("annotation__assignment__round")
    ):
        verdicts[str(round_number)][outcome] = n
    return {
        "qualification": {
            "rules": rules,
            "test": {
                "enabled": policy.test_enabled,
                "gold_items": GoldItem.objects.filter(
                    item_not_deleted(), item__project=project
                ).count(),
                "pass_mark_token_f1": policy.test_pass_f1,
                "max_attempts": policy.test_max_attempts,
                "instructions": policy.test_instructions,
            },
            "manual_selection": policy.manual_selection,
            "workers_by_standing": standings,
            "automatic_blocking": policy.auto_block,
        },
        "review": {
            "reviews": Review.objects.filter(
                item_not_deleted("annotation__assignment__item"),
                annotation__assignment__item__project=project,
            ).count(),
            "verdicts_per_round": dict(verdicts),
            "discarded": sum(v.get(VerdictOutcome.DISCARDED, 0) for v in verdicts.values()),
        },
        "flag_thresholds": {
            "min_seconds": policy.min_seconds,
            "max_stopword_share": policy.max_stopword_share,
            "first_k_tokens": policy.first_k_tokens,
            "min_coannotator_kappa": policy.min_coannotator_kappa,
        },
    }


def worker_cohorts(*, project: Project, worker_ids) -> dict[int, str]:
    return dict(
        ProjectWorker.objects.filter(project=project, worker_id__in=list(worker_ids)).values_list(
            "worker_id", "cohort"
        )
    )


def flag_counts(*, annotation_ids) -> dict[str, int]:
    return dict(
        QualityFlag.objects.filter(annotation_id__in=list(annotation_ids))
        .values_list("kind")
        .annotate(n=Count("pk"))
        .values_list("kind", "n")
    )


def annotations_without_checks(*, limit: int = 10_000, after_id: int = 0) -> list[int]:
    """Submitted annotations whose automatic checks have not run (yet, or ever: the broker
    was down when they were submitted, or a worker died), oldest first, from `after_id`."""
    return list(
        Annotation.objects.filter(pk__gt=after_id, submission_check__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
