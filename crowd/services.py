"""Writes of the crowd app: study links, a worker's arrival through one, their consent,
and the end of their platform session (completion or screen-out).

An arrival signs the worker in with an account bound to (platform, external id); there
is no password, the login session is the credential. The account's username is
`<platform>.<id>`, so the same id on two platforms is two workers, and an arrival can
only ever reach the account that an earlier arrival with the same ids made: any other
account with that username (a member, staff) is refused, never signed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils import timezone

from annotate.account_rules import CROWD_ACCOUNT_ROLES
from annotate.models import (
    InstructionVariant,
    MemberConsent,
    Project,
    ProjectMembership,
    Role,
)
from annotate.services import membership_add, membership_consent_record
from annotate.services.variant_binding import worker_variant_bind
from config.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from config.transactions import create_unless_taken
from crowd import platforms
from crowd.models import (
    CrowdEvent,
    CrowdEventKind,
    CrowdSession,
    SessionStatus,
    StudyLink,
)
from crowd.platforms import Arrival
from crowd.selectors import (
    link_variant_current,
    one_or_none,
    session_items_count,
    session_items_from,
    worker_standing,
)
from qc.models import QualificationAttempt, QualificationStatus, WorkerProfile, WorkerStatus
from qc.services.workers import worker_profile_for_platform


class StudyClosedError(ApplicationError):
    http_status = 410


class EntryRefusedError(PermissionDeniedError):
    """An arrival that must not sign anyone in; `code` says why (for the page)."""

    def __init__(self, message: str, *, code: str):
        super().__init__(message, extra={"code": code})
        self.code = code


def crowd_username(platform: str, external_id: str) -> str:
    return f"{platform}.{external_id}"


def _event(*, kind: str, project_id: int, link=None, session=None, actor=None, **detail):
    return CrowdEvent.objects.create(
        project_id=project_id, link=link, session=session, actor=actor, kind=kind, detail=detail
    )


# ---------------------------------------------------------------- study links

_CODE = re.compile(r"\A[A-Za-z0-9_-]{1,64}\Z")
_CURRENCY = re.compile(r"\A[A-Z]{3}\Z")
AMOUNT_FIELDS = (
    "reward_per_session",
    "reward_per_item",
    "bonus_per_accepted",
    "bonus_per_extra_item",
)
# What the pay of completed sessions was computed from: fixed once one completed.
PAY_FIELDS = ("items_required", "currency", *AMOUNT_FIELDS)
# What arrivals were read and bound by: fixed once anyone arrived.
ENTRY_FIELDS = ("platform", "variant", "id_parameter")
LINK_FIELDS = (
    "name",
    "platform",
    "variant",
    "description",
    "consent_text",
    "items_required",
    "id_parameter",
    "completion_url_template",
    "completion_code",
    "screen_out_code",
    "frame_height",
    "active",
    "currency",
    *AMOUNT_FIELDS,
)
LINK_DEFAULTS = {
    "variant": None,
    "description": "",
    "id_parameter": "",
    "completion_url_template": "",
    "completion_code": "",
    "screen_out_code": "",
    "frame_height": 800,
    "active": True,
    "currency": "USD",
    **{name: Decimal(0) for name in AMOUNT_FIELDS},
}


def _link_problems(
    project: Project, values: dict, link: StudyLink | None, *, variant_changed: bool = True
) -> list[tuple]:
    problems = []

    def refuse(field: str, message: str):
        problems.append((field, message))

    platform = values["platform"]
    if platform not in (platforms.MTURK, platforms.PROLIFIC, platforms.OTHER):
        refuse("platform", f"{platform!r} is not one of mturk, prolific, other")
    name = (values["name"] or "").strip()
    if not name:
        refuse("name", "give the link a name")
    elif (
        StudyLink.objects.filter(project=project, name=name)
        .exclude(pk=getattr(link, "pk", None))
        .exists()
    ):
        refuse("name", f"this project already has a study link named {name!r}")
    if not (values["consent_text"] or "").strip():
        refuse("consent_text", "write the consent text workers agree to")
    if not 1 <= values["items_required"] <= 1000:
        refuse("items_required", "must be between 1 and 1000")
    if not 0 <= values["frame_height"] <= 5000:
        refuse("frame_height", "must be between 0 and 5000 pixels")
    for field in ("completion_code", "screen_out_code"):
        if values[field] and not _CODE.match(values[field]):
            refuse(field, "may hold only letters, digits, '_' and '-' (at most 64)")
    if not _CURRENCY.match(values["currency"] or ""):
        refuse("currency", "must be a three-letter code such as USD or GBP")
    for field in AMOUNT_FIELDS:
        amount = values[field]
        if not amount.is_finite() or amount < 0 or amount != amount.quantize(Decimal("0.01")):
            refuse(field, "must be zero or more, with at most two decimals")
        elif amount >= 1_000_000:
            refuse(field, "must be under 1,000,000")
    if platform == platforms.OTHER:
        problem = platforms.parameter_name_problem(values["id_parameter"])
        if problem:
            refuse("id_parameter", problem)
        problem = platforms.completion_template_problem(values["completion_url_template"])
        if problem:
            refuse("completion_url_template", problem)
    else:
        for field in ("id_parameter", "completion_url_template"):
            if values[field]:
                refuse(field, f"only links to other platforms have one ({platform} fixes it)")
    if platform == platforms.MTURK:
        if values["currency"] != "USD":
            refuse("currency", "MTurk pays in USD")
        for field in ("completion_code", "screen_out_code"):
            if values[field]:
                refuse(field, "MTurk assignments end with the HIT's submit form, not a code")
    if platform == platforms.PROLIFIC:
        if not values["completion_code"]:
            refuse("completion_code", "Prolific needs the study's completion code")
        if values["currency"] not in ("GBP", "USD"):
            refuse("currency", "Prolific studies pay in GBP or USD")
    variant = values["variant"]
    # A link's variant retired since is followed to its new version (`link_variant_current`):
    # only a newly chosen variant must be active.
    if variant is not None and variant_changed:
        if variant.project_id != project.pk:
            refuse("variant", "not a variant of this project")
        elif not InstructionVariant.objects.filter(pk=variant.pk, active=True).exists():
            refuse("variant", f"{variant} is retired; choose its current version")
        elif project.allow_variant_mixing:
            refuse("variant", "this project lets each worker see several variants")
    return problems


def _as_amounts(values: dict) -> dict:
    """Amounts as Decimals (callers may pass strings, as JSON and forms carry them)."""
    for field in AMOUNT_FIELDS:
        try:
            values[field] = Decimal(str(values[field]))
        except InvalidOperation:
            raise ApplicationError(
                f"{field}: {values[field]!r} is not an amount", extra={"field": field}
            ) from None
    return values


def _raise_problems(problems: list[tuple]) -> None:
    if problems:
        field, message = problems[0]
        raise ApplicationError(
            f"{field}: {message}",
            extra={"field": field, "problems": [f"{f}: {m}" for f, m in problems]},
        )


@transaction.atomic
def study_link_create(*, project: Project, acting_user, **fields) -> StudyLink:
    unknown = set(fields) - set(LINK_FIELDS)
    if unknown:
        raise ApplicationError(f"unknown study link field(s): {', '.join(sorted(unknown))}")
    missing = [f for f in ("name", "platform", "consent_text", "items_required") if f not in fields]
    if missing:
        raise ApplicationError(f"{missing[0]}: required", extra={"field": missing[0]})
    values = _as_amounts({**LINK_DEFAULTS, **fields})
    values["name"] = values["name"].strip()
    _raise_problems(_link_problems(project, values, None))
    link = StudyLink.objects.create(project=project, created_by=acting_user, **values)
    _event(
        kind=CrowdEventKind.LINK_CREATED,
        project_id=project.pk,
        link=link,
        actor=acting_user,
        platform=link.platform,
        terms=_terms_of(link),
    )
    return link


def _terms_of(link: StudyLink) -> dict:
    return {f: str(getattr(link, f)) for f in PAY_FIELDS}


def _comparable(value):
    return getattr(value, "pk", value)


@transaction.atomic
def study_link_update(*, link: StudyLink, acting_user, **changes) -> StudyLink:
    unknown = set(changes) - set(LINK_FIELDS)
    if unknown:
        raise ApplicationError(f"cannot change {', '.join(sorted(unknown))} here")
    link = StudyLink.objects.select_for_update().select_related("project").get(pk=link.pk)
    changes = _as_amounts({**{f: getattr(link, f) for f in AMOUNT_FIELDS}, **changes})
    changed = {f: v for f, v in changes.items() if _comparable(v) != _comparable(getattr(link, f))}
    if "name" in changed:
        changed["name"] = changed["name"].strip()
    sessions = CrowdSession.objects.filter(link=link)
    fixed = [f for f in ENTRY_FIELDS if f in changed and sessions.exists()]
    fixed += [
        f
        for f in PAY_FIELDS
        if f in changed and sessions.filter(status=SessionStatus.COMPLETED).exists()
    ]
    if fixed:
        raise ConflictError(
            f"{fixed[0]}: fixed once workers have "
            + ("been paid under it" if fixed[0] in PAY_FIELDS else "arrived through the link")
            + "; create a new study link for new terms",
            extra={"field": fixed[0]},
        )
    values = {f: getattr(link, f) for f in LINK_FIELDS} | changed
    _raise_problems(
        _link_problems(link.project, values, link, variant_changed="variant" in changed)
    )
    before = {f: str(_comparable(getattr(link, f))) for f in changed}
    for field, value in changed.items():
        setattr(link, field, value)
    link.save()
    if changed:
        _event(
            kind=CrowdEventKind.LINK_UPDATED,
            project_id=link.project_id,
            link=link,
            actor=acting_user,
            changes={f: [before[f], str(_comparable(v))] for f, v in changed.items()},
        )
    return link


# ---------------------------------------------------------------- arrival


@dataclass(frozen=True)
class Entry:
    session: CrowdSession
    worker: object
    resumed: bool


def _crowd_account(platform: str, external_id: str) -> tuple[object, bool]:
    """The account of (platform, external id) and whether this arrival made it: made on
    the first arrival, and on every later one the same account, provided it is still
    exactly that."""
    user_model = get_user_model()
    username = crowd_username(platform, external_id)
    user = one_or_none(user_model.objects.all(), username=username)
    if user is None:
        user = create_unless_taken(user_model, username=username, password=make_password(None))
        if user is not None:
            return user, True
        # A concurrent first arrival of the same worker committed the account (and its
        # profile, in the same transaction) while this insert waited.
        user = user_model.objects.get(username=username)
    profile = one_or_none(WorkerProfile.objects.all(), user=user)
    if (
        user.is_staff
        or user.is_superuser
        or user.has_usable_password()
        or profile is None
        or (profile.platform, profile.external_id) != (platform, external_id)
    ):
        raise EntryRefusedError(
            "This platform id cannot be used here: it would sign in as an existing account.",
            code="account_taken",
        )
    if not user.is_active:
        raise EntryRefusedError("This worker account has been closed.", code="account_closed")
    if ProjectMembership.objects.filter(user=user).exclude(role__in=CROWD_ACCOUNT_ROLES).exists():
        # Set up by hand, against every service's refusal: whoever knows the platform id
        # would sign in with the account's other roles.
        raise EntryRefusedError(
            "This platform id belongs to an account with more than an annotator's role; "
            "it cannot sign in through a study link. Please contact the researcher.",
            code="account_has_roles",
        )
    return user, False


def _session_for(
    link: StudyLink, worker, arrival: Arrival, *, new_account: bool
) -> tuple[CrowdSession, bool]:
    lookup = {"link": link, "platform_session_id": arrival.session_id}
    if not arrival.session_id:
        lookup["worker"] = worker
    # A new account has no session yet, so the insert comes first: the constraint on the
    # platform's session id refuses it only if another worker holds that session, and
    # the look-up below then finds theirs.
    session = None if new_account else one_or_none(CrowdSession.objects.all(), **lookup)
    created = False
    if session is None:
        session = create_unless_taken(
            CrowdSession,
            link=link,
            worker=worker,
            platform_session_id=arrival.session_id,
            platform_task_id=arrival.task_id,
            submit_to=arrival.submit_to,
        )
        created = session is not None
        session = session or CrowdSession.objects.get(**lookup)
    if session.worker_id != worker.pk:
        raise EntryRefusedError(
            "This assignment was accepted by another worker.", code="session_taken"
        )
    session.link = link
    return session, created


def _end(session: CrowdSession, status: str, reason: str, kind: str) -> CrowdSession:
    session.items_done = session_items_count(session)
    session.status, session.end_reason, session.ended_at = status, reason[:300], timezone.now()
    session.save(update_fields=["status", "end_reason", "ended_at", "items_done"])
    _event(
        kind=kind,
        project_id=session.link.project_id,
        link=session.link,
        session=session,
        reason=reason,
        items=session.items_done,
    )
    return session


def _screen_on_arrival(
    session: CrowdSession, worker, profile: WorkerProfile, *, new_account: bool
) -> None:
    """A new session of someone this project already turned away, or who works under
    other instructions than the link's, ends at once with the screen-out path."""
    link = session.link
    if new_account:
        # No standing in any project yet: only an imported profile can be blocked.
        status, reason = (
            ("blocked", "blocked on every project")
            if profile.status == WorkerStatus.BLOCKED
            else (None, "")
        )
    else:
        status, reason = worker_standing(project=link.project, worker=worker)
    if status in (QualificationStatus.REJECTED, QualificationStatus.BLOCKED):
        _end(session, SessionStatus.SCREENED_OUT, reason or status, CrowdEventKind.SCREENED_OUT)
        return
    variant = link_variant_current(link)
    if variant is None:
        return
    try:
        worker_variant_bind(project=link.project, worker=worker, variant=variant)
    except ConflictError:
        _end(
            session,
            SessionStatus.SCREENED_OUT,
            "already took part in this study under other instructions",
            CrowdEventKind.SCREENED_OUT,
        )


@transaction.atomic
def crowd_entry(*, link: StudyLink, arrival: Arrival) -> Entry:
    """A worker arrives through a study link with their platform ids: their account
    (made on first arrival), their profile under (platform, id), annotator membership,
    the link's variant bound before any work, and the platform session (resumed when
    they come back with the same ids). Raises StudyClosedError and EntryRefusedError."""
    if not link.active:
        raise StudyClosedError("This study is closed.")
    if link.variant_id is not None and link_variant_current(link) is None:
        raise StudyClosedError("This study's instructions have been retired.")
    worker, new_account = _crowd_account(link.platform, arrival.worker_id)
    try:
        profile = worker_profile_for_platform(
            platform=link.platform,
            external_id=arrival.worker_id,
            user=worker,
            user_is_new=new_account,
        )
    except ConflictError:
        raise EntryRefusedError(
            "This platform id is already bound to another account.", code="account_taken"
        ) from None
    session, created = _session_for(link, worker, arrival, new_account=new_account)
    declined_before = False
    if new_account:
        # Nothing can refer to an account this transaction has not committed yet: one
        # INSERT, without get_or_create's look-up and savepoint.
        ProjectMembership.objects.create(
            project_id=link.project_id,
            user=worker,
            role=Role.ANNOTATOR,
            consent=MemberConsent.PENDING,
        )
    else:
        membership = membership_add(project=link.project, user=worker, role=Role.ANNOTATOR)
        declined_before = membership.consent == MemberConsent.DECLINED
    _event(
        kind=CrowdEventKind.ENTERED if created else CrowdEventKind.RESUMED,
        project_id=link.project_id,
        link=link,
        session=session,
        worker_id=arrival.worker_id,
        platform_session_id=arrival.session_id,
        platform_task_id=arrival.task_id,
    )
    if created and declined_before:
        # A decline stands for good: the new session ends at once, down the same path.
        _end(
            session,
            SessionStatus.DECLINED,
            "declined consent in an earlier session",
            CrowdEventKind.DECLINED,
        )
    elif created:
        _screen_on_arrival(session, worker, profile, new_account=new_account)
        if not new_account and session.status == SessionStatus.STARTED:
            # A new platform session asks for consent again; no work until it is answered.
            membership_consent_record(
                project_id=link.project_id, user_id=worker.pk, consent=MemberConsent.PENDING
            )
    return Entry(session=session, worker=worker, resumed=not created)


# ---------------------------------------------------------------- consent and the end


def _locked(session: CrowdSession) -> CrowdSession:
    fresh = CrowdSession.objects.select_for_update().get(pk=session.pk)
    fresh.link = session.link
    return fresh


@transaction.atomic
def crowd_consent_record(*, session: CrowdSession, agree: bool) -> CrowdSession:
    if agree:
        # The common answer in one conditional UPDATE (the row locked as it is written):
        # the consent answer is on every participant's way in.
        now = timezone.now()
        if CrowdSession.objects.filter(pk=session.pk, status=SessionStatus.STARTED).update(
            status=SessionStatus.WORKING, consented_at=now
        ):
            session.status, session.consented_at = SessionStatus.WORKING, now
            return _consented(session)
    session = _locked(session)
    wanted = SessionStatus.WORKING if agree else SessionStatus.DECLINED
    if session.status == wanted:
        return session  # the same answer again (a double click, a reload)
    if session.status != SessionStatus.STARTED:
        raise ConflictError(
            f"consent was already answered (this session is {session.get_status_display()})"
        )
    if not agree:
        # The answer binds the worker's work in the project (annotate's consent check).
        membership_consent_record(
            project_id=session.link.project_id,
            user_id=session.worker_id,
            consent=MemberConsent.DECLINED,
        )
        return _end(session, SessionStatus.DECLINED, "declined consent", CrowdEventKind.DECLINED)
    session.status, session.consented_at = SessionStatus.WORKING, timezone.now()
    session.save(update_fields=["status", "consented_at"])
    return _consented(session)


def _consented(session: CrowdSession) -> CrowdSession:
    membership_consent_record(
        project_id=session.link.project_id, user_id=session.worker_id, consent=MemberConsent.GIVEN
    )
    _event(
        kind=CrowdEventKind.CONSENTED,
        project_id=session.link.project_id,
        link=session.link,
        session=session,
    )
    return session


def _no_work_left(session: CrowdSession) -> bool:
    """Asked of the assignment engine itself: a worker whose workspace says "no more
    items" must not be left without a way back to the platform. It answers with their
    current lease first, so asking never hands out anything they were not offered."""
    from annotate.services import assignment_next

    try:
        return assignment_next(project=session.link.project, worker=session.worker) is None
    except PermissionDeniedError:
        return False  # a gate stands in front of work (the test): the standing decides
    except ApplicationError:
        return True  # e.g. no active instruction variant: nobody can be served


AWAITING_SELECTION = "awaiting an admin's selection"


def _took_the_test(project: Project, worker) -> bool:
    return QualificationAttempt.objects.filter(
        project_worker__project=project, project_worker__worker=worker, finished_at__isnull=False
    ).exists()


def _complete(session: CrowdSession, reason: str) -> CrowdSession:
    session.items_from = session_items_from(session)
    session.items_done = session_items_count(session)
    now = timezone.now()
    session.status, session.end_reason = SessionStatus.COMPLETED, reason
    session.completed_at = session.ended_at = now
    profile = WorkerProfile.objects.get(user_id=session.worker_id)
    session.completion_token = platforms.completion_token(
        link_id=session.link.pk,
        platform=session.link.platform,
        worker_id=profile.external_id,
        session_id=session.platform_session_id,
    )
    session.save()
    _event(
        kind=CrowdEventKind.COMPLETED,
        project_id=session.link.project_id,
        link=session.link,
        session=session,
        reason=reason,
        items=session.items_done,
    )
    return session


def crowd_session_finish(
    *, session: CrowdSession, finish_now: bool = False, no_work_left: bool = False
) -> CrowdSession:
    """End the session if the platform's records say it is over: completed when the
    required items are done (on request only, when extra items pay a bonus); screened
    out when the qualification or the checks turned the worker away before that;
    completed when the qualification work awaits an admin's selection, or when no work
    is left for them. Otherwise it stays open with its items counted. Nothing the
    browser sends is taken as a count."""
    # Only a consented session may ask the engine: asking leases an item.
    no_work = no_work_left and session.status == SessionStatus.WORKING and _no_work_left(session)
    with transaction.atomic():
        link = session.link
        # One worker's sessions end one at a time, so two never claim the same items.
        mine = {
            s.pk: s
            for s in CrowdSession.objects.select_for_update(of=("self",))
            .filter(worker_id=session.worker_id, link__project_id=link.project_id)
            .order_by("pk")
        }
        session = mine[session.pk]
        session.link = link
        if session.ended:
            return session
        if session.status == SessionStatus.STARTED:
            raise ConflictError("give or decline consent first", extra={"code": "consent_first"})
        status, reason = worker_standing(project=link.project, worker=session.worker)
        turned_away = status in (QualificationStatus.REJECTED, QualificationStatus.BLOCKED)
        items = session_items_count(session)
        # Work done is completed even if the checks blocked the worker on its last item:
        # the platform's approval is where its quality is judged, and they can go no
        # further anyway.
        if items >= link.items_required and (
            finish_now or turned_away or not link.pays_extra_items
        ):
            return _complete(session, "the required items are done")
        if turned_away:
            return _end(
                session, SessionStatus.SCREENED_OUT, reason or status, CrowdEventKind.SCREENED_OUT
            )
        if status == QualificationStatus.PENDING:
            # After a test the worker did qualification work, which the session pays for;
            # selection on the record alone asked nothing of them yet.
            if _took_the_test(link.project, session.worker):
                return _complete(session, "qualification work done; awaiting an admin's selection")
            return _end(
                session,
                SessionStatus.SCREENED_OUT,
                AWAITING_SELECTION,
                CrowdEventKind.SCREENED_OUT,
            )
        if items < link.items_required and no_work:
            return _complete(session, "no more work for this worker")
        if items != session.items_done:
            session.items_done = items
            session.save(update_fields=["items_done"])
        return session
