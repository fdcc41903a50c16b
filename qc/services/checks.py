"""The automatic checks on every submission: flags on the annotation, agreement with its
co-annotators, the worker's aggregates, and blocking when a limit is crossed.

Runs after the submit commits (a Celery task, eager without a broker), so the annotator's
submit stays fast; every step is idempotent, so a retried task changes nothing.
"""

from __future__ import annotations

import numpy as np
from django.db import transaction

from annotate.models import Annotation, AssignmentStatus, RationaleSpan
from annotate.selectors import item_token_texts
from annotate.tokenization import stop_words as language_stop_words
from qc.flag_rules import (
    EMPTY,
    FIRST_TOKENS,
    LOW_AGREEMENT,
    STOPWORDS,
    TOO_FAST,
    SubmissionFigures,
    low_agreement_flag,
    stopword_share,
    submission_flags,
    worker_aggregates,
    worker_assessment,
)
from qc.models import ProjectWorker, QualificationStatus, QualityFlag, SubmissionCheck
from qc.services.qualification import quality_policy_get
from qc.services.workers import project_worker_block
from rationale_metrics.agreement import against_majority, majority_vote, mean_pairwise_kappa

SUBMISSION_FLAG_KINDS = (EMPTY, TOO_FAST, STOPWORDS, FIRST_TOKENS)
# Per-worker aggregates cover the worker's most recent submissions in the project, so a
# check costs the same on a worker's ten-thousandth item as on the tenth, and a worker
# who has improved is judged on their current work.
AGGREGATE_WINDOW = 200


def _chosen_by_annotation(annotation_ids, offsets) -> dict[int, set[int]]:
    chosen: dict[int, set[int]] = {a: set() for a in annotation_ids}
    for annotation_id, docid, start, end in RationaleSpan.objects.filter(
        rationale_set__annotation_id__in=annotation_ids
    ).values_list("rationale_set__annotation_id", "document__docid", "start_token", "end_token"):
        base = offsets[docid]
        chosen[annotation_id].update(range(base + start, base + end))
    return chosen


def _flags_replace(wanted: dict[int, list], kinds_of: dict[int, tuple]) -> None:
    """Make each annotation's flags of the given kinds exactly `wanted[annotation]`,
    touching only what changed: one read, then writes only for differences."""
    existing = {
        (f.annotation_id, f.kind): f
        for f in QualityFlag.objects.filter(annotation_id__in=list(wanted))
    }
    stale = [
        f.pk
        for (annotation_id, kind), f in existing.items()
        if kind in kinds_of[annotation_id]
        and kind not in {flag.kind for flag in wanted[annotation_id]}
    ]
    new, changed = [], []
    for annotation_id, flags in wanted.items():
        for flag in flags:
            row = existing.get((annotation_id, flag.kind))
            if row is None:
                new.append(
                    QualityFlag(
                        annotation_id=annotation_id,
                        kind=flag.kind,
                        value=flag.value,
                        detail=flag.detail,
                    )
                )
            elif (row.value, row.detail) != (flag.value, flag.detail):
                row.value, row.detail = flag.value, flag.detail
                changed.append(row)
    if stale:
        QualityFlag.objects.filter(pk__in=stale).delete()
    if new:
        QualityFlag.objects.bulk_create(new, ignore_conflicts=True)
    if changed:
        QualityFlag.objects.bulk_update(changed, ["value", "detail"])


@transaction.atomic
def annotation_quality_check(*, annotation_id: int) -> list[str]:
    """Flag one submission, update its co-annotators' agreement and the workers'
    aggregates. Returns the flag kinds now on the annotation."""
    annotation = (
        Annotation.objects.select_related("assignment__item__project", "assignment__worker")
        .filter(pk=annotation_id)
        .first()
    )
    if annotation is None:  # deleted since; nothing to check
        return []
    assignment = annotation.assignment
    item, project = assignment.item, assignment.item.project
    policy = quality_policy_get(project)
    thresholds = policy.flag_thresholds()
    texts, offsets = item_token_texts(item)
    stop_words = language_stop_words(project.language)

    # Co-annotators: the same item, variant and round.
    group = list(
        Annotation.objects.filter(
            assignment__item=item,
            assignment__variant=assignment.variant,
            assignment__round=assignment.round,
            assignment__status=AssignmentStatus.SUBMITTED,
        )
        .select_related("assignment")
        .order_by("pk")
    )
    chosen = _chosen_by_annotation([a.pk for a in group], offsets)
    mine = chosen[annotation.pk]
    seconds = annotation.time_spent_ms / 1000
    wanted = {
        annotation.pk: submission_flags(
            token_texts=texts,
            chosen=mine,
            seconds=seconds,
            stop_words=stop_words,
            thresholds=thresholds,
        )
    }
    kinds_of = {annotation.pk: SUBMISSION_FLAG_KINDS}
    SubmissionCheck.objects.update_or_create(
        annotation=annotation,
        defaults={
            "project": project,
            "worker": assignment.worker,
            "highlighted": len(mine),
            "seconds": seconds,
            "stopword_share": stopword_share(texts, mine, stop_words),
        },
    )
    if len(group) >= 2:
        matrix = np.zeros((len(group), len(texts)), dtype=bool)
        for row, member in enumerate(group):
            matrix[row, list(chosen[member.pk])] = True
        majority = majority_vote(matrix)
        checks = {
            c.annotation_id: c
            for c in SubmissionCheck.objects.filter(annotation_id__in=[m.pk for m in group])
        }
        for row, member in enumerate(group):
            others = [chosen[o.pk] for o in group if o.pk != member.pk]
            kappa = _mean_kappa_with(chosen[member.pk], others, len(texts))
            if member.pk in checks:
                checks[member.pk].coannotator_kappa = kappa
                checks[member.pk].majority_kappa = against_majority(matrix[row], majority)["kappa"]
            flag = low_agreement_flag(kappa, thresholds)
            wanted.setdefault(member.pk, []).extend([flag] if flag else [])
            kinds_of[member.pk] = (*kinds_of.get(member.pk, ()), LOW_AGREEMENT)
        SubmissionCheck.objects.bulk_update(
            list(checks.values()), ["coannotator_kappa", "majority_kappa"]
        )
    _flags_replace(wanted, kinds_of)
    # The submitting worker's aggregates now; co-annotators' move with their own next
    # submission (their agreement changed only through this one annotation).
    worker_standing_update(project=project, worker_id=assignment.worker_id, policy=policy)
    return list(QualityFlag.objects.filter(annotation=annotation).values_list("kind", flat=True))


def _mean_kappa_with(mine: set[int], others: list[set[int]], n_tokens: int) -> float | None:
    """Mean kappa of one annotation with each co-annotator (undefined pairs left out)."""
    values = [mean_pairwise_kappa([mine, other], n_tokens)[0] for other in others]
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def worker_standing_update(*, project, worker_id: int, policy=None) -> ProjectWorker | None:
    """Recompute a worker's aggregates from their checks; warn, and block automatically
    when a block limit is crossed and the project allows it."""
    policy = policy or quality_policy_get(project)
    figures = [
        SubmissionFigures(*row)
        for row in SubmissionCheck.objects.filter(project=project, worker_id=worker_id)
        .order_by("-annotation_id")
        .values_list("highlighted", "seconds", "stopword_share", "majority_kappa")[
            :AGGREGATE_WINDOW
        ]
    ]
    aggregates = worker_aggregates(figures)
    warnings, blocks = worker_assessment(aggregates, policy.worker_limits())
    standing = ProjectWorker.objects.filter(project=project, worker_id=worker_id).first()
    if standing is None:
        return None
    if standing.aggregates != aggregates or standing.warnings != warnings + blocks:
        ProjectWorker.objects.filter(pk=standing.pk).update(
            aggregates=aggregates, warnings=warnings + blocks
        )
    if blocks and policy.auto_block and standing.status != QualificationStatus.BLOCKED:
        standing = project_worker_block(
            project=project,
            worker=standing.worker,
            reason="automatic: " + "; ".join(blocks),
        )
    return standing
