"""The automatic checks on every submission: flags on the annotation, agreement with its
co-annotators, the worker's aggregates, and blocking when a limit is crossed.

Runs after the submit commits (a Celery task, eager without a broker), so the annotator's
submit stays fast; every step is idempotent, so a retried task changes nothing.
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict, namedtuple

import numpy as np
from django.core.cache import cache
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
from qc.services.qualification import quality_policy_get
from qc.services.workers import project_worker_block
from rationale_metrics.agreement import against_majority, majority_vote, mean_pairwise_kappa

SUBMISSION_FLAG_KINDS = (EMPTY, TOO_FAST, STOPWORDS, FIRST_TOKENS)

# With a broker, submissions are not checked one task each: a submit makes sure one batch
# job is queued (a cache key says one is, and when it starts), and the job checks every
# submission that has no check yet. At 100 submits a second, a task per submit cost more
# in the web process (publishing) and in the worker (a connection's worth of queries per
# annotation) than checking them did.
CHECKS_QUEUED_KEY = "rw:qc:batch-queued"
CHECKS_QUEUED_TTL_SECONDS = 120  # a lost job delays the next one at most this long
CHECKS_DELAY_SECONDS = 0.5  # a batch gathers the submissions of this long
CHECK_BATCHES_PER_JOB = 10  # then the job queues its successor, so other jobs get a turn
# The checks share the machine with the annotators' requests. Checked all at once, a
# second's submissions took most of a core for a tenth of a second, and the requests
# caught in that tenth took half as long again as the others: at 50 annotators on two
# cores the p99 was 1.7 times the median. So a job that is keeping up checks small
# batches and rests after each, up to as long as the batch took (at most half the
# worker's time, in short slices): the p99 fell to 1.4 times the median, for a little
# more work per submission. The rest shortens as the backlog grows; CHECKS_CATCH_UP_BACKLOG
# or more behind, the job checks big batches without rest until it is close again, so
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
# checked one. Older ones (the broker was down) are for `qc_check_missing`.
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


def quality_checks_request(*, annotation_id: int) -> None:
    """A submission was committed: check it now when tasks run in-process (no broker),
    else make sure a batch job is queued. Raises when the broker cannot be reached; the
    submission stands and a later job or `qc_check_missing` checks it."""
    from qc.tasks import quality_checks_job

    if quality_checks_job.app.conf.task_always_eager:
        annotation_quality_checks(annotation_ids=[annotation_id])
        return
    _checks_job_queue(countdown=CHECKS_DELAY_SECONDS)


# Until when (Unix time) this process need not ask whether a job is queued.
_queued_job_waits_until = 0.0
# How far clocks may disagree: the web processes' with one another and with the worker's,
# which starts a job no earlier than the time its publisher wrote on it.
CLOCK_MARGIN_SECONDS = 0.1
# A process that finds a job queued asks again no sooner than this, even when the job is
# late to start (its worker still busy with the one before): at 140 submits a second, late
# jobs had every submit of every process asking, two round trips each. What is committed
# while a process does not ask is the job's to check: it looks once more this long after
# it started (`quality_checks_run`).
ASK_INTERVAL_SECONDS = 1.0


def _checks_job_queue(*, countdown: float) -> None:
    """Queue the batch job unless one is queued already (the cache key says so, and holds
    the time it will start).

    A submission committed before a queued job starts is checked by that job, and one
    committed within ASK_INTERVAL_SECONDS of its start by the job's last look. So having
    seen a job queued, this process neither queues another nor asks the cache until that
    job may have started and ASK_INTERVAL_SECONDS have passed: at a hundred submits a
    second, asking each time was two Redis round trips per submit for nothing."""
    global _queued_job_waits_until
    from qc.tasks import quality_checks_job

    now = time.time()
    if now < _queued_job_waits_until:
        return
    starts_at = now + countdown
    if cache.add(CHECKS_QUEUED_KEY, starts_at, timeout=CHECKS_QUEUED_TTL_SECONDS):
        try:
            quality_checks_job.apply_async(countdown=countdown)
        except Exception:
            cache.delete(CHECKS_QUEUED_KEY)  # the next submit tries again
            raise
    else:
        queued = cache.get(CHECKS_QUEUED_KEY)
        starts_at = queued if isinstance(queued, float) else 0.0
    _queued_job_waits_until = max(starts_at - CLOCK_MARGIN_SECONDS, now + ASK_INTERVAL_SECONDS)


def checks_queued_job_forget() -> None:
    """Forget what this process knew of a queued job (a job starting, or a test)."""
    global _queued_job_waits_until
    _queued_job_waits_until = 0.0


def quality_checks_run(*, last_look: bool = False) -> int:
    """The batch job: check the recent submissions that have no check yet, a batch at a
    time; queue a successor when more remain. Returns how many were checked.

    Processes that saw this job queued may go on without asking for ASK_INTERVAL_SECONDS
    after it starts (`_checks_job_queue`), so unless it has run that long it queues its
    own last look (`last_look`), which checks what they committed meanwhile."""
    started = time.time()
    # What this process knew of a queued job is out of date: it may be this very job, and
    # then the successor it queues below must not be skipped.
    checks_queued_job_forget()
    if last_look and cache.get(CHECKS_QUEUED_KEY) is not None:
        return 0  # a job queued since starts later and checks all this look would
    if not last_look:
        cache.delete(CHECKS_QUEUED_KEY)  # submissions from now on queue the next job
    newest = SubmissionCheck.objects.aggregate(newest=Max("annotation_id"))["newest"] or 0
    checked: list[int] = []
    for _batch in range(CHECK_BATCHES_PER_JOB):
        pending = annotations_without_checks(
            limit=CHECKS_CATCH_UP_BACKLOG, after_id=max(0, newest - RECENT_WINDOW)
        )
        catching_up = len(pending) >= CHECKS_CATCH_UP_BACKLOG
        ids = pending[: CHECK_CATCH_UP_BATCH_SIZE if catching_up else CHECK_BATCH_SIZE]
        batch_started = time.monotonic()
        if ids:
            annotation_quality_checks(annotation_ids=ids, standings=False)
            checked += ids
        if len(pending) == len(ids):
            # Caught up. What arrives from now on is the next job's, which the submits
            # queue: checked as they trickled in, batches held a few submissions each
            # and cost nearly what a full one costs.
            wait = started + ASK_INTERVAL_SECONDS + CLOCK_MARGIN_SECONDS - time.time()
            if not last_look and wait > 0:
                _checks_last_look_queue(countdown=wait)
            break
        if not catching_up:
            # The further behind, the shorter the rest: under load a batch takes longer,
            # and a fixed rest let the backlog grow to the catch-up mark, then cleared it
            # in one burst, which is what resting was to avoid.
            behind = len(pending) / CHECKS_CATCH_UP_BACKLOG
            _rest((time.monotonic() - batch_started) * CHECKS_REST_RATIO * (1 - behind))
    else:
        _checks_job_queue(countdown=0)
    # Once per job rather than per batch: a worker's standing reads their last
    # AGGREGATE_WINDOW checks, and under load a batch held about one submission per
    # worker, so this read was most of the job's work. (A job killed before this point
    # leaves standings a little behind; each worker's next check brings theirs up.)
    _standings_update_after(checked)
    return len(checked)


def _rest(seconds: float) -> None:
    """The pause after a batch (a function of its own, for tests)."""
    time.sleep(seconds)


def _checks_last_look_queue(*, countdown: float) -> None:
    """Queue a job's last look. It leaves the cache key alone: no process waits on it."""
    from qc.tasks import quality_checks_job

    quality_checks_job.apply_async(kwargs={"last_look": True}, countdown=countdown)


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
# (project, worker, annotation) that stops after AGGREGATE_WINDOW rows, per worker. A job
# updates the standings of every worker in its batches, about one submission each under
# load; read as rows, their windows were ten thousand Python tuples a job, most of the
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
