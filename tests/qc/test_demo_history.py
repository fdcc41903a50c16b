"""The demo's simulated history spans days (qc/demo_history.py), so `make run`'s pipeline
chart has a bar per day and the seconds-per-item histogram differs between variants."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.models import Annotation, Project
from qc.chart_selectors import pipeline_timeline, seconds_per_item
from qc.demo_history import SimulatedAnnotation, demo_schedule
from qc.models import Review, ReviewVerdict

NOW = datetime(2026, 3, 20, 15, 30, tzinfo=UTC)


def _chains() -> list[SimulatedAnnotation]:
    """Forty first rounds, every third sent back and revised once, review ids counting up."""
    firsts = [
        SimulatedAnnotation(
            id=n, revision_of=None, review_ids=(1000 + 2 * n, 1001 + 2 * n), has_verdict=True
        )
        for n in range(1, 41)
    ]
    revisions = [
        SimulatedAnnotation(id=100 + n, revision_of=n, review_ids=(5000 + n,), has_verdict=False)
        for n in range(1, 41, 3)
    ]
    return firsts + revisions + [SimulatedAnnotation(id=999, revision_of=None)]


def test_the_schedule_spans_days_and_keeps_each_chain_in_order():
    chains = _chains()
    schedule = demo_schedule(chains, now=NOW, days=14)

    moments = [
        *schedule.submitted_at.values(),
        *schedule.reviewed_at.values(),
        *schedule.verdict_at.values(),
    ]
    assert all(NOW - timedelta(days=15) < m < NOW for m in moments)
    assert len({m.date() for m in schedule.submitted_at.values()}) >= 7
    assert len({m.date() for m in schedule.reviewed_at.values()}) >= 7
    for chain in chains:
        submitted = schedule.submitted_at[chain.id]
        reviewed = [schedule.reviewed_at[r] for r in chain.review_ids]
        assert reviewed == sorted(reviewed) and all(r > submitted for r in reviewed)
        if chain.has_verdict:
            assert schedule.verdict_at[chain.id] == reviewed[-1]
        else:
            assert chain.id not in schedule.verdict_at
        if chain.revision_of is not None:
            assert submitted > schedule.verdict_at[chain.revision_of]


def test_the_schedule_is_seeded():
    chains = _chains()
    assert demo_schedule(chains, now=NOW) == demo_schedule(chains, now=NOW)
    assert demo_schedule(chains, now=NOW, seed=1) != demo_schedule(chains, now=NOW, seed=2)


def test_a_chain_that_would_end_after_now_is_squeezed_before_it():
    """A long chain made an hour before `now`: every step still follows the one before."""
    chain = [
        SimulatedAnnotation(id=1, revision_of=None, review_ids=(1, 2, 3), has_verdict=True),
        SimulatedAnnotation(id=2, revision_of=1, review_ids=(4, 5), has_verdict=True),
        SimulatedAnnotation(id=3, revision_of=2, review_ids=(6,), has_verdict=False),
    ]
    schedule = demo_schedule(chain, now=NOW, days=1)
    order = [
        schedule.submitted_at[1],
        *(schedule.reviewed_at[r] for r in (1, 2, 3)),
        schedule.submitted_at[2],
        *(schedule.reviewed_at[r] for r in (4, 5)),
        schedule.submitted_at[3],
        schedule.reviewed_at[6],
    ]
    assert order == sorted(order) and len(set(order)) == len(order)
    assert order[-1] < NOW


@pytest.mark.django_db
def test_the_demo_pipeline_and_seconds_span_days_and_differ_per_variant(settings, client):
    settings.DEBUG = True
    call_command("demo_setup")
    call_command("demo_quality")
    project = Project.objects.get(name="Demo: film review sentiment")

    # The agreement report is computed after the simulated revisions, not before them.
    client.force_login(get_user_model().objects.get(username="demo-researcher"))
    report = client.get(f"/api/projects/{project.pk}/agreement/").json()
    assert report["status"] == "ready" and report["annotations_since"] == 0

    timeline = pipeline_timeline(project=project)
    assert len(timeline["days"]) >= 10
    days_with_submissions = {
        a.created_at.date()
        for a in Annotation.objects.filter(assignment__item__project=project, revision_of=None)
    }
    assert len(days_with_submissions) >= 5
    reviewed_days = {
        r.created_at.date()
        for r in Review.objects.filter(annotation__assignment__item__project=project)
    }
    accepted_days = {
        v.created_at.date()
        for v in ReviewVerdict.objects.filter(
            annotation__assignment__item__project=project, outcome="accepted"
        )
    }
    assert len(reviewed_days) >= 5 and len(accepted_days) >= 3
    # Every review after what it reviews; every revision after the verdict that sent it back.
    for review in Review.objects.filter(
        annotation__assignment__item__project=project
    ).select_related("annotation"):
        assert review.created_at > review.annotation.created_at
    for revision in Annotation.objects.filter(
        assignment__item__project=project, revision_of__isnull=False
    ).select_related("revision_of__verdict"):
        assert revision.created_at > revision.revision_of.verdict.created_at
    # The stacked chart's last day holds every chain, as the pipeline counts do today.
    last_day_total = sum(counts[-1] for counts in timeline["stages"].values())
    assert (
        last_day_total
        == Annotation.objects.filter(
            assignment__item__project=project, revisions__isnull=True
        ).count()
    )

    medians = {
        variant: statistics.median(
            a.time_spent_ms
            for a in Annotation.objects.filter(
                assignment__item__project=project,
                assignment__round=1,
                assignment__variant__name=variant,
            )
        )
        for variant in ("word-critical", "part-supports", "guide-whole-spans")
    }
    assert medians["word-critical"] < medians["part-supports"] < medians["guide-whole-spans"]
    histogram = seconds_per_item(project=project)
    assert len(histogram["edges"]) > 3
