"""The time left of a long job, from the rate so far (annotate/job_progress.py)."""

from datetime import UTC, datetime, timedelta

import pytest

from annotate.job_progress import JobProgress, seconds_left

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_time_left_is_what_remains_at_the_rate_so_far():
    # 1,200 of 5,000 in 12 s: 100 a second, 3,800 to go.
    assert seconds_left(
        done=1200, total=5000, since=START, now=START + timedelta(seconds=12)
    ) == pytest.approx(38.0)


def test_time_left_counts_from_what_was_done_when_the_phase_was_first_seen():
    # Seen at 1,000 done; 500 more in 10 s is 50 a second; 3,500 to go.
    assert seconds_left(
        done=1500,
        total=5000,
        since=START,
        done_since=1000,
        now=START + timedelta(seconds=10),
    ) == pytest.approx(70.0)


@pytest.mark.parametrize(
    ("done", "total", "since", "done_since", "elapsed"),
    [
        (0, 100, START, 0, 5),  # nothing done yet
        (10, 0, START, 0, 5),  # no total known
        (10, 100, None, 0, 5),  # no start
        (10, 100, START, 0, 0),  # no time passed
        (10, 100, START, 10, 5),  # nothing done since the start seen
    ],
)
def test_no_estimate_without_a_rate(done, total, since, done_since, elapsed):
    now = START + timedelta(seconds=elapsed)
    assert seconds_left(done=done, total=total, since=since, done_since=done_since, now=now) is None


def test_nothing_left_once_done():
    assert seconds_left(done=100, total=100, since=START, now=START) == 0.0


def test_a_job_ended_is_final():
    def progress(status):
        return JobProgress(
            kind="export",
            id=1,
            status=status,
            phase="",
            done=1,
            total=2,
            unit="items",
            started_at=None,
            finished_at=None,
            seconds_left=None,
            error="",
            result_url=None,
        )

    assert [progress(s).final for s in ("pending", "running")] == [False, False]
    assert [progress(s).as_dict()["final"] for s in ("succeeded", "failed", "cancelled")] == [
        True,
        True,
        True,
    ]


def test_the_estimate_comes_from_the_rate_seen_since_the_phase_was_first_polled(monkeypatch):
    from annotate import job_progress_selectors

    clock = {"now": START}
    monkeypatch.setattr(job_progress_selectors.timezone, "now", lambda: clock["now"])

    def poll(done, phase="writing"):
        return job_progress_selectors.job_progress_build(
            kind="import",
            job_id=99,
            status="running",
            phase=phase,
            done=done,
            total=1000,
            unit="records",
            started_at=START,
            finished_at=None,
            error="",
            result_url=None,
        )

    assert poll(100).seconds_left is None  # first sight: no rate yet
    clock["now"] = START + timedelta(seconds=10)
    assert poll(300).seconds_left == pytest.approx(35.0)  # 200 in 10 s, 700 to go
    # A new phase counts again from its own start.
    assert poll(0, phase="documents").seconds_left is None
