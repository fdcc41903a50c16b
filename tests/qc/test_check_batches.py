"""Quality checks in batches: the same results as one at a time, one queued job for many
submits, and the real worker checking every submission on one database connection."""

import random
import time
import uuid
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection
from django.urls import reverse

from annotate.models import Annotation, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from annotate.signals import annotation_submitted
from qc.models import ProjectWorker, QualityFlag, SubmissionCheck
from qc.services import checks, quality_policy_update
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
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


@pytest.fixture
def rests(monkeypatch):
    """The check job's rests, recorded instead of slept."""
    recorded = mock.Mock()
    monkeypatch.setattr(checks, "_rest", recorded)
    return recorded


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


def run_job_in_the_worker(**kwargs) -> int:
    """Run the job as the worker would: in another process, so what this (web) process
    knows of the queued job stays as it was."""
    with mock.patch.object(checks, "checks_queued_job_forget"):
        return checks.quality_checks_run(**kwargs)


def last_looks(queue) -> list:
    return [c for c in queue.call_args_list if c.kwargs.get("kwargs") == {"last_look": True}]


def test_with_a_broker_many_submits_queue_one_job_until_it_runs(
    db, django_capture_on_commit_callbacks
):
    project = make_project(items=6, quota=2, min_highlight=0)
    people = annotators(project, 3)

    def submit_and_commit(person):
        with django_capture_on_commit_callbacks(execute=True):
            assert submit_one(project, person).status_code == 201

    with (
        tasks_sent_to_a_broker(),
        mock.patch("qc.tasks.quality_checks_job.apply_async") as queue,
    ):
        for person in people:
            submit_and_commit(person)
        assert queue.call_count == 1
        assert not SubmissionCheck.objects.exists()

        assert run_job_in_the_worker() == 3
        assert SubmissionCheck.objects.count() == 3
        assert len(last_looks(queue)) == 1, "it ran less than ASK_INTERVAL_SECONDS"
        assert cache.get(checks.CHECKS_QUEUED_KEY) is None, "the last look holds no key"

        # ASK_INTERVAL_SECONDS on, this process asks again and queues the next job.
        with mock.patch.object(checks, "time") as clock:
            clock.time.return_value = time.time() + checks.ASK_INTERVAL_SECONDS
            submit_and_commit(people[0])
        assert queue.call_count == 3 and len(last_looks(queue)) == 1


def test_a_late_job_is_asked_about_once_per_interval_and_its_last_look_checks_the_rest(
    db, django_capture_on_commit_callbacks
):
    project = make_project(items=6, quota=2, min_highlight=0)
    people = annotators(project, 3)
    # Another process queued a job that should have started already: its worker is busy.
    cache.add(checks.CHECKS_QUEUED_KEY, time.time() - 5, timeout=60)

    with (
        tasks_sent_to_a_broker(),
        mock.patch("qc.tasks.quality_checks_job.apply_async") as queue,
        mock.patch.object(cache, "add", wraps=cache.add) as add,
        mock.patch.object(cache, "get", wraps=cache.get) as get,
    ):
        with django_capture_on_commit_callbacks(execute=True):
            assert submit_one(project, people[0]).status_code == 201
        assert run_job_in_the_worker() == 1  # the late job starts at last
        # Committed after the job looked, by a process that does not ask yet.
        with django_capture_on_commit_callbacks(execute=True):
            late = submit_one(project, people[1]).data["annotation_id"]

        asked = [
            c for c in add.call_args_list + get.call_args_list if checks.CHECKS_QUEUED_KEY in c.args
        ]
        assert len(asked) == 2, "the first submit asks (add, then get); the second knows"
        assert not SubmissionCheck.objects.filter(annotation_id=late).exists()
        (last_look,) = last_looks(queue)
        assert (
            0
            < last_look.kwargs["countdown"]
            <= (checks.ASK_INTERVAL_SECONDS + checks.CLOCK_MARGIN_SECONDS)
        )
        assert queue.call_count == 1, "no new job: only the last look"

        assert run_job_in_the_worker(last_look=True) == 1
        assert SubmissionCheck.objects.filter(annotation_id=late).exists()
        assert queue.call_count == 1, "a last look queues no look of its own"


def test_while_a_queued_job_has_not_started_submits_do_not_ask_the_cache(
    db, django_capture_on_commit_callbacks
):
    project = make_project(items=6, quota=2, min_highlight=0)
    people = annotators(project, 3)
    # Another process queued a job that starts in half a second.
    cache.add(checks.CHECKS_QUEUED_KEY, time.time() + checks.CHECKS_DELAY_SECONDS, timeout=60)

    with (
        tasks_sent_to_a_broker(),
        mock.patch("qc.tasks.quality_checks_job.apply_async") as queue,
        mock.patch.object(cache, "add", wraps=cache.add) as add,
        mock.patch.object(cache, "get", wraps=cache.get) as get,
    ):
        for person in people:
            with django_capture_on_commit_callbacks(execute=True):
                assert submit_one(project, person).status_code == 201

    asked = [
        c for c in add.call_args_list + get.call_args_list if checks.CHECKS_QUEUED_KEY in c.args
    ]
    assert len(asked) == 2, "the first submit asks (add, then get); the others know"
    assert queue.call_count == 0, "the queued job will check all three"


def test_a_job_that_cannot_finish_queues_its_successor(db, monkeypatch):
    _, ids = unchecked_submissions(seed=3)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    monkeypatch.setattr(checks, "CHECK_BATCHES_PER_JOB", 1)

    with mock.patch("qc.tasks.quality_checks_job.apply_async") as queue:
        assert checks.quality_checks_run() == 2
        assert queue.call_count == 1 and cache.get(checks.CHECKS_QUEUED_KEY)
        # Its successor, in the same worker process, queues its own successor in turn.
        assert checks.quality_checks_run() == 2
        assert queue.call_count == 2 and cache.get(checks.CHECKS_QUEUED_KEY)
        while checks.quality_checks_run():
            pass

    assert SubmissionCheck.objects.filter(annotation_id__in=ids).count() == len(ids)


def test_a_job_that_has_caught_up_leaves_what_trickles_in_to_the_next_job(db, monkeypatch):
    _, ids = unchecked_submissions(seed=4)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    unchecked = iter([[i] for i in ids])  # each look finds one new submission
    looks = mock.Mock(side_effect=lambda **_: next(unchecked, []))
    monkeypatch.setattr(checks, "annotations_without_checks", looks)

    with mock.patch("qc.tasks.quality_checks_job.apply_async") as queue:
        assert checks.quality_checks_run() == 1

    assert looks.call_count == 1, "a batch short of full means the job has caught up"
    assert len(last_looks(queue)) == 1 and queue.call_count == 1


def test_a_last_look_gives_way_to_a_job_queued_since(db):
    unchecked_submissions(seed=4, people=1)
    cache.add(checks.CHECKS_QUEUED_KEY, time.time() + 1, timeout=60)

    assert run_job_in_the_worker(last_look=True) == 0
    assert not SubmissionCheck.objects.exists(), "the queued job starts later and checks them"
    assert cache.get(checks.CHECKS_QUEUED_KEY) is not None


def test_a_job_updates_the_standings_once_after_its_batches(db, monkeypatch):
    project = make_project(items=3, quota=2, min_highlight=0)
    quality_policy_update(project=project, auto_block=False)
    with mock.patch.object(annotation_submitted, "send"):
        ids = submit_everything(project, annotators(project, 2), random.Random(5))
    for annotation_id in ids:  # the reference: checked one at a time
        checks.annotation_quality_check(annotation_id=annotation_id)
    one_at_a_time = check_results(project)
    forget_checks(project)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)

    with (
        mock.patch("qc.tasks.quality_checks_job.apply_async"),
        mock.patch.object(
            checks, "worker_standings_update", wraps=checks.worker_standings_update
        ) as standings,
    ):
        assert checks.quality_checks_run() == len(ids)

    assert standings.call_count == 1, f"{len(ids)} checks in batches of 2, one update"
    assert check_results(project) == one_at_a_time


def test_a_job_that_keeps_up_rests_after_each_batch(db, monkeypatch, rests):
    _, ids = unchecked_submissions(seed=6)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)

    with mock.patch("qc.tasks.quality_checks_job.apply_async"):
        assert checks.quality_checks_run() == len(ids) == 6

    assert rests.call_count == 2, "a rest between batches, none once caught up"
    assert all(0 < c.args[0] < 5 for c in rests.call_args_list), "up to as long as a batch took"


def test_a_job_rests_less_the_further_behind_it_is(db, monkeypatch, rests):
    monkeypatch.setattr(checks, "CHECKS_CATCH_UP_BACKLOG", 10)
    monkeypatch.setattr(checks, "annotation_quality_checks", mock.Mock())
    monkeypatch.setattr(checks, "_standings_update_after", mock.Mock())
    ticks = iter(range(100))  # each batch takes one second
    monkeypatch.setattr(checks.time, "monotonic", lambda: next(ticks))
    backlogs = iter([list(range(8)), list(range(2)), []])  # 8 behind, then 2, then none
    monkeypatch.setattr(checks, "annotations_without_checks", lambda **_: next(backlogs))
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 1)

    with mock.patch("qc.tasks.quality_checks_job.apply_async"):
        checks.quality_checks_run()

    assert [round(c.args[0], 2) for c in rests.call_args_list] == [0.2, 0.8]


def test_a_job_far_behind_checks_big_batches_without_rest_until_close(db, monkeypatch, rests):
    _, ids = unchecked_submissions(seed=7)
    monkeypatch.setattr(checks, "CHECK_BATCH_SIZE", 2)
    monkeypatch.setattr(checks, "CHECK_CATCH_UP_BATCH_SIZE", 3)
    monkeypatch.setattr(checks, "CHECKS_CATCH_UP_BACKLOG", 4)

    with (
        mock.patch("qc.tasks.quality_checks_job.apply_async"),
        mock.patch.object(
            checks, "annotation_quality_checks", wraps=checks.annotation_quality_checks
        ) as batch_check,
    ):
        assert checks.quality_checks_run() == len(ids) == 6

    batches = [len(c.kwargs["annotation_ids"]) for c in batch_check.call_args_list]
    # 6 behind (4 or more: catching up): 3 without rest; then 3 behind: 2, a rest, 1.
    assert batches == [3, 2, 1]
    assert rests.call_count == 1
    assert SubmissionCheck.objects.filter(annotation_id__in=ids).count() == len(ids)


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


def other_backends() -> set[int]:
    """PostgreSQL backends serving the test database for someone else: the worker."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
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
def test_the_real_worker_checks_every_submission_on_one_connection(live_celery):
    project = make_project(items=6, quota=2, min_highlight=0)
    people = annotators(project, 3)

    first = [submit_one(project, person).data["annotation_id"] for person in people]
    wait_until_checked(first, live_celery["log"])
    serving_first = other_backends()
    second = [submit_one(project, person).data["annotation_id"] for person in people]
    wait_until_checked(second, live_celery["log"])

    assert "quality_checks_job" in live_celery["log"].read_text()
    # Celery's Django fix-up closed the connection after every task; the worker now
    # keeps it, as Django keeps one between requests.
    assert serving_first & other_backends(), "the worker reconnected between its jobs"
    assert Annotation.objects.filter(assignment__item__project=project).count() == 6
