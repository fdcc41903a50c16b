"""Quality checks in batches: the same results as one at a time; a periodic sweep that
checks what is unchecked, paced by a clock the tests control, one sweep at a time; and the
real worker with beat checking every submission on one database connection."""

import io
import random
import threading
import time
import uuid
from unittest import mock

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from annotate.models import Annotation, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from annotate.signals import annotation_submitted
from config.celery import app
from qc.models import ProjectWorker, QualityFlag, SubmissionCheck
from qc.services import checks, quality_policy_update
from qc.tasks import quality_checks_sweep
from tests.annotate.workflow_helpers import make_project
from tests.conftest import celery_worker_services_required, client_for, start_celery_worker
from tests.factories import UserFactory
from tests.qc.test_checks import tasks_sent_to_a_broker


def annotators(project, n):
    people = [UserFactory() for _ in range(n)]
    for person in people:
        ProjectMembership.objects.create(project=project, user=person, role=Role.ANNOTATOR)
    return people


def submit_everything(project, people, rng):
    """Every annotator annotates every item they are given: random tokens, some empty,
    some fast, so that each kind of flag and of agreement shows up."""
    ids = []
    for person in people:
        while (lease := assignment_next(project=project, worker=person)) is not None:
            docid = lease.item.item_documents.all()[0].document.docid
            tokens = sorted(rng.sample(range(12), rng.choice([0, 1, 3, 6])))
            result = annotation_submit(
                assignment_id=lease.pk,
                worker=person,
                client_uuid=uuid.uuid4(),
                rationale_sets=[
                    [{"docid": docid, "start_token": t, "end_token": t + 1} for t in tokens]
                ],
                time_spent_ms=rng.choice([1_000, 40_000]),
            )
            ids.append(result.annotation.pk)
    return ids


def unchecked_submissions(*, seed: int, people: int = 2):
    """Three items, two annotators each; everything submitted, nothing checked yet."""
    project = make_project(items=3, quota=2, min_highlight=0)
    with mock.patch.object(annotation_submitted, "send"):
        ids = submit_everything(project, annotators(project, people), random.Random(seed))
    return project, ids


class FakeClock:
    """The sweep's clock in tests: time moves only when a batch runs (`timed_batches`) or
    the sweep rests, and each rest is recorded instead of slept."""

    def __init__(self):
        self.now = 0.0
        self.rests: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.rests.append(seconds)
        self.now += seconds


@pytest.fixture
def clock():
    return FakeClock()


def timed_batches(monkeypatch, clock, *, seconds=1.0, check=None) -> list[list[int]]:
    """Each batch of checks takes `seconds` on `clock` (and runs `check`, the real checks
    unless given). Returns the list the batches are recorded in."""
    check = check or checks.annotation_quality_checks
    batches: list[list[int]] = []

    def batch(*, annotation_ids, **kwargs):
        batches.append(list(annotation_ids))
        clock.now += seconds
        return check(annotation_ids=annotation_ids, **kwargs)

    monkeypatch.setattr(checks, "annotation_quality_checks", batch)
    return batches


def check_results(project):
    checks_by_annotation = {
        c.annotation_id: (
            c.highlighted,
            c.seconds,
            c.stopword_share,
            c.coannotator_kappa,
            c.majority_kappa,
        )
        for c in SubmissionCheck.objects.filter(project=project)
    }
    flags = sorted(
        QualityFlag.objects.filter(annotation__assignment__item__project=project).values_list(
            "annotation_id", "kind", "value", "detail"
        )
    )
    standings = {
        s.worker_id: (s.aggregates, s.warnings, s.status)
        for s in ProjectWorker.objects.filter(project=project)
    }
    return checks_by_annotation, flags, standings


def forget_checks(project):
    SubmissionCheck.objects.filter(project=project).delete()
    QualityFlag.objects.filter(annotation__assignment__item__project=project).delete()
    ProjectWorker.objects.filter(project=project).update(aggregates={}, warnings=[])


@pytest.mark.parametrize("seed", [1, 2])
def test_batched_checks_give_what_checking_one_at_a_time_gives(db, seed):
    project = make_project(items=5, quota=3, min_highlight=0)
    quality_policy_update(project=project, auto_block=False)
    with mock.patch.object(annotation_submitted, "send"):  # submit without checking
        ids = submit_everything(project, annotators(project, 4), random.Random(seed))
    assert len(ids) >= 15

    for annotation_id in ids:
        checks.annotation_quality_check(annotation_id=annotation_id)
    one_at_a_time = check_results(project)
    forget_checks(project)
    checks.annotation_quality_checks(annotation_ids=ids)
    batched = check_results(project)

    assert batched == one_at_a_time
    assert any(kind == "low_agreement" for _, kind, _, _ in batched[1])
    assert len(batched[0]) == len(ids)


def submit_one(project, person):
    lease = client_for(person).post(reverse("annotate:assignment-next", args=[project.id])).data
    return client_for(person).post(
        reverse("annotate:assignment-submit", args=[lease["id"]]),
        {"client_uuid": str(uuid.uuid4()), "rationale_sets": [], "time_spent_ms": 1000},
        format="json",
    )


def test_with_a_broker_submits_publish_nothing_and_the_sweep_checks_them(
    db, django_capture_on_commit_callbacks, clock
):
    project = make_project(items=6, quota=2, min_highlight=0)
    people = annotators(project, 3)

    with (
        tasks_sent_to_a_broker(),
        mock.patch.object(app, "send_task") as published,
        django_capture_on_commit_callbacks(execute=True),
    ):
        submitted = [submit_one(project, person).data["annotation_id"] for person in people]

    assert published.call_count == 0
    assert not SubmissionCheck.objects.exists()
    assert checks.quality_checks_sweep(clock=clock) == 3
    assert set(SubmissionCheck.objects.values_list("annotation_id", flat=True)) == set(submitted)
    assert checks.quality_checks_sweep(clock=clock) == 0, "nothing left to check"


def test_without_a_broker_the_submit_checks_in_process(db, django_capture_on_commit_callbacks):
    project = make_project(items=2, quota=1, min_highlight=0)
    (person,) = annotators(project, 1)

    with django_capture_on_commit_callbacks(execute=True):
        annotation_id = submit_one(project, person).data["annotation_id"]

    assert SubmissionCheck.objects.filter(annotation_id=annotation_id).exists()


def test_a_sweep_gives_what_checking_one_at_a_time_gives_and_updates_standings_once(
    db, monkeypatch, clock
):
    project = make_project(items=3, quota=2, min_highlight=0)
    quality_policy_update(project=project, auto_block=False)
    with mock.patch.object(annotation_submitted, "send"):
        ids = submit_everything(project, annotators(project, 2), random.Random(5))
    for annotation_id in ids:  # the reference: checked one at a time
        checks.annotation_quality_check(annotation_id=annotation_id)
    one_at_a_time = check_results(project)
    forget_checks(project)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    batches = timed_batches(monkeypatch, clock)

    with mock.patch.object(
        checks, "worker_standings_update", wraps=checks.worker_standings_update
    ) as standings:
        assert checks.quality_checks_sweep(clock=clock) == len(ids)

    assert [len(b) for b in batches] == [2] * (len(ids) // 2)
    assert standings.call_count == 1, f"{len(ids)} checks in batches of 2, one update"
    assert check_results(project) == one_at_a_time


def test_a_sweep_that_keeps_up_rests_after_each_batch_as_long_as_it_took(db, monkeypatch, clock):
    _, ids = unchecked_submissions(seed=6)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    timed_batches(monkeypatch, clock, seconds=0.5)

    assert checks.quality_checks_sweep(clock=clock) == len(ids) == 6

    # A rest after each batch but the last (caught up): the batch's 0.5 s, shortened by
    # the share of CHECKS_CATCH_UP_BACKLOG (500) still behind, 6 then 4.
    assert clock.rests == [
        pytest.approx(0.5 * (1 - 6 / 500), abs=1e-12),
        pytest.approx(0.5 * (1 - 4 / 500), abs=1e-12),
    ]


def test_a_sweep_rests_less_the_further_behind_it_is(db, monkeypatch, clock):
    monkeypatch.setattr(checks, "CHECKS_CATCH_UP_BACKLOG", 10)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 1)
    monkeypatch.setattr(checks, "_standings_update_after", mock.Mock())
    timed_batches(monkeypatch, clock, seconds=1.0, check=mock.Mock())
    backlogs = iter([list(range(8)), list(range(2)), []])  # 8 behind, then 2, then none
    monkeypatch.setattr(checks, "annotations_without_checks", lambda **_: next(backlogs))

    checks.quality_checks_sweep(clock=clock)

    assert clock.rests == [pytest.approx(0.2), pytest.approx(0.8)]


def test_a_sweep_far_behind_checks_big_batches_without_rest_until_close(db, monkeypatch, clock):
    _, ids = unchecked_submissions(seed=7)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    monkeypatch.setattr(checks, "CHECK_CATCH_UP_BATCH_SIZE", 3)
    monkeypatch.setattr(checks, "CHECKS_CATCH_UP_BACKLOG", 4)
    batches = timed_batches(monkeypatch, clock, seconds=1.0)

    assert checks.quality_checks_sweep(clock=clock) == len(ids) == 6

    # 6 behind (4 or more: catching up): 3 without rest; then 3 behind: 2, a rest, 1.
    assert [len(b) for b in batches] == [3, 2, 1]
    assert clock.rests == [pytest.approx(1.0 * (1 - 3 / 4))]
    assert SubmissionCheck.objects.filter(annotation_id__in=ids).count() == len(ids)


def test_a_sweep_that_has_caught_up_leaves_what_trickles_in_to_the_next(db, monkeypatch, clock):
    _, ids = unchecked_submissions(seed=4)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    unchecked = iter([[i] for i in ids])  # each look finds one new submission
    looks = mock.Mock(side_effect=lambda **_: next(unchecked, []))
    monkeypatch.setattr(checks, "annotations_without_checks", looks)

    assert checks.quality_checks_sweep(clock=clock) == 1

    assert looks.call_count == 1, "a batch short of full means the sweep has caught up"
    assert clock.rests == []


def test_a_sweep_stops_after_its_batches_and_the_next_goes_on(db, monkeypatch, clock):
    _, ids = unchecked_submissions(seed=3)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    monkeypatch.setattr(checks, "CHECK_BATCHES_PER_SWEEP", 1)

    with (
        mock.patch.object(app, "send_task") as published,
        mock.patch.object(
            checks, "_standings_update_after", wraps=checks._standings_update_after
        ) as standings,
    ):
        sweeps = [checks.quality_checks_sweep(clock=clock) for _ in range(4)]

    assert sweeps == [2, 2, 2, 0]
    assert standings.call_count == 4, "each sweep updates the standings of what it checked"
    assert published.call_count == 0, "no successor is queued: the next tick goes on"
    assert SubmissionCheck.objects.filter(annotation_id__in=ids).count() == len(ids)


def test_a_sweep_looks_among_recent_submissions_and_leaves_older_ones_to_the_command(
    db, monkeypatch, clock
):
    _, ids = unchecked_submissions(seed=8)
    checks.annotation_quality_checks(annotation_ids=[ids[-1]])
    # The window reaches down to (not including) the third submission.
    monkeypatch.setattr(checks, "RECENT_WINDOW", ids[-1] - ids[2])

    assert checks.quality_checks_sweep(clock=clock) == len(ids) - 4
    unchecked = set(ids) - set(SubmissionCheck.objects.values_list("annotation_id", flat=True))
    assert unchecked == set(ids[:3])

    call_command("qc_check_missing", stdout=io.StringIO())
    assert SubmissionCheck.objects.filter(annotation_id__in=ids).count() == len(ids)


class RestingUntilReleased(FakeClock):
    """A clock whose first rest lasts until the test releases it."""

    def __init__(self):
        super().__init__()
        self.resting, self.released = threading.Event(), threading.Event()

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        self.resting.set()
        assert self.released.wait(60), "the test never released the sweep"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_sweep_returns_at_once_while_another_is_running(postgres_only, monkeypatch, clock):
    _, ids = unchecked_submissions(seed=9)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    first_clock = RestingUntilReleased()
    first_result: list[int] = []

    def first_sweep():  # on a connection of its own, as on another worker process
        try:
            first_result.append(checks.quality_checks_sweep(clock=first_clock))
        finally:
            connection.close()

    first = threading.Thread(target=first_sweep)
    first.start()
    try:
        assert first_clock.resting.wait(60), "the first sweep never rested"
        # Waiting for the lock would mean waiting for the first sweep to end, which only the
        # release below allows: it returns 0 only by not waiting.
        assert checks.quality_checks_sweep(clock=clock) == 0
        assert SubmissionCheck.objects.count() == 2, "only the first sweep's first batch"
    finally:
        first_clock.released.set()
        first.join(60)

    assert first_result == [len(ids)]
    assert checks.quality_checks_sweep(clock=clock) == 0, "the first sweep checked them all"
    assert SubmissionCheck.objects.filter(annotation_id__in=ids).count() == len(ids)


def test_beat_starts_a_sweep_at_the_configured_interval(db):
    (entry,) = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == quality_checks_sweep.name
    ]

    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE
    assert entry["schedule"] == settings.QC_CHECK_INTERVAL_SECONDS
    # A tick no worker took within the interval is dropped: the next one sweeps the same.
    assert entry["options"]["expires"] == settings.QC_CHECK_INTERVAL_SECONDS
    assert quality_checks_sweep.name in app.tasks
    assert quality_checks_sweep.apply().get() == 0, "the task runs the sweep"


def test_standings_read_each_workers_recent_checks_alike_on_postgresql_and_elsewhere(
    postgres_only, monkeypatch
):
    project = make_project(items=4, quota=3, min_highlight=0)
    people = annotators(project, 3)
    with mock.patch.object(annotation_submitted, "send"):
        ids = submit_everything(project, people, random.Random(8))
    checks.annotation_quality_checks(annotation_ids=ids)
    monkeypatch.setattr(checks, "AGGREGATE_WINDOW", 3)  # shorter than each one's history
    workers = [p.pk for p in people] + [UserFactory().pk]  # one without checks

    on_postgresql = checks._recent_figures(project, workers)
    monkeypatch.setattr(connection, "vendor", "elsewhere")
    elsewhere = checks._recent_figures(project, workers)

    assert on_postgresql == elsewhere
    assert sorted(on_postgresql) == sorted(p.pk for p in people)
    for person in people:
        newest = list(
            SubmissionCheck.objects.filter(project=project, worker=person)
            .order_by("-annotation_id")
            .values_list("seconds", flat=True)[:3]
        )
        assert on_postgresql[person.pk].seconds == newest


@pytest.fixture
def worker_with_beat(transactional_db, tmp_path):
    """A worker of this test's own that also runs beat, both on a private queue; the
    shared worker runs no beat (see `start_celery_worker`)."""
    celery_worker_services_required()
    queue = f"rw-beat-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "worker.log"
    worker = start_celery_worker(queue=queue, media_root=tmp_path / "media", log=log, beat=True)
    previous = app.conf.task_always_eager, app.conf.task_default_queue
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    yield {"queue": queue, "log": log}
    app.conf.task_always_eager, app.conf.task_default_queue = previous
    worker.terminate()
    worker.wait(timeout=30)


def worker_backends(queue: str) -> set[int]:
    """The PostgreSQL backends of the worker on `queue` (it names its connections so)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = %s",
            [queue],
        )
        return {pid for (pid,) in cursor.fetchall()}


def wait_until_checked(annotation_ids, log, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if SubmissionCheck.objects.filter(annotation_id__in=annotation_ids).count() == len(
            annotation_ids
        ):
            return
        time.sleep(0.2)
    raise AssertionError(f"not every submission was checked:\n{log.read_text()[-3000:]}")


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_the_real_worker_with_beat_checks_every_submission_on_one_connection(
    worker_with_beat,
):
    project = make_project(items=6, quota=2, min_highlight=0)
    people = annotators(project, 3)
    log = worker_with_beat["log"]

    with mock.patch.object(app, "send_task", wraps=app.send_task) as published:
        first = [submit_one(project, person).data["annotation_id"] for person in people]
        wait_until_checked(first, log)
        serving_first = worker_backends(worker_with_beat["queue"])
        second = [submit_one(project, person).data["annotation_id"] for person in people]
        wait_until_checked(second, log)

    assert published.call_count == 0, "the submits published nothing: beat started the sweeps"
    assert f"Task {quality_checks_sweep.name}[" in log.read_text()
    # Celery's Django fix-up closed the connection after every task; the worker now
    # keeps it, as Django keeps one between requests.
    assert serving_first, "the worker's connection is named after its queue"
    assert serving_first & worker_backends(worker_with_beat["queue"]), (
        "the worker reconnected between its sweeps"
    )
    assert Annotation.objects.filter(assignment__item__project=project).count() == 6
