"""Pay from the platform's own records, worked out by hand; the bulk-bonus files byte for
byte; effective hourly pay per variant and cohort; the datasheet's summary."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import F

from crowd import payments
from crowd.models import CrowdSession
from crowd.selectors import (
    bonus_file,
    completed_session_earnings,
    crowd_datasheet_summary,
    pay_report,
    worker_earnings,
)
from crowd.services import crowd_consent_record, crowd_session_finish
from qc.models import ReviewVerdict
from tests.crowd.conftest import arrive, arrive_and_consent, make_link, work_items

D = Decimal


def test_session_pay_arithmetic():
    terms = payments.PayTerms(
        items_required=3,
        reward_per_session=D("0.50"),
        reward_per_item=D("0.05"),
        bonus_per_accepted=D("0.10"),
        bonus_per_extra_item=D("0.03"),
    )
    pay = payments.session_pay(terms, items=4, accepted=3)
    # 4 x 0.05 = 0.20; 3 x 0.10 = 0.30; (4 - 3) x 0.03 = 0.03
    assert (pay.base, pay.item_pay, pay.review_bonus, pay.extra_bonus) == (
        D("0.50"),
        D("0.20"),
        D("0.30"),
        D("0.03"),
    )
    assert (pay.bonus, pay.total) == (D("0.53"), D("1.03"))
    assert payments.session_pay(terms, items=2, accepted=0).extra_items == 0
    with pytest.raises(ValueError):
        payments.session_pay(terms, items=1, accepted=2)
    assert payments.hourly(D("1.03"), 600) == D("6.18")
    assert payments.hourly(D("1"), 0) is None
    assert payments.median_money([D("6.18"), None, D("9.00")]) == D("7.59")
    assert payments.money(D("3")) == "3.00"


def _accept(annotations, outcomes):
    for annotation, outcome in zip(annotations, outcomes, strict=True):
        if outcome:
            ReviewVerdict.objects.create(annotation=annotation, outcome=outcome, means={})


@pytest.fixture
def paid_study(study):
    """A1 does 4 items (one beyond the 3 required), 3 accepted in review; A2 does 3
    items, 1 accepted and 1 sent back; A2 also has an open session with an item, and A3
    declined. Sessions last 10 and 5 minutes."""
    project, admin = study
    link = make_link(
        project,
        admin,
        "mturk",
        name="Main round",
        variant=project.variants.get(name="plain"),
        reward_per_session="0.50",
        reward_per_item="0.05",
        bonus_per_accepted="0.10",
        bonus_per_extra_item="0.03",
    )
    s1, a1 = arrive_and_consent(link, worker="A1", session="AS1")
    _accept(work_items(project, a1, 4), ["accepted"] * 3 + [None])
    s1 = crowd_session_finish(session=s1, finish_now=True)
    s2, a2 = arrive_and_consent(link, worker="A2", session="AS2")
    _accept(work_items(project, a2, 3), ["accepted", "revise", None])
    s2 = crowd_session_finish(session=s2, finish_now=True)
    arrive_and_consent(link, worker="A2", session="AS3")  # left open
    work_items(project, a2, 1)
    declined = arrive(link, worker="A3", session="AS4").session
    crowd_consent_record(session=declined, agree=False)
    for session, minutes in ((s1, 10), (s2, 5)):
        CrowdSession.objects.filter(pk=session.pk).update(
            started_at=F("completed_at") - timedelta(minutes=minutes)
        )
    return project, link


def test_earnings_are_computed_from_the_records(paid_study):
    project, _ = paid_study
    rows = {row["external_id"]: row for row in worker_earnings(project=project)}
    # A1: reward 0.50; bonus 4 x 0.05 + 3 x 0.10 + 1 x 0.03 = 0.20 + 0.30 + 0.03 = 0.53
    assert rows["A1"] == {
        "worker_id": rows["A1"]["worker_id"],
        "platform": "mturk",
        "external_id": "A1",
        "currency": "USD",
        "sessions": 1,
        "items": 4,
        "accepted": 3,
        "base": "0.50",
        "bonus": "0.53",
        "total": "1.03",
    }
    # A2: only the completed session; bonus 3 x 0.05 + 1 x 0.10 = 0.25; the open
    # session's item is not paid yet, the verdict "revise" is not an acceptance
    assert (rows["A2"]["sessions"], rows["A2"]["items"], rows["A2"]["accepted"]) == (1, 3, 1)
    assert (rows["A2"]["base"], rows["A2"]["bonus"], rows["A2"]["total"]) == (
        "0.50",
        "0.25",
        "0.75",
    )
    assert "A3" not in rows


def test_a_verdict_that_lands_later_raises_the_bonus(paid_study):
    project, _ = paid_study
    unreviewed = [e for e in completed_session_earnings(project=project) if e.external_id == "A1"]
    assert unreviewed[0].accepted == 3
    annotation = (
        CrowdSession.objects.get(platform_session_id="AS1")
        .worker.assignments.filter(annotation__verdict__isnull=True)
        .get()
        .annotation
    )
    ReviewVerdict.objects.create(annotation=annotation, outcome="accepted", means={})
    rows = {row["external_id"]: row for row in worker_earnings(project=project)}
    # 0.53 + 0.10
    assert rows["A1"]["bonus"] == "0.63"


def test_the_mturk_bonus_file_bytes(paid_study):
    _, link = paid_study
    name, body = bonus_file(link=link)
    assert name == f"bonuses-mturk-link-{link.pk}.csv"
    assert body == (
        b"WorkerId,AssignmentId,BonusAmount,Reason\n"
        b"A1,AS1,0.53,Main round: 4 items at 0.05; 3 accepted in review at 0.10; "
        b"1 beyond the 3 required at 0.03\n"
        b"A2,AS2,0.25,Main round: 3 items at 0.05; 1 accepted in review at 0.10\n"
    )


def test_the_prolific_bonus_file_bytes(study):
    project, admin = study
    link = make_link(project, admin, "prolific", reward_per_session="1.20", reward_per_item="0.10")
    for pid, session_id, items in (("60aa", "S1", 3), ("5fbb", "S2", 4)):
        session, worker = arrive_and_consent(link, worker=pid, session=session_id)
        work_items(project, worker, items)
        crowd_session_finish(session=session)
    # No header: one `<participant id>,<amount>` line each, sorted by id. The session
    # was checked after all its items, so 5fbb's four count: 4 x 0.10 = 0.40; 60aa's
    # three: 3 x 0.10 = 0.30. The reward (1.20) is paid by Prolific, not as a bonus.
    assert bonus_file(link=link)[1] == b"5fbb,0.40\n60aa,0.30\n"


def test_a_link_without_bonuses_gives_a_header_only_file(mturk_link):
    assert bonus_file(link=mturk_link)[1] == b"WorkerId,AssignmentId,BonusAmount,Reason\n"


def test_effective_hourly_pay_per_variant_and_cohort(paid_study):
    project, _ = paid_study
    report = pay_report(project=project)
    assert report["sessions"] == 2
    # A1: 1.03 over 10 min = 6.18 an hour; A2: 0.75 over 5 min = 9.00; median 7.59.
    # On the items: A1 1.03 over 4 x 20 s = 46.35; A2 0.75 over 3 x 20 s = 45.00;
    # median 45.675, rounded half-even to 45.68.
    (variant,) = report["by_variant"]
    assert variant == {
        "group": "plain",
        "currency": "USD",
        "sessions": 2,
        "workers": 2,
        "median_minutes": 7.5,
        "median_total": "0.89",
        "median_hourly": "7.59",
        "median_hourly_on_items": "45.68",
    }
    (cohort,) = report["by_cohort"]
    assert (cohort["group"], cohort["median_hourly"]) == ("no platform record", "7.59")
    assert "server's clock" in report["measure"]


def test_the_datasheet_summary(paid_study):
    project, _ = paid_study
    summary = crowd_datasheet_summary(project=project)
    assert summary["crowd_source"] == "Amazon Mechanical Turk"
    assert summary["platforms"] == [
        {
            "platform": "mturk",
            "label": "Amazon Mechanical Turk",
            "links": 1,
            "sessions_completed": 2,
            "workers": 2,
        }
    ]
    (link,) = summary["links"]
    # Paid: 1.03 + 0.75
    assert (link["paid_total"], link["median_hourly"], link["variant"]) == ("1.78", "7.59", "plain")
    assert summary["payment"] == (
        "Main round (mturk): USD 0.50 per session of 3 items, USD 0.05 per item, "
        "USD 0.10 bonus per annotation accepted in review, "
        "USD 0.03 bonus per item beyond the required, median USD 7.59 per hour"
    )


def test_the_datasheet_summary_of_a_project_without_crowd(study):
    summary = crowd_datasheet_summary(project=study[0])
    assert (summary["crowd_source"], summary["payment"], summary["links"]) == ("", "", [])
