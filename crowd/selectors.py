"""Reads of the crowd app: study links, a worker's session and its progress, earnings
from the platform's own records, bonus files, effective hourly pay, and the summary the
datasheet reports (platform and payment, the seed study's Table 6)."""

from __future__ import annotations

import bisect
import csv
import io
import statistics
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from annotate.models import Annotation, InstructionVariant, Project, WorkerVariantBinding
from config.exceptions import NotFoundError
from crowd import payments
from crowd.models import CrowdSession, SessionStatus, StudyLink
from crowd.platforms import MTURK, PROLIFIC, completion_token_valid
from qc.models import Platform, ProjectWorker, VerdictOutcome, WorkerProfile, WorkerStatus

# ---------------------------------------------------------------- links


def study_link_list(*, project: Project) -> QuerySet[StudyLink]:
    by_status = {
        f"sessions_{status}": Count("sessions", filter=Q(sessions__status=status))
        for status in SessionStatus.values
    }
    return (
        StudyLink.objects.filter(project=project)
        .select_related("variant")
        .annotate(**by_status)
        .order_by("-created_at", "-pk")
    )


def study_link_get(*, project: Project, link_id: int) -> StudyLink:
    """A link of this project; a link of another project is not found (ids do not leak)."""
    link = study_link_list(project=project).filter(pk=link_id).first()
    if link is None:
        raise NotFoundError("study link not found")
    return link


def one_or_none(queryset: QuerySet, **unique_lookup):
    """The row a unique lookup names, or None. get(), not first(): first() orders its one
    row by the model's ordering, an ORDER BY compiled (joins included) for nothing, on
    each of a crowd launch's thousands of arrivals."""
    try:
        return queryset.get(**unique_lookup)
    except queryset.model.DoesNotExist:
        return None


def study_link_by_key(*, key: str) -> StudyLink | None:
    """The link alone: an arrival needs its project's id, not the project's row, and its
    variant by id (`link_variant_current`). Joining both cost a fifth of an arrival's
    Python time in compiling their columns; a path that does read `link.project` loads
    it then."""
    return one_or_none(StudyLink.objects.all(), key=key)


def link_variant_current(link: StudyLink) -> InstructionVariant | None:
    """The variant the link's recruits work under. Editing a used variant makes a new
    version and retires the old one; the link follows the name to its active version."""
    if link.variant_id is None:
        return None
    current = InstructionVariant.objects.filter(pk=link.variant_id, active=True).first()
    if current is not None:
        return current
    return (
        InstructionVariant.objects.filter(
            project_id=link.project_id,
            name__in=InstructionVariant.objects.filter(pk=link.variant_id).values("name"),
            active=True,
        )
        .order_by("-version")
        .first()
    )


# ---------------------------------------------------------------- sessions


def crowd_session_get_for_worker(
    *, session_id: int, worker, with_project: bool = True
) -> CrowdSession:
    """The signed-in worker's own session, with its link (and the link's project unless
    `with_project` is False: the consent page and its answer never read the project);
    anyone else's is not found."""
    try:
        # get(), not first(): first() ordered one row by the model's ordering, and
        # compiling that ORDER BY was a fifth of the query's Python cost on each of the
        # crowd's pages (consent, its answer, the workspace).
        # The link's variant is not joined: the pages read its id alone, and its columns
        # cost compiling on each of them.
        return CrowdSession.objects.select_related("link__project" if with_project else "link").get(
            pk=session_id, worker_id=getattr(worker, "pk", None)
        )
    except CrowdSession.DoesNotExist:
        raise NotFoundError("session not found") from None


def session_awaiting_consent(*, worker, project_id: int) -> CrowdSession | None:
    """The worker's latest session in the project whose consent is still to be answered."""
    return (
        CrowdSession.objects.filter(
            worker_id=getattr(worker, "pk", None),
            link__project_id=project_id,
            status=SessionStatus.STARTED,
        )
        .order_by("-started_at", "-pk")
        .first()
    )


def session_list(*, link: StudyLink) -> QuerySet[CrowdSession]:
    return CrowdSession.objects.filter(link=link).select_related("worker__worker_profile")


def session_items_from(session: CrowdSession):
    """Where the session's items start: its own start, or the end of the worker's latest
    other completed session in the project, whichever is later."""
    if session.items_from is not None:
        return session.items_from
    previous = (
        CrowdSession.objects.filter(
            worker_id=session.worker_id,
            link__project_id=session.link.project_id,
            status=SessionStatus.COMPLETED,
        )
        .exclude(pk=session.pk)
        .aggregate(last=Max("completed_at"))["last"]
    )
    return max(session.started_at, previous) if previous else session.started_at


def session_items_count(session: CrowdSession) -> int:
    """Annotations the worker submitted in the project during the session."""
    rows = Annotation.objects.filter(
        assignment__worker_id=session.worker_id,
        assignment__item__project_id=session.link.project_id,
        created_at__gt=session_items_from(session),
    )
    if session.completed_at is not None:
        rows = rows.filter(created_at__lte=session.completed_at)
    return rows.count()


def session_progress(session: CrowdSession) -> dict:
    items = session.items_done if session.ended else session_items_count(session)
    return {
        "id": session.pk,
        "status": session.status,
        "items_done": items,
        "items_required": session.link.items_required,
        "pays_extra_items": session.link.pays_extra_items,
        "ended": session.ended,
    }


def worker_standing(*, project: Project, worker) -> tuple[str | None, str]:
    """The worker's qualification status in the project (None before their first visit)
    and its reason; a profile blocked everywhere counts as blocked."""
    standing = ProjectWorker.objects.filter(project=project, worker=worker).first()
    profile = getattr(worker, "worker_profile", None)
    if profile is not None and profile.status == WorkerStatus.BLOCKED:
        return "blocked", "blocked on every project"
    if standing is None:
        return None, ""
    return standing.status, standing.reason


# ---------------------------------------------------------------- earnings


def pay_terms(link: StudyLink) -> payments.PayTerms:
    return payments.PayTerms(
        items_required=link.items_required,
        reward_per_session=link.reward_per_session,
        reward_per_item=link.reward_per_item,
        bonus_per_accepted=link.bonus_per_accepted,
        bonus_per_extra_item=link.bonus_per_extra_item,
    )


@dataclass(frozen=True)
class SessionEarning:
    session: CrowdSession
    external_id: str
    items: int
    accepted: int
    pay: payments.SessionPay
    duration_seconds: float  # arrival to completion, by the server's clock
    on_item_seconds: float  # the workspace's time on the session's items
    variant: str
    cohort: str

    @property
    def link(self) -> StudyLink:
        return self.session.link


NOT_ALLOCATED = "not allocated"
NOT_ADMITTED = "not admitted"


def completed_session_earnings(
    *, project: Project, link: StudyLink | None = None
) -> list[SessionEarning]:
    """Every completed session's pay, from the platform's records: the session's window
    over the worker's stored annotations and the review verdicts on them. Sessions that
    did not complete earn nothing here (a platform pays only submitted work)."""
    sessions = list(
        CrowdSession.objects.filter(link__project=project, status=SessionStatus.COMPLETED)
        .filter(**({"link": link} if link is not None else {}))
        .select_related("link__variant", "worker__worker_profile")
        .order_by("completed_at", "pk")
    )
    if not sessions:
        return []
    worker_ids = {s.worker_id for s in sessions}
    earliest = min(s.items_from or s.started_at for s in sessions)
    # Per worker, their annotations in time order: (time, accepted?, ms on the item).
    stored: dict[int, list[tuple]] = defaultdict(list)
    for worker_id, created, ms, outcome in (
        Annotation.objects.filter(
            assignment__worker_id__in=worker_ids,
            assignment__item__project=project,
            created_at__gt=earliest,
        )
        .order_by("created_at", "pk")
        .values_list("assignment__worker_id", "created_at", "time_spent_ms", "verdict__outcome")
    ):
        stored[worker_id].append((created, outcome == VerdictOutcome.ACCEPTED, ms))
    variants = dict(
        WorkerVariantBinding.objects.filter(project=project, worker_id__in=worker_ids)
        .values_list("worker_id", "variant__name")
        .iterator()
    )
    cohorts = dict(
        ProjectWorker.objects.filter(project=project, worker_id__in=worker_ids).values_list(
            "worker_id", "cohort"
        )
    )
    earnings = []
    for session in sessions:
        rows = stored[session.worker_id]
        times = [row[0] for row in rows]
        start = session.items_from or session.started_at
        window = rows[
            bisect.bisect_right(times, start) : bisect.bisect_right(times, session.completed_at)
        ]
        accepted = sum(1 for _, ok, _ in window if ok)
        profile = getattr(session.worker, "worker_profile", None)
        earnings.append(
            SessionEarning(
                session=session,
                external_id=profile.external_id if profile else session.worker.get_username(),
                items=len(window),
                accepted=accepted,
                pay=payments.session_pay(
                    pay_terms(session.link), items=len(window), accepted=accepted
                ),
                duration_seconds=(session.completed_at - session.started_at).total_seconds(),
                on_item_seconds=sum(ms for _, _, ms in window) / 1000,
                variant=variants.get(session.worker_id)
                or (session.link.variant.name if session.link.variant else NOT_ALLOCATED),
                cohort=cohorts.get(session.worker_id) or NOT_ADMITTED,
            )
        )
    return earnings


def worker_earnings(*, project: Project) -> list[dict]:
    """Per worker and currency: completed sessions, items, accepted annotations, what the
    platform's reward paid and what bonuses are owed."""
    totals: dict[tuple, dict] = {}
    for earning in completed_session_earnings(project=project):
        session = earning.session
        key = (session.worker_id, session.link.currency)
        row = totals.setdefault(
            key,
            {
                "worker_id": session.worker_id,
                "platform": session.link.platform,
                "external_id": earning.external_id,
                "currency": session.link.currency,
                "sessions": 0,
                "items": 0,
                "accepted": 0,
                "base": Decimal(0),
                "bonus": Decimal(0),
            },
        )
        row["sessions"] += 1
        row["items"] += earning.items
        row["accepted"] += earning.accepted
        row["base"] += earning.pay.base
        row["bonus"] += earning.pay.bonus
    rows = sorted(totals.values(), key=lambda r: (r["platform"], r["external_id"], r["currency"]))
    for row in rows:
        row["total"] = payments.money(row["base"] + row["bonus"])
        row["base"], row["bonus"] = payments.money(row["base"]), payments.money(row["bonus"])
    return rows


# ---------------------------------------------------------------- bonus files


def bonus_reason(earning: SessionEarning) -> str:
    """What the worker reads beside an MTurk bonus: how it was reached."""
    terms, pay, parts = pay_terms(earning.link), earning.pay, []
    if pay.item_pay:
        parts.append(f"{earning.items} items at {payments.money(terms.reward_per_item)}")
    if pay.review_bonus:
        parts.append(
            f"{earning.accepted} accepted in review at {payments.money(terms.bonus_per_accepted)}"
        )
    if pay.extra_bonus:
        parts.append(
            f"{pay.extra_items} beyond the {terms.items_required} required at "
            f"{payments.money(terms.bonus_per_extra_item)}"
        )
    return f"{earning.link.name}: " + "; ".join(parts)


def bonus_file(*, link: StudyLink) -> tuple[str, bytes]:
    """The platform's bulk-bonus file for a link's completed sessions (bonuses above
    zero only): a file name and its bytes.

    - MTurk: CSV with header `WorkerId,AssignmentId,BonusAmount,Reason` (SendBonus's
      parameters; a bonus is paid against an assignment), one row per assignment.
    - Prolific: `<participant id>,<amount>` lines with no header, one per participant,
      as the bulk bonus box and the API's `csv_bonuses` take them.
    - Other platforms: CSV `worker_id,session_id,amount,currency,reason`.
    Amounts have two decimals and no currency symbol; lines end with a newline.
    """
    earnings = [
        e for e in completed_session_earnings(project=link.project, link=link) if e.pay.bonus > 0
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if link.platform == MTURK:
        writer.writerow(["WorkerId", "AssignmentId", "BonusAmount", "Reason"])
        for e in earnings:
            writer.writerow(
                [
                    e.external_id,
                    e.session.platform_session_id,
                    payments.money(e.pay.bonus),
                    bonus_reason(e),
                ]
            )
    elif link.platform == PROLIFIC:
        per_participant: dict[str, Decimal] = defaultdict(Decimal)
        for e in earnings:
            per_participant[e.external_id] += e.pay.bonus
        for participant, amount in sorted(per_participant.items()):
            writer.writerow([participant, payments.money(amount)])
    else:
        writer.writerow(["worker_id", "session_id", "amount", "currency", "reason"])
        for e in earnings:
            writer.writerow(
                [
                    e.external_id,
                    e.session.platform_session_id or e.session.pk,
                    payments.money(e.pay.bonus),
                    link.currency,
                    bonus_reason(e),
                ]
            )
    return f"bonuses-{link.platform}-link-{link.pk}.csv", buffer.getvalue().encode()


# ---------------------------------------------------------------- hourly pay

PAY_MEASURE = (
    "Effective hourly pay is each completed session's total pay (reward and bonuses) "
    "divided by the session's duration by the server's clock, from arrival through the "
    "platform link to completion: it includes consent, instructions, any qualification "
    "test and pauses, as the platforms themselves count time. The on-item figure divides "
    "by the time the workspace measured on the session's items instead (visible time "
    "only, as the browser reported it), an upper bound."
)


def _pay_groups(earnings: list[SessionEarning], key) -> list[dict]:
    groups: dict[tuple, list[SessionEarning]] = defaultdict(list)
    for earning in earnings:
        groups[(key(earning), earning.link.currency)].append(earning)
    rows = []
    for (name, currency), members in sorted(groups.items()):
        rows.append(
            {
                "group": name,
                "currency": currency,
                "sessions": len(members),
                "workers": len({m.session.worker_id for m in members}),
                "median_minutes": round(
                    statistics.median(m.duration_seconds for m in members) / 60, 1
                ),
                "median_total": _text(payments.median_money(m.pay.total for m in members)),
                "median_hourly": _text(
                    payments.median_money(
                        payments.hourly(m.pay.total, m.duration_seconds) for m in members
                    )
                ),
                "median_hourly_on_items": _text(
                    payments.median_money(
                        payments.hourly(m.pay.total, m.on_item_seconds) for m in members
                    )
                ),
            }
        )
    return rows


def _text(amount: Decimal | None) -> str | None:
    return None if amount is None else payments.money(amount)


def pay_report(*, project: Project) -> dict:
    """Median effective hourly pay of completed sessions per instruction variant and per
    qualification cohort (qc's cohort on the worker's standing), per currency."""
    earnings = completed_session_earnings(project=project)
    return {
        "measure": PAY_MEASURE,
        "sessions": len(earnings),
        "by_variant": _pay_groups(earnings, lambda e: e.variant),
        "by_cohort": _pay_groups(earnings, lambda e: e.cohort),
    }


# ---------------------------------------------------------------- tokens


def completion_token_check(
    *, link: StudyLink, worker_id: str, assignment_id: str, token: str
) -> dict:
    """Whether a completion token a platform holds is one this site issued for that
    worker and assignment (or session), and the session it completed, if any."""
    valid = completion_token_valid(
        token,
        link_id=link.pk,
        platform=link.platform,
        worker_id=worker_id,
        session_id=assignment_id,
    )
    session = (
        CrowdSession.objects.filter(
            link=link,
            platform_session_id=assignment_id,
            worker__worker_profile__platform=link.platform,
            worker__worker_profile__external_id=worker_id,
        ).first()
        if valid
        else None
    )
    return {
        "valid": valid,
        "session": None
        if session is None
        else {
            "id": session.pk,
            "status": session.status,
            "items_done": session.items_done,
            "completed_at": session.completed_at,
        },
    }


# ---------------------------------------------------------------- datasheet


def crowd_datasheet_summary(*, project: Project) -> dict:
    """Platform and payment of a project's crowd study, for the datasheet (Table 6 of
    the seed study: crowd-source, worker qualification, payment, instructions).

    `crowd_source` and `payment` are one-line texts for the table's cells; `platforms`
    and `links` hold the figures behind them. Empty lists when no study link exists."""
    links = list(study_link_list(project=project))
    earnings = completed_session_earnings(project=project)
    by_link: dict[int, list[SessionEarning]] = defaultdict(list)
    for earning in earnings:
        by_link[earning.link.pk].append(earning)
    labels = dict(Platform.choices)
    platforms = []
    for platform in sorted({link.platform for link in links}):
        mine = [link for link in links if link.platform == platform]
        done = [e for link in mine for e in by_link[link.pk]]
        platforms.append(
            {
                "platform": platform,
                "label": labels[platform],
                "links": len(mine),
                "sessions_completed": len(done),
                "workers": len({e.session.worker_id for e in done}),
            }
        )
    link_rows = []
    for link in links:
        done = by_link[link.pk]
        link_rows.append(
            {
                "name": link.name,
                "platform": link.platform,
                "variant": link.variant.name if link.variant else None,
                "items_per_session": link.items_required,
                "currency": link.currency,
                "reward_per_session": payments.money(link.reward_per_session),
                "reward_per_item": payments.money(link.reward_per_item),
                "bonus_per_accepted": payments.money(link.bonus_per_accepted),
                "bonus_per_extra_item": payments.money(link.bonus_per_extra_item),
                "sessions_completed": len(done),
                "paid_total": payments.money(sum((e.pay.total for e in done), Decimal(0))),
                "median_hourly": _text(
                    payments.median_money(
                        payments.hourly(e.pay.total, e.duration_seconds) for e in done
                    )
                ),
            }
        )
    return {
        "crowd_source": ", ".join(p["label"] for p in platforms),
        "payment": "; ".join(_payment_text(row) for row in link_rows),
        "platforms": platforms,
        "links": link_rows,
        "hourly_pay_measure": PAY_MEASURE,
        "as_of": timezone.now(),
    }


def _payment_text(row: dict) -> str:
    c = row["currency"]
    parts = [f"{c} {row['reward_per_session']} per session of {row['items_per_session']} items"]
    for key, words in (
        ("reward_per_item", "per item"),
        ("bonus_per_accepted", "bonus per annotation accepted in review"),
        ("bonus_per_extra_item", "bonus per item beyond the required"),
    ):
        if Decimal(row[key]):
            parts.append(f"{c} {row[key]} {words}")
    if row["median_hourly"] is not None:
        parts.append(f"median {c} {row['median_hourly']} per hour")
    return f"{row['name']} ({row['platform']}): " + ", ".join(parts)


def platform_account_ids(user_ids) -> set[int]:
    """Which of these accounts a study link made for a platform's worker: they sign in
    through the platform, with no password (crowd.services._crowd_account)."""
    return set(
        WorkerProfile.objects.filter(user_id__in=list(user_ids))
        .exclude(platform=Platform.UNSPECIFIED)
        .values_list("user_id", flat=True)
    )
