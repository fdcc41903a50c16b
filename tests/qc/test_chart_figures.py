"""The figures behind the charts (qc/chart_figures.py) and their endpoints' permissions."""

from datetime import UTC, date, datetime, timedelta

import pytest

from qc.chart_figures import AnnotationEvents, pipeline_by_day, seconds_histogram, stage_at
from tests.conftest import client_for

DAY1 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


def events(**kwargs):
    defaults = {
        "id": 1,
        "submitted_at": DAY1,
        "first_review_at": None,
        "verdict_at": None,
        "outcome": None,
        "superseded_at": None,
    }
    return AnnotationEvents(**{**defaults, **kwargs})


def test_a_round_moves_from_submitted_to_review_to_its_verdict():
    a = events(
        first_review_at=DAY1 + timedelta(days=1),
        verdict_at=DAY1 + timedelta(days=2),
        outcome="accepted",
    )
    assert stage_at(a, DAY1 - timedelta(hours=1)) is None
    assert stage_at(a, DAY1 + timedelta(hours=1)) == "submitted"
    assert stage_at(a, DAY1 + timedelta(days=1, hours=1)) == "in_review"
    assert stage_at(a, DAY1 + timedelta(days=2, hours=1)) == "accepted"


def test_a_chain_is_counted_once_a_day_at_its_newest_round():
    sent_back = events(
        id=1,
        first_review_at=DAY1 + timedelta(hours=1),
        verdict_at=DAY1 + timedelta(hours=2),
        outcome="revise",
        superseded_at=DAY1 + timedelta(days=2),
    )
    resubmitted = events(id=2, submitted_at=DAY1 + timedelta(days=2))
    discarded = events(
        id=3,
        submitted_at=DAY1 + timedelta(days=1),
        verdict_at=DAY1 + timedelta(days=1, hours=3),
        outcome="discarded",
    )
    figures = pipeline_by_day(
        [sent_back, resubmitted, discarded], zone=UTC, last_day=date(2026, 3, 3)
    )
    assert figures["days"] == ["2026-03-01", "2026-03-02", "2026-03-03"]
    assert figures["stages"] == {
        "submitted": [0, 0, 1],
        "in_review": [0, 0, 0],
        "revising": [1, 1, 0],
        "accepted": [0, 0, 0],
        "discarded": [0, 1, 1],
    }


def test_no_annotations_no_days():
    assert pipeline_by_day([], zone=UTC, last_day=date(2026, 3, 3))["days"] == []


def test_seconds_histogram_shares_its_bins_between_groups_and_counts_every_annotation():
    figures = seconds_histogram({"b": [3, 4, 5, 60, 600], "a": [10, 12, 15]}, bins=6)
    assert [g["group"] for g in figures["groups"]] == ["a", "b"]
    assert len(figures["edges"]) == 7 and figures["edges"][0] == 0
    assert all(len(g["counts"]) == 6 for g in figures["groups"])
    assert [sum(g["counts"]) for g in figures["groups"]] == [3, 5]
    assert figures["groups"][0]["median"] == 12
    assert seconds_histogram({}) == {"edges": [], "groups": []}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("charts/pipeline/", {"admin", "researcher", "reviewer"}),
        ("charts/seconds-per-item/", {"admin", "researcher"}),
    ],
)
def test_chart_data_is_open_to_the_roles_that_see_those_pages(project, role_users, url, allowed):
    path = f"/api/projects/{project.pk}/{url}"
    for role, user in role_users.items():
        code = client_for(user).get(path).status_code
        assert (code == 200) == (role in allowed), (role, code)
