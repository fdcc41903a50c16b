"""A chunk whose database fails is retried, then fails its job in words naming the chunk.

Each chord chunk task (imports, exports, explainer runs and their scoring, agreement) runs
through `chunk_run_or_fail`. Applied in the test's process, Celery runs each retry at
once with its retry count, so these tests see the whole sequence of deliveries.
"""

import pytest
from celery import states
from django.db import OperationalError

from annotate import tasks as annotate_tasks
from annotate.services import imports
from exports import runs, services
from exports import tasks as export_tasks
from qc import agreement
from qc import tasks as qc_tasks

CHUNK_TASKS = {
    "import": (
        annotate_tasks.import_chunk,
        (7, "a1", 3, 0, 10),
        imports,
        "import_chunk_run",
        "import_job_fail",
        "chunk 3: the database failed 4 times",
        "nothing was imported; start the import again",
    ),
    "export": (
        export_tasks.export_chunk,
        (7, "a1", "items", 3, [1, 2]),
        services,
        "export_chunk_run",
        "export_fail",
        "items chunk 3: the database failed 4 times",
        "nothing was published; start the export again",
    ),
    "explainer run": (
        export_tasks.explainer_run_chunk,
        (7, "a1", 3, 0, 10, 5),
        runs,
        "explainer_run_chunk_run",
        "explainer_run_fail",
        "chunk 3: the database failed 4 times",
        "nothing was scored; start the run again",
    ),
    "explainer scoring": (
        export_tasks.explainer_run_score_chunk,
        (7, "a1", 3, 0, 10, "predictions.jsonl"),
        runs,
        "explainer_run_score_chunk_run",
        "explainer_run_fail",
        "scoring chunk 3: the database failed 4 times",
        "nothing was scored; start the run again",
    ),
    "agreement": (
        qc_tasks.agreement_chunk,
        (7, "a1", {"kind": "pair", "key": "v1|v2"}, 100),
        agreement,
        "agreement_chunk_run",
        "agreement_chunk_fail",
        "pair chunk 'v1|v2': the database failed 4 times",
        "the previous report is kept; refresh it again",
    ),
}


@pytest.fixture(autouse=True)
def errors_kept_in_results():
    """Retries applied in-process re-raise unless the app keeps errors in results."""
    from config.celery import app

    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = previous


@pytest.mark.parametrize("job", CHUNK_TASKS)
def test_a_chunk_whose_database_keeps_failing_fails_its_job_after_four_attempts(job, monkeypatch):
    task, args, module, run_name, fail_name, named, outcome = CHUNK_TASKS[job]
    attempts, failures = [], []

    def run(**kwargs):
        attempts.append(kwargs)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(module, run_name, run)
    monkeypatch.setattr(module, fail_name, lambda **kwargs: failures.append(kwargs))

    assert task.apply(args=args).get() == "failed"
    assert len(attempts) == 4
    assert all(attempt == attempts[0] for attempt in attempts)  # the same chunk each time
    assert len(failures) == 1
    error = failures[0]["error"]
    assert error.startswith(named)
    assert "server closed the connection unexpectedly" in error
    assert error.endswith(outcome)
    assert failures[0]["attempt"] == "a1"


@pytest.mark.parametrize("job", CHUNK_TASKS)
def test_a_chunk_whose_database_fails_once_is_retried_and_its_job_goes_on(job, monkeypatch):
    task, args, module, run_name, fail_name, *_ = CHUNK_TASKS[job]
    attempts, failures = [], []

    def run(**kwargs):
        attempts.append(kwargs)
        if len(attempts) == 1:
            raise OperationalError("deadlock detected")
        return "written"

    monkeypatch.setattr(module, run_name, run)
    monkeypatch.setattr(module, fail_name, lambda **kwargs: failures.append(kwargs))

    assert task.apply(args=args).get() == "written"
    assert len(attempts) == 2
    assert failures == []


def test_an_error_that_is_not_the_database_s_is_not_retried(monkeypatch):
    attempts = []

    def run(**kwargs):
        attempts.append(kwargs)
        raise ValueError("line 3: field 'tokens' is not a list")

    monkeypatch.setattr(services, "export_chunk_run", run)
    monkeypatch.setattr(services, "export_fail", lambda **kwargs: None)

    result = export_tasks.export_chunk.apply(args=(7, "a1", "items", 3, [1]))

    assert result.state == states.FAILURE
    assert isinstance(result.result, ValueError)
    assert len(attempts) == 1
