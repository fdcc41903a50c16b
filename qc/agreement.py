"""Agreement reports: read a project's annotations and feed rationale_metrics.agreement.

Per instruction variant: length ratio, stop-word and punctuation share, intra-variant
kappa with a bootstrap CI, Fleiss' kappa, Krippendorff's alpha, seconds per item, empty
rate; the variant x variant kappa matrix; per worker: agreement with the item's majority;
and permutation tests between variants.

A run is split into chunks that each read only the annotations they need and store their
figures as an `AgreementPart`: one chunk per variant, per group of workers who saw the
same variants, per qualification cohort, and per range of items (the agreement with the
majority, and each range's share of the variant and cohort kappa matrices, merged by
qc/kappa_cells.py into exactly the figures computed over every item at once); then, once
those are in, one chunk per pair of variants (the permutation test, which reads the two
variants' per-item kappas). One assembly writes the report from the parts. With a broker
the chunks go to the workers as two Celery chords, largest first; without one (eager
mode), with `AGREEMENT_CHUNKED` off, or with a single chunk, the same functions run one
after the other in the job's own process. A chunk's figures depend only on its own
annotations, so both ways store the same report.

Every run has an attempt token: a chunk or an assembly of a superseded or failed attempt
changes nothing. The report's `data` keeps the last finished figures until an assembly
replaces them in one update, so a failed or killed run never shows a partial report.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, F, Max
from django.utils import timezone

from annotate.models import (
    Assignment,
    AssignmentStatus,
    ItemDocument,
    Project,
    RationaleSpan,
    item_not_deleted,
)
from annotate.services.background_jobs import job_fail_if_worker_lost
from annotate.tokenization import stop_word_rule
from config.exceptions import ApplicationError
from config.job_queue import task_send_on_commit, task_signature
from qc.cohorts import COHORTS, NO_RECORD
from qc.kappa_cells import cell_contributions, cells_merged
from qc.models import AgreementPart, AgreementReport, ProjectWorker, QualityFlag, ReportStatus
from rationale_metrics.agreement import (
    TokenAnnotation,
    against_majority,
    annotation_statistics,
    bootstrap_ci,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    majority_agreement_values,
    majority_vote,
    mean_pairwise_kappa,
    permutation_test,
    summarize,
)

logger = logging.getLogger(__name__)
# A line per chunk with its computing time, logged as the workers log their task lines
# (CELERY_TRACE_LOG_LEVEL); bench/scale_out.py reads them.
chunk_timing_logger = logging.getLogger("qc.agreement.chunks")

VARIANT, PAIR, WORKERS, COHORT, ITEMS = ("variant", "pair", "workers", "cohort", "items")
UNDEFINED_POLICY = "exclude"


@dataclass
class _Annotation:
    item_id: int
    worker: str
    variant: str
    seconds: float
    tokens: set[int]  # indexes into the item's concatenated documents
    cohort: str = NO_RECORD
    order: int = 0  # the assignment's id: annotations are read in this order


def _submitted_count(project: Project) -> int:
    return Assignment.objects.filter(
        item_not_deleted(), item__project=project, status=AssignmentStatus.SUBMITTED
    ).count()


def _first_round(project_id: int):
    """First-round annotations only: the annotators' own work under their instructions,
    before any reviewer feedback shaped a revision."""
    return Assignment.objects.filter(
        item_not_deleted(), item__project_id=project_id, status=AssignmentStatus.SUBMITTED, round=1
    )


def _load(
    project_id: int,
    *,
    bound: int,
    variants: list[str] | None = None,
    workers: list[str] | None = None,
    items: list[int] | None = None,
) -> tuple[list[_Annotation], dict[int, list[str]]]:
    """The first-round annotations up to annotation `bound` (the run's plan), of the given
    variants, workers or range of item ids [first, last], in the order they were leased."""
    cohorts = dict(
        ProjectWorker.objects.filter(project_id=project_id).values_list(
            "worker__username", "cohort"
        )
    )
    chosen_rows = _first_round(project_id).filter(annotation__pk__lte=bound)
    if variants is not None:
        chosen_rows = chosen_rows.filter(variant__name__in=variants)
    if workers is not None:
        chosen_rows = chosen_rows.filter(worker__username__in=workers)
    if items is not None:
        chosen_rows = chosen_rows.filter(item__pk__range=items)
    rows = list(
        chosen_rows.values_list(
            "pk",
            "item_id",
            "worker__username",
            "variant__name",
            "annotation__pk",
            "annotation__time_spent_ms",
        ).order_by("pk")
    )
    item_ids = {r[1] for r in rows}
    item_tokens: dict[int, list[str]] = defaultdict(list)
    offsets: dict[tuple[int, int], int] = {}
    links = (
        ItemDocument.objects.filter(item_id__in=item_ids)
        .order_by("item_id", "position")
        .values_list("item_id", "document_id", "document__text", "document__tokens")
    )
    for item_id, doc_id, text, tokens in links.iterator(chunk_size=2000):
        offsets[(item_id, doc_id)] = len(item_tokens[item_id])
        item_tokens[item_id].extend(text[s:e] for s, e in tokens.tolist())
    chosen: dict[int, set] = defaultdict(set)
    annotation_item = {r[4]: r[1] for r in rows}
    spans = RationaleSpan.objects.filter(
        rationale_set__annotation_id__in=list(annotation_item)
    ).values_list("rationale_set__annotation_id", "document_id", "start_token", "end_token")
    for annotation_id, doc_id, start, end in spans.iterator(chunk_size=5000):
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
            order,
        )
        for order, item_id, worker, variant, annotation_id, time_ms in rows
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


def _worker_figures(annotations, item_tokens, stop_words, *, workers: set[str]) -> list[dict]:
    """The rows of `workers`; `annotations` holds everything their co-annotators did
    under the same variants, since each is compared with the majority of their group."""
    by_item_variant: dict[tuple[int, str], list[_Annotation]] = defaultdict(list)
    for a in annotations:
        by_item_variant[(a.item_id, a.variant)].append(a)
    per_worker: dict[str, list[_Annotation]] = defaultdict(list)
    for a in annotations:
        if a.worker in workers:
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
        QualityFlag.objects.filter(
            item_not_deleted("annotation__assignment__item"),
            annotation__assignment__item__project=project,
        )
        .values_list("annotation__assignment__worker__username", "kind")
        .annotate(n=Count("pk"))
    ):
        flags[username][kind] = n
    for row in rows:
        status, cohort = standings.get(row["worker"], ("", NO_RECORD))
        row.update(status=status, cohort=cohort or NO_RECORD, flags=flags.get(row["worker"], {}))
    return rows


def _cell_contributions(
    annotations, item_tokens, *, key, unit=lambda a: str(a.item_id), met_within_cell=False
) -> dict:
    """What a range of items adds to the kappa matrix between the groups `key` names, over
    pairs of annotations of the same `unit` (qc/kappa_cells.py merges the ranges)."""
    return cell_contributions(
        [
            TokenAnnotation(
                unit(a), a.worker, key(a), len(item_tokens[a.item_id]), frozenset(a.tokens)
            )
            for a in annotations
        ],
        [a.order for a in annotations],
        undefined=UNDEFINED_POLICY,
        met_within_cell=met_within_cell,
    )


def _cohort_row(name: str, annotations, item_tokens, stop_words) -> dict:
    """A cohort's table row, pooled over the variants it covers; pairs are formed within an
    item under one variant, so the instructions do not confound the comparison."""
    figures, _ = _group_figures(
        name, annotations, item_tokens, stop_words, unit=lambda a: (a.item_id, a.variant)
    )
    return {
        "cohort": figures.pop("group"),
        "variants": sorted({a.variant for a in annotations}),
        **figures,
    }


def _range_figures(annotations, item_tokens, *, cohort_matrix: bool) -> dict:
    """A range of items' share of the figures over every item: each annotator against the
    item's majority; the variant x variant kappa matrix, a variant's diagonal as if
    computed from its own annotations and a pair of variants from the two's, as the report
    always did; and, with more than one cohort, the cohort x cohort matrix, where two
    cohorts are compared only on the same item under the same variant."""
    by_item: dict[int, list[np.ndarray]] = defaultdict(list)
    for x in annotations:
        by_item[x.item_id].append(_vector(x.tokens, len(item_tokens[x.item_id])))
    figures = {
        "values": majority_agreement_values(
            [np.stack(by_item[i]) for i in sorted(by_item) if len(by_item[i]) >= 2]
        ),
        "variant_cells": _cell_contributions(
            annotations, item_tokens, key=lambda a: a.variant, met_within_cell=True
        ),
    }
    if cohort_matrix:
        figures["cohort_cells"] = _cell_contributions(
            annotations,
            item_tokens,
            key=lambda a: a.cohort,
            unit=lambda a: f"{a.item_id}|{a.variant}",
        )
    return figures


# ---------------------------------------------------------------- the chunks


def agreement_plan(project_id: int) -> dict:
    """What a run covers, frozen when it starts: the first-round annotations up to the
    newest one now (`bound`), how many submitted annotations that is, and the chunks:
    the first stage's, and the pairs of variants, which need the first stage's figures.
    Each chunk's `cost` is how many annotations it reads, the measure of its work by which
    the chords send the largest first."""
    rows = _first_round(project_id)
    bound = rows.aggregate(last=Max("annotation__pk"))["last"] or 0
    seen = _submitted_count(Project(pk=project_id))
    worker_variants: dict[str, set[str]] = defaultdict(set)
    of_worker: dict[str, int] = defaultdict(int)
    of_variant: dict[str, int] = defaultdict(int)
    for worker, variant, n in (
        rows.filter(annotation__pk__lte=bound)
        .values_list("worker__username", "variant__name")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        worker_variants[worker].add(variant)
        of_worker[worker] += n
        of_variant[variant] += n
    variants = sorted({v for names in worker_variants.values() for v in names})
    cohort_of = dict(
        ProjectWorker.objects.filter(project_id=project_id).values_list(
            "worker__username", "cohort"
        )
    )
    by_variants: dict[tuple[str, ...], list[str]] = defaultdict(list)
    by_cohort: dict[str, list[str]] = defaultdict(list)
    for worker in sorted(worker_variants):
        by_variants[tuple(sorted(worker_variants[worker]))].append(worker)
        by_cohort[cohort_of.get(worker) or NO_RECORD].append(worker)
    item_counts = list(
        rows.filter(annotation__pk__lte=bound)
        .values_list("item_id")
        .annotate(n=Count("pk"))
        .order_by("item_id")
    )
    size = settings.AGREEMENT_CHUNK_ITEMS
    chunks: list[dict] = [
        {"kind": VARIANT, "key": v, "variants": [v], "cost": of_variant[v]} for v in variants
    ]
    chunks += [
        {
            "kind": WORKERS,
            "key": f"{n:05d}",
            "variants": list(seen_variants),
            "workers": names,
            "cost": sum(of_variant[v] for v in seen_variants),
        }
        for n, (seen_variants, names) in enumerate(sorted(by_variants.items()))
    ]
    cohorts = [c for c in COHORTS if c in by_cohort]
    chunks += [
        {
            "kind": COHORT,
            "key": c,
            "workers": by_cohort[c],
            "cost": sum(of_worker[w] for w in by_cohort[c]),
        }
        for c in cohorts
    ]
    # The figures over every item (the majority, the variant and cohort matrices) are
    # computed by ranges of items and merged, so no chunk reads every annotation.
    for n, start in enumerate(range(0, len(item_counts), size)):
        in_range = item_counts[start : start + size]
        chunks.append(
            {
                "kind": ITEMS,
                "key": f"{n:05d}",
                "items": [in_range[0][0], in_range[-1][0]],
                "cohort_matrix": len(cohorts) > 1,
                "cost": sum(count for _, count in in_range),
            }
        )
    pairs = [
        {"kind": PAIR, "key": f"{a}|{b}", "variants": [a, b], "cost": of_variant[a] + of_variant[b]}
        for a, b in combinations(variants, 2)
    ]
    return {
        "bound": bound,
        "seen": seen,
        "variants": variants,
        "cohorts": cohorts,
        "first": chunks,
        "pairs": pairs,
    }


def _chunk_figures(project: Project, report_id: int, attempt: str, chunk: dict, bound: int):
    """The figures of one chunk, as plain JSON."""
    kind = chunk["kind"]
    load = {
        "bound": bound,
        "variants": chunk.get("variants"),
        # A group of workers is compared with the majority of everyone who annotated the
        # same items under the same variants, in their group or not.
        "workers": chunk.get("workers") if kind != WORKERS else None,
        "items": chunk.get("items"),
    }
    if kind == PAIR:
        # The pair's cell of the matrix comes from the ranges of items; what is left is
        # the permutation test on the two variants' per-item kappas.
        a, b = chunk["variants"]
        per_item = dict(
            AgreementPart.objects.filter(
                report_id=report_id, attempt=attempt, kind=VARIANT, key__in=[a, b]
            ).values_list("key", "data__per_item")
        )
        if len(per_item) != 2:
            raise ApplicationError(
                f"the per-item kappas of variant {a!r} or {b!r} are missing; start the report again"
            )
        test = permutation_test(np.array(per_item[a]), np.array(per_item[b]), permutations=2000)
        return {"test": {"a": a, "b": b, **test}}
    annotations, item_tokens = _load(project.pk, **load)
    stop_words = stop_word_rule(project.language)
    if kind == VARIANT:
        (name,) = chunk["variants"]
        figures, per_item = _group_figures(name, annotations, item_tokens, stop_words)
        return {"row": {"variant": figures.pop("group"), **figures}, "per_item": per_item}
    if kind == WORKERS:
        rows = _worker_figures(annotations, item_tokens, stop_words, workers=set(chunk["workers"]))
        return {"rows": rows}
    if kind == COHORT:
        return {"row": _cohort_row(chunk["key"], annotations, item_tokens, stop_words)}
    if kind == ITEMS:
        return _range_figures(annotations, item_tokens, cohort_matrix=chunk["cohort_matrix"])
    raise ApplicationError(f"unknown agreement chunk kind {kind!r}")


def _assemble(project: Project, plan: dict, parts: dict[tuple[str, str], dict]) -> dict:
    """The report from its parts, in the order the one-process computation wrote it."""
    variants = plan["variants"]
    rows = [parts[(VARIANT, v)]["row"] for v in variants]
    ranges = [parts[(ITEMS, c["key"])] for c in plan["first"] if c["kind"] == ITEMS]
    merged = cells_merged((r["variant_cells"] for r in ranges), undefined=UNDEFINED_POLICY)
    cells = {
        f"{a}|{b}": merged["cells"][f"{a}|{b}"]
        for a in variants
        for b in variants
        if a <= b and f"{a}|{b}" in merged["cells"]
    }
    workers = sorted(
        (
            row
            for c in plan["first"]
            if c["kind"] == WORKERS
            for row in parts[(WORKERS, c["key"])]["rows"]
        ),
        key=lambda row: row["worker"],
    )
    values: dict[str, list[float]] = {"kappa": [], "precision": [], "recall": [], "f1": []}
    for r in ranges:
        for name, range_values in r["values"].items():
            values[name].extend(range_values)
    return {
        "annotations": sum(row["annotations"] for row in rows),
        "matrix": {"variants": variants, "undefined_policy": UNDEFINED_POLICY, "cells": cells},
        "variants": rows,
        "workers": _with_quality(project, workers),
        "majority_agreement": summarize(values),
        "permutation_tests": [parts[(PAIR, c["key"])]["test"] for c in plan["pairs"]],
        "undefined_kappa_policy": "pairs where both annotations are constant and equal are excluded and counted",
        "round": "first-round annotations, before any reviewer feedback",
        "cohorts": [parts[(COHORT, c)]["row"] for c in plan["cohorts"]],
        "cohort_matrix": cells_merged(
            (r["cohort_cells"] for r in ranges), undefined=UNDEFINED_POLICY
        )
        if len(plan["cohorts"]) > 1
        else None,
    }


# ---------------------------------------------------------------- the job


def _running(report_id: int, attempt: str):
    return AgreementReport.objects.filter(
        pk=report_id, status=ReportStatus.RUNNING, attempt=attempt
    )


def _finish_failed(report_id: int, attempt: str, error: str) -> AgreementReport:
    """End this attempt as failed; the last finished figures (`data`) stay. A report that
    is no longer running under this attempt is left as it is."""
    if _running(report_id, attempt).update(
        status=ReportStatus.FAILED, error=error, phase="done", heartbeat_at=timezone.now()
    ):
        AgreementPart.objects.filter(report_id=report_id, attempt=attempt).delete()
    return AgreementReport.objects.get(pk=report_id)


class _Heartbeat:
    """While a chunk computes, a thread writes the report's heartbeat every interval (a
    quarter of the time after which viewers take the run for lost), so a long chunk is not
    mistaken for a dead worker, and a killed one is soon noticed."""

    def __init__(self, report_id: int, attempt: str):
        self.report_id, self.attempt = report_id, attempt
        self.interval = min(10.0, max(0.2, settings.JOB_HEARTBEAT_TIMEOUT_SECONDS / 4))
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self.done.wait(self.interval):
                _running(self.report_id, self.attempt).update(heartbeat_at=timezone.now())
        except DatabaseError:
            logger.warning("agreement report %s: a heartbeat was not written", self.report_id)
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> _Heartbeat:
        # Inside a transaction (a caller's, or a test's) the report row may be locked by
        # this very connection: the thread would wait on it, so the caller's own updates
        # have to do.
        if not connection.in_atomic_block:
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        if self.thread.is_alive():
            self.thread.join()


def agreement_report_refresh(*, project_id: int) -> AgreementReport:
    """Start a run of the project's agreement report under a new attempt (a run already
    under way is superseded) and, without workers to send the chunks to, finish it here."""
    project = Project.objects.get(pk=project_id)
    with transaction.atomic():
        report, _ = AgreementReport.objects.select_for_update().get_or_create(project=project)
        attempt = uuid.uuid4().hex
        report.status, report.attempt, report.phase = ReportStatus.RUNNING, attempt, "planning"
        report.progress, report.progress_done, report.progress_total = 0, 0, 0
        report.heartbeat_at = timezone.now()
        report.save(
            update_fields=[
                "status",
                "attempt",
                "phase",
                "progress",
                "progress_done",
                "progress_total",
                "heartbeat_at",
            ]
        )
    AgreementPart.objects.filter(report=report).exclude(attempt=attempt).delete()
    try:
        plan = agreement_plan(project_id)
    except Exception as exc:
        logger.exception("agreement report of project %s failed while planning", project_id)
        return _finish_failed(report.pk, attempt, _internal(exc))
    total = len(plan["first"]) + len(plan["pairs"])
    _running(report.pk, attempt).update(phase="computing", progress_total=total)
    if _split_over_workers(total):
        from celery import chord

        chord(
            task_signature("qc.tasks.agreement_chunk", report.pk, attempt, c, plan["bound"])
            for c in _largest_first(plan["first"])
        )(task_signature("qc.tasks.agreement_pairs", report.pk, attempt, plan))
        return AgreementReport.objects.get(pk=report.pk)
    for chunk in plan["first"]:
        if (
            agreement_chunk_run(
                report_id=report.pk, attempt=attempt, chunk=chunk, bound=plan["bound"]
            )
            != "written"
        ):
            return AgreementReport.objects.get(pk=report.pk)
    return agreement_pairs_run(report_id=report.pk, attempt=attempt, plan=plan, inline=True)


def _largest_first(chunks: list[dict]) -> list[dict]:
    """The order to queue a chord's chunks in: the workers take them in this order, so the
    largest are under way first and the last to start are small, not one large chunk
    running alone at the end while the other workers wait (longest processing time
    first). Equal costs keep the plan's order."""
    return sorted(chunks, key=lambda c: -c.get("cost", 0))


def _split_over_workers(chunks: int) -> bool:
    """Whether to send the chunks to the workers: there is more than one, the tasks go to
    a broker, and a result backend counts the chords' finished chunks."""
    from config.celery import app

    if chunks < 2 or not settings.AGREEMENT_CHUNKED or app.conf.task_always_eager:
        return False
    if not app.conf.result_backend:
        logger.warning("AGREEMENT_CHUNKED needs a Celery result backend; computing in one task")
        return False
    return True


def _internal(exc: Exception) -> str:
    return f"internal error: {type(exc).__name__}: {exc}"


def agreement_chunk_run(*, report_id: int, attempt: str, chunk: dict, bound: int) -> str:
    """Compute one chunk and record its part. Safe to run twice: the part's row is
    replaced. Returns "written", "stopped" (the report no longer runs under this attempt)
    or "failed"; a database error is raised, for the task to retry."""
    report = AgreementReport.objects.select_related("project").filter(pk=report_id).first()
    if report is None or report.status != ReportStatus.RUNNING or report.attempt != attempt:
        return "stopped"
    if not _running(report_id, attempt).update(heartbeat_at=timezone.now()):
        return "stopped"
    name = f"{chunk['kind']} chunk {chunk['key']!r}"
    started = time.perf_counter()
    try:
        with _Heartbeat(report_id, attempt):
            data = _chunk_figures(report.project, report_id, attempt, chunk, bound)
    except DatabaseError:
        raise
    except ApplicationError as exc:
        _finish_failed(report_id, attempt, f"{exc} (in {name}); the previous report is kept")
        return "failed"
    except Exception as exc:
        logger.exception("agreement report %s: %s crashed", report_id, name)
        error = f"{_internal(exc)} (in {name}); the previous report is kept"
        _finish_failed(report_id, attempt, error)
        return "failed"
    chunk_timing_logger.info(
        "agreement report %s: %s computed in %.3f s", report_id, name, time.perf_counter() - started
    )
    with transaction.atomic():
        if not _running(report_id, attempt).select_for_update().exists():
            return "stopped"
        AgreementPart.objects.update_or_create(
            report_id=report_id,
            kind=chunk["kind"],
            key=chunk["key"],
            defaults={"attempt": attempt, "data": data},
        )
        # Counted from the rows, not added to: a chunk run twice counts once.
        done = AgreementPart.objects.filter(report_id=report_id, attempt=attempt).count()
        total = report.progress_total or AgreementReport.objects.get(pk=report_id).progress_total
        _running(report_id, attempt).update(
            progress_done=done,
            progress=done / total if total else 0,
            heartbeat_at=timezone.now(),
        )
    return "written"


def _missing(report_id: int, attempt: str, chunks: list[dict]) -> list[str]:
    found = set(
        AgreementPart.objects.filter(report_id=report_id, attempt=attempt).values_list(
            "kind", "key"
        )
    )
    return [f"{c['kind']} {c['key']!r}" for c in chunks if (c["kind"], c["key"]) not in found]


def _fail_missing(report_id: int, attempt: str, missing: list[str]) -> AgreementReport:
    return _finish_failed(
        report_id,
        attempt,
        f"{len(missing)} chunk(s) did not finish ({', '.join(missing[:5])}); "
        "the previous report is kept; refresh it again",
    )


def agreement_pairs_run(
    *, report_id: int, attempt: str, plan: dict, inline: bool = False
) -> AgreementReport:
    """The second stage, once every first-stage chunk is in: the pairs of variants, then
    the assembly (sent to the workers as a chord, or run here)."""
    if not _running(report_id, attempt).exists():
        return AgreementReport.objects.get(pk=report_id)
    missing = _missing(report_id, attempt, plan["first"])
    if missing:
        return _fail_missing(report_id, attempt, missing)
    if not inline and plan["pairs"]:
        from celery import chord

        chord(
            task_signature("qc.tasks.agreement_chunk", report_id, attempt, c, plan["bound"])
            for c in _largest_first(plan["pairs"])
        )(task_signature("qc.tasks.agreement_assemble", report_id, attempt, plan))
        return AgreementReport.objects.get(pk=report_id)
    for chunk in plan["pairs"]:
        if (
            agreement_chunk_run(
                report_id=report_id, attempt=attempt, chunk=chunk, bound=plan["bound"]
            )
            != "written"
        ):
            return AgreementReport.objects.get(pk=report_id)
    return agreement_assemble_run(report_id=report_id, attempt=attempt, plan=plan)


def agreement_assemble_run(*, report_id: int, attempt: str, plan: dict) -> AgreementReport:
    """Write the report from the parts and publish it in one update, then drop the parts.
    Safe to run twice: only a report running under this attempt is written."""
    report = AgreementReport.objects.select_related("project").get(pk=report_id)
    if report.status != ReportStatus.RUNNING or report.attempt != attempt:
        return report
    missing = _missing(report_id, attempt, plan["first"] + plan["pairs"])
    if missing:
        return _fail_missing(report_id, attempt, missing)
    _running(report_id, attempt).update(phase="assembling", heartbeat_at=timezone.now())
    parts = {
        (kind, key): data
        for kind, key, data in AgreementPart.objects.filter(
            report_id=report_id, attempt=attempt
        ).values_list("kind", "key", "data")
    }
    try:
        data = _assemble(report.project, plan, parts)
    except Exception as exc:
        logger.exception("agreement report %s crashed while assembling", report_id)
        return _finish_failed(
            report_id, attempt, f"{_internal(exc)} (assembling); the previous report is kept"
        )
    _running(report_id, attempt).update(
        status=ReportStatus.READY,
        phase="done",
        progress=1,
        progress_done=report.progress_total,
        data=data,
        annotations_seen=plan["seen"],
        error="",
        computed_at=timezone.now(),
    )
    AgreementPart.objects.filter(report_id=report_id).delete()
    return AgreementReport.objects.get(pk=report_id)


def agreement_chunk_fail(*, report_id: int, attempt: str, error: str) -> AgreementReport:
    return _finish_failed(report_id, attempt, error)


def _fail_if_worker_lost(report: AgreementReport) -> AgreementReport:
    """A run whose workers stopped reporting is failed; its figures were never published,
    and the last finished ones (`data`) stay. Its chunks' parts go with it."""
    if not report.attempt:  # queued: no worker has taken it yet, so none was lost
        return report
    running_under = report.attempt if report.status == ReportStatus.RUNNING else ""
    report = job_fail_if_worker_lost(
        report,
        error=(
            f"the worker computing this report stopped (no report for "
            f"{settings.JOB_HEARTBEAT_TIMEOUT_SECONDS} s); "
            "the previous report is kept; refresh it again"
        ),
    )
    if running_under and report.status == ReportStatus.FAILED:
        AgreementPart.objects.filter(report_id=report.pk, attempt=running_under).delete()
    return report


def agreement_report_sweep() -> dict:
    """What killed runs leave, cleared without waiting for someone to open the report
    (Celery beat runs it every `AGREEMENT_SWEEP_INTERVAL_SECONDS`): running reports whose
    workers went silent for `JOB_HEARTBEAT_TIMEOUT_SECONDS` are failed in words, their
    last finished figures kept, as a failed chunk leaves them; and the parts that no
    running attempt will read are removed. A report still queued (no attempt yet) waits
    for a worker to take its job."""
    lost = 0
    for report in AgreementReport.objects.filter(status=ReportStatus.RUNNING).exclude(attempt=""):
        lost += _fail_if_worker_lost(report).status == ReportStatus.FAILED
    parts, _ = AgreementPart.objects.exclude(
        report__status=ReportStatus.RUNNING, attempt=F("report__attempt")
    ).delete()
    return {"lost_reports": lost, "parts": parts}


def agreement_report_get(*, project: Project) -> tuple[AgreementReport, bool]:
    """The cached report and whether newer annotations have arrived since it was computed."""
    report, news = agreement_report_with_news(project=project)
    return report, news != 0


def agreement_report_with_news(*, project: Project) -> tuple[AgreementReport, int]:
    """The cached report and how many annotations were submitted since it was computed (0
    unless it is ready; below 0 when annotations it counted have gone)."""
    report, _ = AgreementReport.objects.get_or_create(project=project)
    report = _fail_if_worker_lost(report)
    if report.status != ReportStatus.READY:
        return report, 0
    return report, _submitted_count(project) - report.annotations_seen


@transaction.atomic
def agreement_report_request(*, project: Project) -> AgreementReport:
    report, _ = AgreementReport.objects.select_for_update().get_or_create(project=project)
    if report.status != ReportStatus.RUNNING:
        report.status = ReportStatus.RUNNING
        report.attempt, report.phase = "", "queued"
        report.progress, report.progress_done, report.progress_total = 0, 0, 0
        report.save(
            update_fields=[
                "status",
                "attempt",
                "phase",
                "progress",
                "progress_done",
                "progress_total",
            ]
        )
        # Unqueued, it would stay "running" with no worker, and every later request would
        # find it running and queue nothing.
        task_send_on_commit(
            "qc.tasks.agreement_report_job",
            project.pk,
            unsent=lambda: _finish_failed(
                report.pk,
                "",
                "the job queue was unavailable, so this refresh never started; "
                "the previous report is kept; refresh it again",
            ),
        )
    return report
