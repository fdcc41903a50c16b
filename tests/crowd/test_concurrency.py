"""Simultaneous arrivals and completions on PostgreSQL: one account per platform id, one
session per assignment, and no item paid to two sessions."""

import pytest
from django.contrib.auth import get_user_model

from annotate.models import ProjectMembership, WorkerVariantBinding
from crowd.models import CrowdEvent, CrowdSession, SessionStatus
from crowd.services import crowd_consent_record, crowd_session_finish
from qc.models import WorkerProfile
from tests.concurrency import run_at_once
from tests.crowd.conftest import arrive, arrive_and_consent, make_link, work_items

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ARRIVALS = 8


def test_simultaneous_entries_with_the_same_ids_make_one_account(postgres_only, study):
    project, admin = study
    link = make_link(project, admin, "mturk", variant=project.variants.get(name="plain"))
    entered = []

    def enter():
        entered.append(arrive(link, worker="A1", session="AS1").session.pk)

    errors = run_at_once(enter, [() for _ in range(ARRIVALS)])

    assert errors == []
    assert get_user_model().objects.filter(username="mturk.A1").count() == 1
    assert WorkerProfile.objects.filter(platform="mturk", external_id="A1").count() == 1
    assert len(set(entered)) == 1 and CrowdSession.objects.count() == 1
    assert ProjectMembership.objects.filter(project=project, role="annotator").count() == 1
    assert WorkerVariantBinding.objects.filter(project=project).count() == 1
    kinds = sorted(CrowdEvent.objects.exclude(session=None).values_list("kind", flat=True))
    assert kinds == ["entered"] + ["resumed"] * (ARRIVALS - 1)


def test_one_worker_in_several_assignments_at_once_is_one_account(postgres_only, study):
    project, admin = study
    link = make_link(project, admin, "prolific")

    errors = run_at_once(
        lambda n: arrive(link, worker="P1", session=f"S{n}"), [(n,) for n in range(ARRIVALS)]
    )

    assert errors == []
    assert get_user_model().objects.filter(username__startswith="prolific.").count() == 1
    assert CrowdSession.objects.filter(link=link).count() == ARRIVALS


def test_two_sessions_finishing_at_once_never_share_items(postgres_only, study):
    project, admin = study
    link = make_link(project, admin, "mturk")
    first, worker = arrive_and_consent(link, worker="A1", session="AS1")
    second, _ = arrive_and_consent(link, worker="A1", session="AS2")
    work_items(project, worker, 3)

    errors = run_at_once(lambda s: crowd_session_finish(session=s), [(first,), (second,)])

    assert errors == []
    sessions = {s.platform_session_id: s for s in CrowdSession.objects.all()}
    done = [s for s in sessions.values() if s.status == SessionStatus.COMPLETED]
    assert len(done) == 1 and done[0].items_done == 3
    (still_open,) = [s for s in sessions.values() if s.status == SessionStatus.WORKING]
    assert still_open.items_done == 0


def test_simultaneous_consent_answers_leave_session_and_membership_agreeing(postgres_only, study):
    """A double click, or agree and decline sent from two tabs: one answer wins, and the
    membership (what "next" and "submit" read) says what the session says."""
    project, admin = study
    link = make_link(project, admin, "prolific")
    entry = arrive(link, worker="P1", session="S1")
    answers = [True] * (ARRIVALS // 2) + [False] * (ARRIVALS // 2)

    errors = run_at_once(
        lambda agree: crowd_consent_record(session=entry.session, agree=agree),
        [(agree,) for agree in answers],
    )

    session = CrowdSession.objects.get(pk=entry.session.pk)
    membership = ProjectMembership.objects.get(project=project, user=entry.worker)
    expected = {SessionStatus.WORKING: "given", SessionStatus.DECLINED: "declined"}
    assert membership.consent == expected[session.status]
    assert all("consent was already answered" in error for error in errors)
    answered = CrowdEvent.objects.filter(session=session, kind__in=["consented", "declined"])
    assert answered.count() == 1
