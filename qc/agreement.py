"""Agreement reports: read a project's annotations and feed rationale_metrics.agreement.

Per instruction variant: length ratio, stop-word and punctuation share, intra-variant
kappa with a bootstrap CI, Fleiss' kappa, Krippendorff's alpha, seconds per item, empty
rate; the variant x variant kappa matrix; per worker: agreement with the item's majority;
and permutation tests between variants.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, ItemDocument, Project, RationaleSpan
from annotate.tokenization import stop_word_rule
from qc.cohorts import COHORTS, NO_RECORD
from qc.models import AgreementReport, ProjectWorker, QualityFlag, ReportStatus
from rationale_metrics.agreement import (
    TokenAnnotation,
    against_majority,
    annotation_statistics,
    bootstrap_ci,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    majority_agreement,
    majority_vote,
    mean_pairwise_kappa,
    permutation_test,
    variant_agreement,
)

logger = logging.getLogger(__name__)


@dataclass
class _Annotation:
    item_id: int
    worker: str
    variant: str
    seconds: float
    tokens: set[int]  # indexes into the item's concatenated documents
    cohort: str = NO_RECORD


def _submitted_count(project: Project) -> int:
    return Assignment.objects.filter(
        item__project=project, status=AssignmentStatus.SUBMITTED
    ).count()


def _load(project: Project) -> tuple[list[_Annotation], dict[int, list[str]]]:
    """First-round annotations only: the annotators' own work under their instructions,
    before any reviewer feedback shaped a revision."""
    cohorts = dict(
        ProjectWorker.objects.filter(project=project).values_list("worker__username", "cohort")
    )
    rows = list(
        Assignment.objects.filter(item__project=project, status=AssignmentStatus.SUBMITTED, round=1)
        .values_list(
            "item_id",
            "worker__username",
            "variant__name",
            "annotation__pk",
            "annotation__time_spent_ms",
        )
        .order_by("pk")
    )
    item_ids = {r[0] for r in rows}
    item_tokens: dict[int, list[str]] = defaultdict(list)
    offsets: dict[tuple[int, int], int] = {}
    links = (
        ItemDocument.objects.filter(item_id__in=item_ids)
        .order_by("item_id", "position")
        .values_list("item_id", "document_id", "document__text", "document__tokens")
    )
    for item_id, doc_id, text, tokens in links:
        offsets[(item_id, doc_id)] = len(item_tokens[item_id])
        item_tokens[item_id].extend(text[s:e] for s, e in tokens.tolist())
    chosen: dict[int, set] = defaultdict(set)
    annotation_item = {r[3]: r[0] for r in rows}
    spans = RationaleSpan.objects.filter(
        rationale_set__annotation_id__in=list(annotation_item)
    ).values_list("rationale_set__annotation_id", "document_id", "start_token", "end_token")
    for annotation_id, doc_id, start, end in spans:
        base = offsets[(annotation_item[annotation_id], doc_id)]
        chosen[annotation_id].update(range(base + start, base + end))
    annotations = [
        _Annotation(
            item_id,
            worker,
            variant,
            (time_ms or 0) / 1000,
            chosen.get(annotation_id, set()),
            cohorts.get(worker) or NO_RECORD,
        )
        for item_id, worker, variant, annotation_id, time_ms in rows
    ]
    return annotations, item_tokens


def _vector(tokens: set[int], n: int) -> np.ndarray:
    row = np.zeros(n, dtype=bool)
    row[list(tokens)] = True
    return row


def _group_figures(
    group_name, annotations, item_tokens, stop_words, *, unit=lambda a: a.item_id
) -> tuple[dict, list[float]]:
    """Agreement and annotation statistics of one group (a variant or a cohort); pairs are
    formed within each `unit` (an item, or an item under one variant)."""
    by_item: dict[object, list[_Annotation]] = defaultdict(list)
    for a in annotations:
        by_item[unit(a)].append(a)
    per_item_kappa: list[float] = []
    excluded = 0
    fleiss_counts = []
    units = []
    for group in by_item.values():
        n = len(item_tokens[group[0].item_id])
        mean, item_excluded = mean_pairwise_kappa([a.tokens for a in group], n)
        excluded += item_excluded
        if mean is not None:
            per_item_kappa.append(mean)
        votes = np.sum([_vector(a.tokens, n) for a in group], axis=0)
        if len(group) >= 2:
            fleiss_counts.append((len(group), np.stack([len(group) - votes, votes], axis=1)))
            units.extend([[int(t in a.tokens) for a in group] for t in range(n)])
    raters = {r for r, _ in fleiss_counts}
    fleiss = None
    if len(raters) == 1:
        fleiss = fleiss_kappa(np.concatenate([c for _, c in fleiss_counts]))
    stats = annotation_statistics(
        [(item_tokens[a.item_id], a.tokens, a.seconds) for a in annotations], stop_words
    )
    ci = bootstrap_ci(np.array(per_item_kappa)) if per_item_kappa else None
    return (
        {
            "group": group_name,
            "annotators": len({a.worker for a in annotations}),
            "items": len({a.item_id for a in annotations}),
            **stats,
            "intra_kappa": float(np.mean(per_item_kappa)) if per_item_kappa else None,
            "intra_kappa_ci95": list(ci) if ci else None,
            "excluded_pairs": excluded,
            "fleiss_kappa": fleiss,
            "krippendorff_alpha": krippendorff_alpha_nominal(units) if units else None,
        },
        per_item_kappa,
    )


def _worker_figures(annotations, item_tokens, stop_words) -> list[dict]:
    by_item_variant: dict[tuple[int, str], list[_Annotation]] = defaultdict(list)
    for a in annotations:
        by_item_variant[(a.item_id, a.variant)].append(a)
    per_worker: dict[str, list[_Annotation]] = defaultdict(list)
    for a in annotations:
        per_worker[a.worker].append(a)
    rows = []
    for worker, own in sorted(per_worker.items()):
        kappas, f1s = [], []
        for a in own:
            group = by_item_variant[(a.item_id, a.variant)]
            if len(group) < 2:
                continue
            n = len(item_tokens[a.item_id])
            majority = majority_vote(np.stack([_vector(g.tokens, n) for g in group]))
            figures = against_majority(_vector(a.tokens, n), majority)
            if figures["kappa"] is not None:
                kappas.append(figures["kappa"])
            f1s.append(figures["f1"])
        stats = annotation_statistics(
            [(item_tokens[a.item_id], a.tokens, a.seconds) for a in own], stop_words
        )
        rows.append(
            {
                "worker": worker,
                "variants": sorted({a.variant for a in own}),
                "annotations": len(own),
                "median_seconds": stats["seconds"]["median"],
                "empty_rate": stats["empty_rate"],
                "stop_word_share": stats["stop_word_share"],
                "majority_kappa": float(np.mean(kappas)) if kappas else None,
                "majority_f1": float(np.mean(f1s)) if f1s else None,
                "items_compared": len(f1s),
            }
        )
    return rows


def agreement_compute(project: Project, progress=None) -> dict:
    annotations, item_tokens = _load(project)
    stop_words = stop_word_rule(project.language)
    by_variant: dict[str, list[_Annotation]] = defaultdict(list)
    for a in annotations:
        by_variant[a.variant].append(a)
    variants, per_item = [], {}
    for i, (name, group) in enumerate(sorted(by_variant.items())):
        figures, values = _group_figures(name, group, item_tokens, stop_words)
        variants.append({"variant": figures.pop("group"), **figures})
        per_item[name] = values
        if progress:
            progress(0.1 + 0.6 * (i + 1) / max(len(by_variant), 1))
    matrix = _matrix(annotations, item_tokens, key=lambda a: a.variant)
    tests = [
        {
            "a": x,
            "b": y,
            **permutation_test(np.array(per_item[x]), np.array(per_item[y]), permutations=2000),
        }
        for x, y in combinations(sorted(per_item), 2)
    ]
    all_items: dict[int, list[np.ndarray]] = defaultdict(list)
    for a in annotations:
        all_items[a.item_id].append(_vector(a.tokens, len(item_tokens[a.item_id])))
    return {
        "annotations": len(annotations),
        "matrix": matrix,
        "variants": variants,
        "workers": _with_quality(project, _worker_figures(annotations, item_tokens, stop_words)),
        "majority_agreement": majority_agreement(
            [np.stack(v) for v in all_items.values() if len(v) >= 2]
        ),
        "permutation_tests": tests,
        "undefined_kappa_policy": "pairs where both annotations are constant and equal are excluded and counted",
        "round": "first-round annotations, before any reviewer feedback",
        **_cohort_figures(annotations, item_tokens, stop_words),
    }


def _with_quality(project: Project, rows: list[dict]) -> list[dict]:
    """Each worker's cohort, standing and automatic flags next to their agreement."""
    standings = {
        username: (status, cohort)
        for username, status, cohort in ProjectWorker.objects.filter(project=project).values_list(
            "worker__username", "status", "cohort"
        )
    }
    flags: dict[str, dict[str, int]] = defaultdict(dict)
    for username, kind, n in (
        QualityFlag.objects.filter(annotation__assignment__item__project=project)
        .values_list("annotation__assignment__worker__username", "kind")
        .annotate(n=Count("pk"))
    ):
        flags[username][kind] = n
    for row in rows:
        status, cohort = standings.get(row["worker"], ("", NO_RECORD))
        row.update(status=status, cohort=cohort or NO_RECORD, flags=flags.get(row["worker"], {}))
    return rows


def _matrix(annotations, item_tokens, *, key, unit=lambda a: str(a.item_id)) -> dict:
    """Kappa between the groups `key` names, over pairs of annotations of the same `unit`."""
    return variant_agreement(
        [
            TokenAnnotation(
                unit(a), a.worker, key(a), len(item_tokens[a.item_id]), frozenset(a.tokens)
            )
            for a in annotations
        ]
    )


def _cohort_figures(annotations, item_tokens, stop_words) -> dict:
    """The same comparison across qualification cohorts: a table per cohort (pooled over
    variants, listing the variants it covers) and the cohort x cohort kappa matrix, where
    two cohorts are compared only on the same item under the same variant, so the
    instructions do not confound the comparison."""
    by_cohort: dict[str, list[_Annotation]] = defaultdict(list)
    for a in annotations:
        by_cohort[a.cohort].append(a)
    rows = []
    for name in [c for c in COHORTS if c in by_cohort]:
        figures, _ = _group_figures(
            name,
            by_cohort[name],
            item_tokens,
            stop_words,
            unit=lambda a: (a.item_id, a.variant),
        )
        rows.append(
            {
                "cohort": figures.pop("group"),
                "variants": sorted({a.variant for a in by_cohort[name]}),
                **figures,
            }
        )
    return {
        "cohorts": rows,
        "cohort_matrix": _matrix(
            annotations,
            item_tokens,
            key=lambda a: a.cohort,
            unit=lambda a: f"{a.item_id}|{a.variant}",
        )
        if len(by_cohort) > 1
        else None,
    }


def agreement_report_get(*, project: Project) -> tuple[AgreementReport, bool]:
    """The cached report and whether newer annotations have arrived since it was computed."""
    report, _ = AgreementReport.objects.get_or_create(project=project)
    stale = report.status == ReportStatus.READY and report.annotations_seen != _submitted_count(
        project
    )
    return report, stale


@transaction.atomic
def agreement_report_request(*, project: Project) -> AgreementReport:
    report, _ = AgreementReport.objects.select_for_update().get_or_create(project=project)
    if report.status != ReportStatus.RUNNING:
        report.status = ReportStatus.RUNNING
        report.progress = 0
        report.save(update_fields=["status", "progress"])
        from qc.tasks import agreement_report_job

        transaction.on_commit(lambda: agreement_report_job.delay(project.pk))
    return report


def agreement_report_refresh(*, project_id: int) -> AgreementReport:
    project = Project.objects.get(pk=project_id)
    report, _ = AgreementReport.objects.get_or_create(project=project)
    seen = _submitted_count(project)

    def progress(fraction: float) -> None:
        AgreementReport.objects.filter(pk=report.pk).update(progress=fraction)

    try:
        data = agreement_compute(project, progress)
    except Exception as exc:
        logger.exception("agreement report of project %s failed", project_id)
        AgreementReport.objects.filter(pk=report.pk).update(
            status=ReportStatus.FAILED, error=str(exc)
        )
    else:
        AgreementReport.objects.filter(pk=report.pk).update(
            status=ReportStatus.READY,
            progress=1,
            data=data,
            annotations_seen=seen,
            error="",
            computed_at=timezone.now(),
        )
    report.refresh_from_db()
    return report
