"""Who may work on a project: rules on worker attributes, an optional test on gold items,
an optional manual selection by an admin, and the gate in front of "next item"."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.gates import WorkRefusal
from annotate.models import Item, Project, RationaleSpan, item_not_deleted
from annotate.selectors import item_token_texts
from annotate.services import rationale_sets_validate, worker_leases_release
from annotate.tokenization import stop_word_rule
from config.exceptions import ApplicationError, ConflictError, NotFoundError
from config.prepared_sql import PreparedStatement, columns
from config.transactions import create_unless_taken
from qc.cohorts import cohort_of
from qc.flag_rules import submission_flags
from qc.models import (
    AuditAction,
    GoldItem,
    ProjectWorker,
    QualificationAnswer,
    QualificationAttempt,
    QualificationStatus,
    QualityPolicy,
    WorkerProfile,
    WorkerRecord,
    WorkerStatus,
)
from qc.rule_bands import (
    APPROVAL_RATE_LIMITS,
    approval_rate_failure,
    approved_count_failure,
    band_problem,
)
from qc.selectors import worker_record_get
from qc.services.workers import audit_record, worker_profile_for_user
from rationale_metrics.extensions import set_f1

POLICY_FIELDS = [
    f.name
    for f in QualityPolicy._meta.get_fields()
    if f.concrete and f.name not in {"id", "project"}
]


# Read on every first visit and by every batch of checks: a plain SELECT, which costs a
# seventh of the ORM's query for this wide row.
_POLICY = PreparedStatement(
    "rw_quality_policy",
    f"SELECT {columns(QualityPolicy, 'q')} FROM {QualityPolicy._meta.db_table} q "  # noqa: S608 - model names only
    "WHERE q.project_id = %(project)s",
    [("project", "bigint")],
)


def quality_policy_get(project: Project) -> QualityPolicy:
    """The project's policy; an unsaved default one when the admin never set any."""
    found = _POLICY.instances(QualityPolicy, {"project": project.pk})
    return found[0] if found else QualityPolicy(project=project)


@transaction.atomic
def quality_policy_update(*, project: Project, **fields) -> QualityPolicy:
    unknown = set(fields) - set(POLICY_FIELDS)
    if unknown:
        raise ApplicationError(f"unknown policy field(s): {', '.join(sorted(unknown))}")
    policy, _ = QualityPolicy.objects.select_for_update().get_or_create(project=project)
    for name, value in fields.items():
        setattr(policy, name, value)
    if "allowed_locales" in fields:
        policy.allowed_locales = sorted({str(c).strip().upper() for c in policy.allowed_locales})
    # Checked on the merged row: a partial update may move one bound past the stored other.
    for problem in (
        band_problem(
            low_field="min_approval_rate",
            high_field="max_approval_rate",
            low=policy.min_approval_rate,
            high=policy.max_approval_rate,
            limits=APPROVAL_RATE_LIMITS,
        ),
        band_problem(
            low_field="min_approved_count",
            high_field="max_approved_count",
            low=policy.min_approved_count,
            high=policy.max_approved_count,
        ),
    ):
        if problem:
            field_name, message = problem
            raise ApplicationError(f"{field_name}: {message}", extra={"field": field_name})
    if (
        policy.test_enabled
        and not GoldItem.objects.filter(item_not_deleted(), item__project=project).exists()
    ):
        raise ApplicationError(
            "test_enabled: choose the test's gold items first (items with reference rationales)"
        )
    policy.save()
    return policy


def rule_failures(policy: QualityPolicy, record: WorkerRecord) -> list[str]:
    """Which attribute rules the worker fails, in words; empty when they pass. `record`
    is the policy's own project's record of the worker."""
    failures = [
        failure
        for failure in (
            approval_rate_failure(
                record.approval_rate, policy.min_approval_rate, policy.max_approval_rate
            ),
            approved_count_failure(
                record.approved_count, policy.min_approved_count, policy.max_approved_count
            ),
        )
        if failure
    ]
    if policy.allowed_locales and record.locale.upper() not in policy.allowed_locales:
        failures.append(
            f"locale {record.locale or 'unknown'} is not one of {', '.join(policy.allowed_locales)}"
        )
    if policy.masters_only and not record.is_master:
        failures.append("the project takes master workers only")
    return failures


def _admit(project: Project, worker) -> ProjectWorker:
    """First visit: decide the worker's standing from the rules and the policy."""
    record = worker_record_get(project=project, profile=worker_profile_for_user(worker))
    policy = quality_policy_get(project)
    failures = rule_failures(policy, record)
    has_test = (
        policy.test_enabled
        and GoldItem.objects.filter(item_not_deleted(), item__project=project).exists()
    )
    if failures:
        status, reason = QualificationStatus.REJECTED, "; ".join(failures)
    elif has_test:
        status, reason = QualificationStatus.TESTING, "meets the rules; the test is next"
    elif policy.manual_selection:
        status, reason = QualificationStatus.PENDING, "meets the rules; awaiting an admin"
    else:
        status, reason = QualificationStatus.QUALIFIED, "meets the rules"
    cohort = cohort_of(approval_rate=record.approval_rate, is_master=record.is_master)
    if status != QualificationStatus.REJECTED:  # one statement: the common first visit
        standing = create_unless_taken(
            ProjectWorker,
            project=project,
            worker=worker,
            status=status,
            reason=reason,
            cohort=cohort,
        )
        # None: a concurrent first visit admitted them already.
        return standing or ProjectWorker.objects.get(project=project, worker=worker)
    try:
        with transaction.atomic():  # the rejection and its audit record together
            standing = ProjectWorker.objects.create(
                project=project, worker=worker, status=status, reason=reason, cohort=cohort
            )
            audit_record(
                project=project, worker=worker, action=AuditAction.REJECT, reason=f"rules: {reason}"
            )
    except IntegrityError:  # a concurrent first visit admitted them already
        return ProjectWorker.objects.get(project=project, worker=worker)
    return standing


REFUSALS = {
    QualificationStatus.TESTING: (
        "qualification_test",
        "Please take this project's short qualification test first.",
    ),
    QualificationStatus.PENDING: (
        "pending_selection",
        "Thank you: your qualification work is waiting for an admin's decision.",
    ),
    QualificationStatus.REJECTED: (
        "not_qualified",
        "You do not meet this project's qualification requirements.",
    ),
    QualificationStatus.BLOCKED: ("blocked", "You can no longer work on this project."),
}


_STANDING = PreparedStatement(
    "rw_worker_standing",
    f"SELECT pw.status, pw.reason, wp.status FROM {ProjectWorker._meta.db_table} pw "  # noqa: S608 - model names only
    f"LEFT JOIN {WorkerProfile._meta.db_table} wp ON wp.user_id = pw.worker_id "
    "WHERE pw.project_id = %(project)s AND pw.worker_id = %(worker)s",
    [("project", "bigint"), ("worker", "bigint")],
)


def qualification_gate(*, project: Project, worker) -> WorkRefusal | None:
    """Registered with annotate's gates. One query once a worker's standing is known: a
    plain SELECT, as it runs before every "next item" (built by the ORM, the query cost
    more CPU than the database spent on it)."""
    found = _STANDING.fetchone({"project": project.pk, "worker": worker.pk})
    if found is None:
        standing = _admit(project, worker)
        row = {"status": standing.status, "reason": standing.reason}
    else:
        row = dict(zip(("status", "reason", "profile_status"), found, strict=True))
    if row.get("profile_status") == WorkerStatus.BLOCKED:
        return WorkRefusal("blocked", REFUSALS[QualificationStatus.BLOCKED][1])
    if row["status"] == QualificationStatus.QUALIFIED:
        return None
    code, message = REFUSALS[row["status"]]
    extra = {"reason": row["reason"]} if row["status"] == QualificationStatus.REJECTED else {}
    return WorkRefusal(code, message, extra)


def qualification_standing(*, project: Project, worker) -> ProjectWorker:
    """The worker's standing, deciding it on first visit."""
    # get(), not first(): one row by a unique key, without an ORDER BY compiled for it.
    try:
        return ProjectWorker.objects.get(project=project, worker=worker)
    except ProjectWorker.DoesNotExist:
        return _admit(project, worker)


# ---------------------------------------------------------------- blocking a worker
# A block or unblock is of the worker's standing, which qualification decides first.


def _standing_locked(project: Project, worker) -> ProjectWorker:
    if not ProjectWorker.objects.filter(project=project, worker=worker).exists():
        qualification_standing(project=project, worker=worker)
    return ProjectWorker.objects.select_for_update().get(project=project, worker=worker)


@transaction.atomic
def project_worker_block(*, project: Project, worker, reason: str, actor=None) -> ProjectWorker:
    if not reason.strip():
        raise ApplicationError("reason: say why the worker is blocked")
    standing = _standing_locked(project, worker)
    if standing.status == QualificationStatus.BLOCKED:
        return standing
    standing.status = QualificationStatus.BLOCKED
    standing.reason = reason
    standing.save(update_fields=["status", "reason", "updated_at"])
    # What they hold now goes back to the others: a blocked worker submits nothing more.
    worker_leases_release(project=project, worker=worker)
    audit_record(
        project=project, actor=actor, worker=worker, action=AuditAction.BLOCK, reason=reason
    )
    return standing


@transaction.atomic
def project_worker_unblock(*, project: Project, worker, reason: str, actor) -> ProjectWorker:
    if not reason.strip():
        raise ApplicationError("reason: say why the worker is unblocked")
    standing = _standing_locked(project, worker)
    if standing.status != QualificationStatus.BLOCKED:
        raise ApplicationError(f"this worker is not blocked here (status: {standing.status})")
    standing.status = QualificationStatus.QUALIFIED
    standing.reason = reason
    standing.save(update_fields=["status", "reason", "updated_at"])
    audit_record(
        project=project, actor=actor, worker=worker, action=AuditAction.UNBLOCK, reason=reason
    )
    return standing


# ---------------------------------------------------------------- gold items


@transaction.atomic
def gold_items_set(*, project: Project, annotation_ids: list[str]) -> list[GoldItem]:
    """Make these items the test's gold items (replacing any before). Each needs a
    reference rationale and must not have been served as ordinary work."""
    items = {
        i.annotation_id: i
        for i in Item.objects.filter(project=project, annotation_id__in=annotation_ids)
    }
    problems = [
        f"annotation_ids: {a!r} is not an item of this project"
        for a in annotation_ids
        if a not in items
    ]
    with_reference = set(
        RationaleSpan.objects.filter(rationale_set__reference_item__in=items.values()).values_list(
            "rationale_set__reference_item__annotation_id", flat=True
        )
    )
    problems += [
        f"annotation_ids: {a!r} has no reference rationale to score against"
        for a in items
        if a not in with_reference
    ]
    served = set(
        Item.objects.filter(
            pk__in=[i.pk for i in items.values()], assignments__isnull=False
        ).values_list("annotation_id", flat=True)
    )
    problems += [
        f"annotation_ids: {a!r} was already served as ordinary work" for a in sorted(served)
    ]
    if problems:
        raise ApplicationError(problems[0], extra={"problems": problems})
    if QualificationAnswer.objects.filter(gold_item__item__project=project).exists():
        raise ConflictError("workers have already taken this test; its gold items are fixed")
    old = GoldItem.objects.filter(item_not_deleted(), item__project=project)
    Item.objects.filter(gold__in=old).update(held_out=False)
    old.delete()
    Item.objects.filter(pk__in=[i.pk for i in items.values()]).update(held_out=True)
    return GoldItem.objects.bulk_create(
        [GoldItem(item=items[a], position=n) for n, a in enumerate(annotation_ids)]
    )


def _gold_tokens(item: Item) -> set[tuple[str, int]]:
    return {
        (docid, t)
        for docid, start, end in RationaleSpan.objects.filter(
            rationale_set__reference_item=item
        ).values_list("document__docid", "start_token", "end_token")
        for t in range(start, end)
    }


# ---------------------------------------------------------------- taking the test


def _locked_testing_standing(project: Project, worker) -> ProjectWorker:
    qualification_standing(project=project, worker=worker)
    standing = ProjectWorker.objects.select_for_update().get(project=project, worker=worker)
    if standing.status != QualificationStatus.TESTING:
        raise ConflictError(
            f"no qualification test is open for you (your status: {standing.get_status_display()})",
            extra={"code": "no_test_open"},
        )
    return standing


def _open_attempt(standing: ProjectWorker, policy: QualityPolicy) -> QualificationAttempt:
    attempt = standing.attempts.filter(finished_at__isnull=True).first()
    if attempt is not None:
        return attempt
    used = standing.attempts.count()
    if used >= policy.test_max_attempts:
        raise ConflictError("you have used every attempt at this test")
    return QualificationAttempt.objects.create(project_worker=standing, number=used + 1)


@transaction.atomic
def qualification_test_next(
    *, project: Project, worker
) -> tuple[GoldItem, QualificationAttempt, int]:
    """The next gold item of the worker's open attempt, the attempt, and how many gold
    items the test has. Never carries the gold rationale."""
    standing = _locked_testing_standing(project, worker)
    policy = quality_policy_get(project)
    attempt = _open_attempt(standing, policy)
    answered = attempt.answers.values("gold_item")
    gold = (
        GoldItem.objects.filter(item_not_deleted(), item__project=project)
        .exclude(pk__in=answered)
        .select_related("item")
        .first()
    )
    total = GoldItem.objects.filter(item_not_deleted(), item__project=project).count()
    if gold is None:
        raise ConflictError("this attempt has no unanswered item left")
    return gold, attempt, total


def _tokens_of(cleaned) -> dict[str, list[int]]:
    tokens: dict[str, set[int]] = {}
    for rows in cleaned:
        for document, start, end in rows:
            tokens.setdefault(document.docid, set()).update(range(start, end))
    return {docid: sorted(ids) for docid, ids in tokens.items()}


def _answer_flags(item: Item, tokens: dict[str, list[int]], seconds: float, policy) -> list[str]:
    texts, offsets = item_token_texts(item)
    chosen = {offsets[docid] + t for docid, ids in tokens.items() for t in ids}
    flags = submission_flags(
        token_texts=texts,
        chosen=chosen,
        seconds=seconds,
        stop_words=stop_word_rule(item.project.language),
        thresholds=policy.flag_thresholds(),
    )
    return [f.detail for f in flags]


@transaction.atomic
def qualification_answer_submit(
    *, project: Project, worker, gold_item_id: int, rationale_sets: list, time_spent_ms: int = 0
) -> QualificationAnswer:
    """Score one test answer by token F1 against the gold rationale; after the last gold
    item, decide the attempt: pass, another attempt, or not qualified."""
    standing = _locked_testing_standing(project, worker)
    policy = quality_policy_get(project)
    attempt = _open_attempt(standing, policy)
    gold = (
        GoldItem.objects.select_related("item__project")
        .filter(item_not_deleted(), pk=gold_item_id, item__project=project)
        .first()
    )
    if gold is None:
        raise NotFoundError("gold item not found in this project's test")
    if attempt.answers.filter(gold_item=gold).exists():
        raise ConflictError("this test item was already answered in this attempt")
    if not isinstance(time_spent_ms, int) or time_spent_ms < 0:
        raise ApplicationError("time_spent_ms must be a non-negative integer")
    cleaned = rationale_sets_validate(gold.item, rationale_sets, 0)
    tokens = _tokens_of(cleaned)
    answer_set = {(docid, t) for docid, ids in tokens.items() for t in ids}
    answer = QualificationAnswer.objects.create(
        attempt=attempt,
        gold_item=gold,
        tokens=tokens,
        time_spent_ms=time_spent_ms,
        f1=set_f1(answer_set, _gold_tokens(gold.item)),
        flags=_answer_flags(gold.item, tokens, time_spent_ms / 1000, policy),
    )
    total = GoldItem.objects.filter(item_not_deleted(), item__project=project).count()
    scores = list(attempt.answers.values_list("f1", flat=True))
    if len(scores) >= total:
        _attempt_finish(standing, attempt, scores, policy)
    return answer


def _attempt_finish(standing, attempt, scores, policy) -> None:
    attempt.mean_f1 = sum(scores) / len(scores)
    attempt.passed = attempt.mean_f1 >= policy.test_pass_f1
    attempt.finished_at = timezone.now()
    attempt.save(update_fields=["mean_f1", "passed", "finished_at"])
    summary = f"test attempt {attempt.number}: mean token F1 {attempt.mean_f1:.2f}, pass mark {policy.test_pass_f1:g}"
    if attempt.passed and policy.manual_selection:
        standing.status, standing.reason = QualificationStatus.PENDING, f"passed {summary}"
    elif attempt.passed:
        standing.status, standing.reason = QualificationStatus.QUALIFIED, f"passed {summary}"
        audit_record(
            project=standing.project,
            worker=standing.worker,
            action=AuditAction.ACCEPT,
            reason=f"passed {summary}",
        )
    elif attempt.number >= policy.test_max_attempts:
        standing.status, standing.reason = (
            QualificationStatus.REJECTED,
            f"failed {summary}, no attempts left",
        )
        audit_record(
            project=standing.project,
            worker=standing.worker,
            action=AuditAction.REJECT,
            reason=standing.reason,
        )
    else:
        standing.reason = (
            f"failed {summary}; {policy.test_max_attempts - attempt.number} attempt(s) left"
        )
    standing.save(update_fields=["status", "reason", "updated_at"])


# ---------------------------------------------------------------- manual selection


@transaction.atomic
def candidate_decide(
    *, project: Project, worker, accept: bool, actor, reason: str = ""
) -> ProjectWorker:
    """An admin accepts or rejects a candidate (after the test, or to override the rules)."""
    standing = (
        ProjectWorker.objects.select_for_update().filter(project=project, worker=worker).first()
    )
    if standing is None:
        raise NotFoundError("this worker has not applied to this project")
    if standing.status == QualificationStatus.BLOCKED:
        raise ConflictError("this worker is blocked; unblock them instead")
    standing.status = QualificationStatus.QUALIFIED if accept else QualificationStatus.REJECTED
    standing.reason = reason.strip() or (
        "accepted by an admin" if accept else "rejected by an admin"
    )
    standing.save(update_fields=["status", "reason", "updated_at"])
    audit_record(
        project=project,
        actor=actor,
        worker=worker,
        action=AuditAction.ACCEPT if accept else AuditAction.REJECT,
        reason=standing.reason,
    )
    return standing
