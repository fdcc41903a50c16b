"""The automatic checks on every submission: flags on the annotation, agreement with its
co-annotators, the worker's aggregates, and blocking when a limit is crossed.

They run apart from the submit, so the annotator's submit stays fast: with a broker, a
sweep that Celery beat starts every QC_CHECK_INTERVAL_SECONDS checks what is unchecked;
without one, the submit's receiver checks the annotation once it commits. Every step is
idempotent, so checking an annotation twice changes nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import defaultdict, namedtuple
from collections.abc import Iterator
from typing import Protocol

import numpy as np
from django.db import connection, transaction
from django.db.models import F, Max, Window
from django.db.models.functions import RowNumber

from annotate.models import Annotation, AssignmentStatus, Project, RationaleSpan
from annotate.selectors import items_token_texts
from annotate.tokenization import stop_word_rule
from config.bulk_sql import rows_update
from qc.flag_rules import (
    EMPTY,
    FIRST_TOKENS,
    LOW_AGREEMENT,
    STOPWORDS,
    TOO_FAST,
    WorkerFigures,
    low_agreement_flag,
    stopword_share,
    submission_flags,
    worker_aggregates,
    worker_assessment,
)
from qc.models import ProjectWorker, QualificationStatus, QualityFlag, SubmissionCheck
from qc.selectors import annotations_without_checks
from qc.services.qualification import project_worker_block, quality_policy_get
from rationale_metrics.agreement import against_majority, majority_vote, mean_pairwise_kappa

SUBMISSION_FLAG_KINDS = (EMPTY, TOO_FAST, STOPWORDS, FIRST_TOKENS)

# With a broker, submissions are not checked one task each: a submit publishes nothing, and
# Celery beat starts a sweep every QC_CHECK_INTERVAL_SECONDS (config/settings/base.py) that
# checks every recent submission with no check yet. At 100 submits a second, a task per
# submit cost more in the web process (publishing) and in the worker (a connection's worth
# of queries per annotation) than checking them did. A sweep checks at most
# CHECK_BATCHES_PER_SWEEP batches, updates the standings and ends, and the next one goes on:
# the worker's other tasks get a turn, and standings do not wait for a whole backlog.
CHECK_BATCHES_PER_SWEEP = 10
# The checks share the machine with the annotators' requests. Checked all at once, a
# second's submissions took most of a core for a tenth of a second, and the requests
# caught in that tenth took half as long again as the others: at 50 annotators on two
# cores the p99 was 1.7 times the median. So a sweep that is keeping up checks small
# batches and rests after each, up to as long as the batch took (at most half the
# worker's time, in short slices): the p99 fell to 1.4 times the median, for a little
# more work per submission. The rest shortens as the backlog grows; CHECKS_CATCH_UP_BACKLOG
# or more behind, the sweep checks big batches without rest until it is close again, so
# the checks never fall far behind. A batch costs about 36 ms before its first
# submission (some fifteen queries, each built by the ORM) and 0.3 ms per submission
# after, so 50 a batch took a sixth longer than 25 and half the CPU per submission
# (1.0 against 1.7 ms with PostgreSQL's share, in-process); on the load bench the
# worker's CPU per submit fell by about a quarter.
CHECK_BATCH_SIZE = 50
CHECKS_REST_RATIO = 1.0
CHECKS_CATCH_UP_BACKLOG = 500
CHECK_CATCH_UP_BATCH_SIZE = 200
# Unchecked submissions are sought among the newest: ids from this far below the newest
# checked one. Older ones left unchecked are for `qc_check_missing`.
RECENT_WINDOW = 20_000
# Per-worker aggregates cover the worker's most recent submissions in the project, so a
# check costs the same on a worker's ten-thousandth item as on the tenth, and a worker
# who has improved is judged on their current work.
AGGREGATE_WINDOW = 200


# A submission as a batch of checks reads it: each field and the column it comes from.
_SUBMITTED_COLUMNS = {
    "pk": "pk",
    "time_spent_ms": "time_spent_ms",
    "item_id": "assignment__item_id",
    "variant_id": "assignment__variant_id",
    "round": "assignment__round",
    "worker_id": "assignment__worker_id",
    "project_id": "assignment__item__project_id",
}
_Submitted = namedtuple("_Submitted", list(_SUBMITTED_COLUMNS))


def _chosen_by_annotation(offsets_by_annotation: dict[int, dict[str, int]]) -> dict[int, set[int]]:
    """Each annotation's highlighted tokens, as indexes into its item's concatenated
    documents (`offsets_by_annotation` gives each annotation's docid offsets)."""
    chosen: dict[int, set[int]] = {a: set() for a in offsets_by_annotation}
    for annotation_id, docid, start, end in RationaleSpan.objects.filter(
        rationale_set__annotation_id__in=list(offsets_by_annotation)
    ).values_list("rationale_set__annotation_id", "document__docid", "start_token", "end_token"):
        base = offsets_by_annotation[annotation_id][docid]
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
        rows_update(QualityFlag, changed, ["value", "detail"])


class Clock(Protocol):
    """What the sweep's pacing reads and waits on; tests pass one that only records."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM_CLOCK = SystemClock()

# One sweep at a time, by a PostgreSQL advisory lock on the sweep's own connection rather
# than a cache key with a time to live. The lock needs no guess at how long a sweep may
# take: PostgreSQL releases it when the holder unlocks or its connection ends, so a killed
# worker frees it at once, where a key would hold the checks back until it expired (and
# one that expired mid-sweep would let a second sweep check the same batch). "RWQC" in
# ASCII: no other advisory lock of this database uses it.
CHECKS_SWEEP_LOCK = 0x5257_5143


@contextlib.contextmanager
def _sweep_lock() -> Iterator[bool]:
    """Whether this sweep may run: False while another holds the lock (never waits)."""
    if connection.vendor != "postgresql":
        # SQLite runs without a broker (make run, the suite): no beat, so no second sweep.
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [CHECKS_SWEEP_LOCK])
        (acquired,) = cursor.fetchone()
    try:
        yield acquired
    finally:
        if acquired:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [CHECKS_SWEEP_LOCK])


def quality_checks_sweep(*, clock: Clock = SYSTEM_CLOCK) -> int:
    """Check the recent submissions that have no check yet, a batch at a time, then update
    their workers' standings. Returns how many were checked: 0 when another sweep is
    running (it checks them) or nothing is waiting."""
    with _sweep_lock() as alone:
        if not alone:
            return 0
        newest = SubmissionCheck.objects.aggregate(newest=Max("annotation_id"))["newest"] or 0
        checked: list[int] = []
        for _batch in range(CHECK_BATCHES_PER_SWEEP):
            pending = annotations_without_checks(
                limit=CHECKS_CATCH_UP_BACKLOG, after_id=max(0, newest - RECENT_WINDOW)
            )
            catching_up = len(pending) >= CHECKS_CATCH_UP_BACKLOG
            ids = pending[: CHECK_CATCH_UP_BATCH_SIZE if catching_up else CHECK_BATCH_SIZE]
            if not ids:
                break
            batch_started = clock.monotonic()
            annotation_quality_checks(annotation_ids=ids, standings=False)
            checked += ids
            if len(pending) == len(ids):
                # Caught up. What arrives from now on is the next sweep's: checked as they
                # trickled in, batches held a few submissions each and cost nearly what a
                # full one costs.
                break
            if not catching_up:
                # The further behind, the shorter the rest: under load a batch takes longer,
                # and a fixed rest let the backlog grow to the catch-up mark, then cleared it
                # in one burst, which is what resting was to avoid.
                behind = len(pending) / CHECKS_CATCH_UP_BACKLOG
                took = clock.monotonic() - batch_started
                clock.sleep(took * CHECKS_REST_RATIO * (1 - behind))
        # Once per sweep rather than per batch: a worker's standing reads their last
        # AGGREGATE_WINDOW checks, and under load a batch held about one submission per
        # worker, so this read was most of the sweep's work. (A sweep killed before this
        # point leaves standings a little behind; each worker's next check brings theirs up.)
        _standings_update_after(checked)
    return len(checked)


def quality_checks_missing(*, limit: int = 10_000) -> int:
    """Check up to `limit` submissions that have no check, however old: those below the
    sweep's RECENT_WINDOW (say a check that failed in-process, without a broker) wait for
    this. Beat starts it (qc.tasks.quality_checks_missing), as does `qc_check_missing`.
    Safe to run any time: every check is idempotent. Returns how many were checked."""
    missing = annotations_without_checks(limit=limit)
    for annotation_id in missing:
        annotation_quality_check(annotation_id=annotation_id)
    return len(missing)


def annotation_quality_check(*, annotation_id: int) -> list[str]:
    """Flag one submission, update its co-annotators' agreement and the worker's
    aggregates. Returns the flag kinds now on the annotation."""
    return annotation_quality_checks(annotation_ids=[annotation_id]).get(annotation_id, [])


@transaction.atomic
def annotation_quality_checks(*, annotation_ids, standings: bool = True) -> dict[int, list[str]]:
    """Flag submissions, update their co-annotators' agreement and (unless `standings` is
    False, for a caller who updates them later) their workers' aggregates: the checks of
    `annotation_quality_check` for many at once, each read done once for the whole batch.
    Returns the flag kinds now on each annotation."""
    # Plain rows: with select_related, each of a batch's fifty submissions came with its
    # assignment, item and (wide) project as model instances, a fifth of the batch's time.
    batch = [
        _Submitted(*row)
        for row in Annotation.objects.filter(pk__in=list(annotation_ids))
        .order_by("pk")
        .values_list(*_SUBMITTED_COLUMNS.values())
    ]
    if not batch:  # deleted since; nothing to check
        return {}
    projects = Project.objects.in_bulk({a.project_id for a in batch})
    item_project = {a.item_id: a.project_id for a in batch}
    policies = {pk: quality_policy_get(project) for pk, project in projects.items()}
    thresholds = {pk: policy.flag_thresholds() for pk, policy in policies.items()}
    texts = items_token_texts({a.item_id for a in batch})

    # Co-annotators: the same item, variant and round. An item carries a group per
    # variant; read as plain rows, the groups the batch does not touch cost little.
    keys = {(a.item_id, a.variant_id, a.round) for a in batch}
    groups: dict[tuple[int, int, int], list[int]] = {key: [] for key in keys}
    item_of: dict[int, int] = {a.pk: a.item_id for a in batch}
    for member_id, *key in (
        Annotation.objects.filter(
            assignment__item_id__in={item for item, _, _ in keys},
            assignment__status=AssignmentStatus.SUBMITTED,
        )
        .order_by("pk")
        .values_list("pk", "assignment__item_id", "assignment__variant_id", "assignment__round")
    ):
        group = groups.get(tuple(key))
        if group is not None:
            group.append(member_id)
            item_of[member_id] = key[0]
    chosen = _chosen_by_annotation(
        {pk: texts.get(item_id, ([], {}))[1] for pk, item_id in item_of.items()}
    )

    wanted: dict[int, list] = {}
    kinds_of: dict[int, tuple] = {}
    figures: dict[int, dict] = {}
    for annotation in batch:
        project = projects[annotation.project_id]
        token_texts = texts.get(annotation.item_id, ([], {}))[0]
        stop_words = stop_word_rule(project.language)
        mine = chosen[annotation.pk]
        seconds = annotation.time_spent_ms / 1000
        wanted[annotation.pk] = submission_flags(
            token_texts=token_texts,
            chosen=mine,
            seconds=seconds,
            stop_words=stop_words,
            thresholds=thresholds[project.pk],
        )
        kinds_of[annotation.pk] = SUBMISSION_FLAG_KINDS
        figures[annotation.pk] = {
            "project_id": project.pk,
            "worker_id": annotation.worker_id,
            "highlighted": len(mine),
            "seconds": seconds,
            "stopword_share": stopword_share(token_texts, mine, stop_words),
        }
    checks = _submission_checks_write(figures)

    agreement: dict[int, dict] = {}
    for (item_id, _, _), group in groups.items():
        if len(group) < 2:
            continue
        n_tokens = len(texts.get(item_id, ([], {}))[0])
        project_thresholds = thresholds[item_project[item_id]]
        matrix = np.zeros((len(group), n_tokens), dtype=bool)
        for row, member in enumerate(group):
            matrix[row, list(chosen[member])] = True
        majority = majority_vote(matrix)
        for row, member in enumerate(group):
            others = [chosen[other] for other in group if other != member]
            kappa = _mean_kappa_with(chosen[member], others, n_tokens)
            agreement[member] = {
                "coannotator_kappa": kappa,
                "majority_kappa": against_majority(matrix[row], majority)["kappa"],
            }
            flag = low_agreement_flag(kappa, project_thresholds)
            wanted.setdefault(member, []).extend([flag] if flag else [])
            kinds_of[member] = (*kinds_of.get(member, ()), LOW_AGREEMENT)
    _agreement_write(agreement, checks)
    _flags_replace(wanted, kinds_of)
    # The submitting workers' aggregates now; co-annotators' move with their own next
    # submission (their agreement changed only through these annotations).
    workers_by_project: dict[int, set[int]] = defaultdict(set)
    for values in figures.values():
        workers_by_project[values["project_id"]].add(values["worker_id"])
    for project_id, worker_ids in sorted(workers_by_project.items()) if standings else ():
        worker_standings_update(
            project=projects[project_id], worker_ids=sorted(worker_ids), policy=policies[project_id]
        )
    kinds: dict[int, list[str]] = {a.pk: [] for a in batch}
    for annotation_id, kind in QualityFlag.objects.filter(
        annotation_id__in=list(kinds)
    ).values_list("annotation_id", "kind"):
        kinds[annotation_id].append(kind)
    return kinds


@transaction.atomic
def _standings_update_after(annotation_ids: list[int]) -> None:
    """The standings of the workers who submitted these (checked) annotations."""
    workers_by_project: dict[int, set[int]] = defaultdict(set)
    for project_id, worker_id in (
        Annotation.objects.filter(pk__in=annotation_ids)
        .values_list("assignment__item__project_id", "assignment__worker_id")
        .distinct()
    ):
        workers_by_project[project_id].add(worker_id)
    for project in Project.objects.filter(pk__in=list(workers_by_project)).order_by("pk"):
        worker_standings_update(project=project, worker_ids=sorted(workers_by_project[project.pk]))


def _submission_checks_write(figures: dict[int, dict]) -> dict[int, SubmissionCheck]:
    """Create or update each annotation's SubmissionCheck with these figures (agreement is
    written apart); returns the rows by annotation."""
    rows = {
        c.annotation_id: c for c in SubmissionCheck.objects.filter(annotation_id__in=list(figures))
    }
    new, changed = [], []
    for annotation_id, values in figures.items():
        row = rows.get(annotation_id)
        if row is None:
            new.append(SubmissionCheck(annotation_id=annotation_id, **values))
            continue
        for name, value in values.items():
            setattr(row, name, value)
        changed.append(row)
    if changed:
        rows_update(SubmissionCheck, changed, list(next(iter(figures.values()))))
    if new:
        # A concurrent check of the same annotation may create its row first; it wrote
        # the same figures. Read the rows back either way for their ids.
        SubmissionCheck.objects.bulk_create(new, ignore_conflicts=True)
        created = [row.annotation_id for row in new]
        rows |= {
            c.annotation_id: c for c in SubmissionCheck.objects.filter(annotation_id__in=created)
        }
    return rows


def _agreement_write(agreement: dict[int, dict], checks: dict[int, SubmissionCheck]) -> None:
    """Store each annotation's agreement with its co-annotators on its check, where the
    annotation has been checked (the others get theirs when they are)."""
    missing = [pk for pk in agreement if pk not in checks]
    checks = checks | {
        c.annotation_id: c for c in SubmissionCheck.objects.filter(annotation_id__in=missing)
    }
    rows = []
    for annotation_id, values in agreement.items():
        row = checks.get(annotation_id)
        if row is not None:
            row.coannotator_kappa = values["coannotator_kappa"]
            row.majority_kappa = values["majority_kappa"]
            rows.append(row)
    rows_update(SubmissionCheck, rows, ["coannotator_kappa", "majority_kappa"])


def _mean_kappa_with(mine: set[int], others: list[set[int]], n_tokens: int) -> float | None:
    """Mean kappa of one annotation with each co-annotator (undefined pairs left out)."""
    values = [mean_pairwise_kappa([mine, other], n_tokens)[0] for other in others]
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def worker_standing_update(*, project, worker_id: int, policy=None) -> ProjectWorker | None:
    """Recompute a worker's aggregates from their checks; warn, and block automatically
    when a block limit is crossed and the project allows it."""
    worker_standings_update(project=project, worker_ids=[worker_id], policy=policy)
    return ProjectWorker.objects.filter(project=project, worker_id=worker_id).first()


# SubmissionCheck's columns of the same names, in WorkerFigures' order.
_FIGURE_COLUMNS = tuple(field.name for field in dataclasses.fields(WorkerFigures))
_NO_FIGURES = WorkerFigures(*[()] * len(_FIGURE_COLUMNS))
_CHECKS = SubmissionCheck._meta.db_table

# Each worker's most recent checks, a column per figure: a walk down the index on
# (project, worker, annotation) that stops after AGGREGATE_WINDOW rows, per worker. A sweep
# updates the standings of every worker in its batches, about one submission each under
# load; read as rows, their windows were ten thousand Python tuples a sweep, most of the
# checks' cost, and a window over each worker's whole history grew with it.
_RECENT_FIGURES = f"""
SELECT w.worker_id, recent.*
FROM unnest(%(workers)s::bigint[]) AS w(worker_id)
CROSS JOIN LATERAL (
    SELECT {", ".join(f"array_agg(c.{c} ORDER BY c.annotation_id DESC)" for c in _FIGURE_COLUMNS)}
    FROM (
        SELECT c.annotation_id, {", ".join(f"c.{c}" for c in _FIGURE_COLUMNS)}
        FROM {_CHECKS} c
        WHERE c.project_id = %(project)s AND c.worker_id = w.worker_id
        ORDER BY c.annotation_id DESC
        LIMIT %(window)s
    ) c
) recent
"""  # noqa: S608 - only model table and column names are interpolated


def _recent_figures(project, worker_ids) -> dict[int, WorkerFigures]:
    """The figures of each worker's AGGREGATE_WINDOW most recent checks in the project."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                _RECENT_FIGURES,
                {"workers": list(worker_ids), "project": project.pk, "window": AGGREGATE_WINDOW},
            )
            return {
                worker_id: WorkerFigures(*columns)
                for worker_id, *columns in cursor
                if columns[0] is not None  # no checks: the aggregates of nothing are NULL
            }
    recent = (
        SubmissionCheck.objects.filter(project=project, worker_id__in=list(worker_ids))
        .annotate(
            recency=Window(
                RowNumber(), partition_by=[F("worker_id")], order_by=F("annotation_id").desc()
            )
        )
        .filter(recency__lte=AGGREGATE_WINDOW)
        .order_by("worker_id", "-annotation_id")
        .values_list("worker_id", *_FIGURE_COLUMNS)
    )
    rows_by_worker: dict[int, list[tuple]] = defaultdict(list)
    for worker_id, *values in recent:
        rows_by_worker[worker_id].append(values)
    return {
        worker_id: WorkerFigures(*(list(column) for column in zip(*rows, strict=True)))
        for worker_id, rows in rows_by_worker.items()
    }


def worker_standings_update(*, project, worker_ids, policy=None) -> None:
    """`worker_standing_update` for many workers of a project: their recent checks in one
    query, their standings in another, the changed ones written in a third."""
    policy = policy or quality_policy_get(project)
    limits = policy.worker_limits()
    figures = _recent_figures(project, worker_ids)
    changed, to_block = [], []
    for standing in ProjectWorker.objects.filter(
        project=project, worker_id__in=list(worker_ids)
    ).select_related("worker"):
        aggregates = worker_aggregates(figures.get(standing.worker_id, _NO_FIGURES))
        warnings, blocks = worker_assessment(aggregates, limits)
        if standing.aggregates != aggregates or standing.warnings != warnings + blocks:
            standing.aggregates, standing.warnings = aggregates, warnings + blocks
            changed.append(standing)
        if blocks and policy.auto_block and standing.status != QualificationStatus.BLOCKED:
            to_block.append((standing, blocks))
    rows_update(ProjectWorker, changed, ["aggregates", "warnings"])
    for standing, blocks in to_block:
        project_worker_block(
            project=project, worker=standing.worker, reason="automatic: " + "; ".join(blocks)
        )
