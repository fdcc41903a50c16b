"""A bundled explainer's run (docs/design/architecture.md#background-jobs) explained in chunks
of instances, then scored in chunks of lines, with the predictions and scores of one process
however the chunks were cut, run in any order or twice; a failed chunk fails the run and scores
nothing."""

import json
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone

from annotate.models import Item
from exports import runs
from exports import storage as export_storage
from exports.models import ExplainerRun, ExplainerRunPart
from exports.runs import explainer_run_start
from exports.services import export_start, export_work_sweep
from tests.exports.test_export_chunks import FakeChord, make_study


def labelled_study():
    """A study whose items carry both labels in every split, so the baseline trains."""
    project = make_study(items=24)
    for n, item in enumerate(Item.objects.filter(project=project).order_by("pk")):
        item.label = ("neg", "pos")[(n // 3) % 2]
        item.save(update_fields=["label"])
    return project


@pytest.fixture
def study_export(db, django_capture_on_commit_callbacks):
    project = labelled_study()
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=project, acting_user=None, raw_params={})
    export.refresh_from_db()
    assert export.status == "succeeded", export.error
    return export


def start(export, capture, explainer="lime", split="train") -> ExplainerRun:
    with capture(execute=True):
        created = explainer_run_start(
            export=export, acting_user=None, name=explainer, split=split, explainer=explainer
        )
    return ExplainerRun.objects.get(pk=created.pk)


def predictions_of(run: ExplainerRun) -> bytes:
    with default_storage.open(run.predictions.name, "rb") as handle:
        return handle.read()


def scores_json(run: ExplainerRun) -> bytes:
    return json.dumps([run.scores, run.plausibility_by_variant], sort_keys=True).encode()


@pytest.mark.parametrize("explainer", ["lime", "random", "occlusion"])
def test_chunks_of_any_size_give_the_one_process_predictions_and_scores(
    study_export, settings, django_capture_on_commit_callbacks, explainer
):
    done = []
    for size in (1000, 3, 1):
        settings.EXPLAINER_RUN_CHUNK_INSTANCES = size
        done.append(start(study_export, django_capture_on_commit_callbacks, explainer))

    assert [r.status for r in done] == ["succeeded"] * 3, [r.error for r in done]
    assert len({predictions_of(r) for r in done}) == 1
    assert len({scores_json(r) for r in done}) == 1
    assert predictions_of(done[0]).count(b"\n") == 8
    # 8 instances explained, then their 8 lines scored.
    assert {(r.progress_done, r.progress_total) for r in done} == {(16, 16)}
    assert not ExplainerRunPart.objects.exists()
    assert not list(export_storage._walk(export_storage.RUNS_ROOT + "/" + str(done[-1].pk)))


def test_chunks_run_here_read_the_export_and_train_the_baseline_once(
    study_export, settings, django_capture_on_commit_callbacks, monkeypatch
):
    """One after the other in one process, the chunks share what every worker's chunk
    would read and train for itself: 8 instances in chunks of 1 read the dataset once to
    explain and once to score, and train the baseline once."""
    reads, trainings = [], []
    read, train = runs._dataset_of, runs.train_baseline
    monkeypatch.setattr(runs, "_dataset_of", lambda export: reads.append(1) or read(export))
    monkeypatch.setattr(
        runs, "train_baseline", lambda *a, **k: trainings.append(1) or train(*a, **k)
    )
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 1

    run = start(study_export, django_capture_on_commit_callbacks, "random")

    assert run.status == "succeeded", run.error
    assert run.progress_done == 16  # 8 instances explained, 8 lines scored, in 16 chunks
    assert (len(reads), len(trainings)) == (2, 1), "once to explain, once to score"


@pytest.fixture
def split_over_workers(monkeypatch):
    """The run sends its chunks as a chord; the test then plays the workers' part."""
    FakeChord.sent = []
    monkeypatch.setattr(runs, "chunks_go_to_workers", lambda chunks, **_: chunks > 1)
    monkeypatch.setattr("celery.chord", FakeChord)
    return FakeChord.sent


def run_chunk(signature) -> str:
    run_id, attempt, index, begin, stop, k = signature.args
    return runs.explainer_run_chunk_run(
        run_id=run_id, attempt=attempt, index=index, start=begin, stop=stop, k=k
    )


def assemble(body) -> ExplainerRun:
    run_id, attempt, chunks = body.args
    return runs.explainer_run_assemble_run(run_id=run_id, attempt=attempt, chunks=chunks)


def run_score_chunk(signature) -> str:
    run_id, attempt, index, begin, stop, name = signature.args
    return runs.explainer_run_score_chunk_run(
        run_id=run_id, attempt=attempt, index=index, start=begin, stop=stop, predictions_name=name
    )


def score_assemble(body) -> ExplainerRun:
    run_id, attempt, first, chunks, name = body.args
    return runs.explainer_run_score_assemble_run(
        run_id=run_id, attempt=attempt, first=first, chunks=chunks, predictions_name=name
    )


def test_chunks_in_any_order_and_run_twice_give_the_one_process_result(
    study_export, settings, split_over_workers, django_capture_on_commit_callbacks, monkeypatch
):
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3
    run = start(study_export, django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    assert [s.args[2:5] for s in header] == [(0, 0, 3), (1, 3, 6), (2, 6, 8)]
    assert (run.status, run.progress_done, run.progress_total) == ("running", 0, 8)

    for signature in reversed(header):
        assert run_chunk(signature) == "written"
    assert run_chunk(header[1]) == "written", "delivered again after its worker died"
    run.refresh_from_db()
    assert run.progress_done == 8, "a chunk run twice counts once"
    stored = list(export_storage._walk(export_storage.run_parts_folder(run.pk)))
    assert len(stored) == 3, "the first run's part was removed once the second one was recorded"

    joined = assemble(body)
    assert (joined.status, joined.scores) == ("running", None), joined.error
    assert not joined.predictions, "the predictions are published with the scores"
    ((_, _), (score_header, score_body)) = split_over_workers
    assert [s.args[2:5] for s in score_header] == [(3, 0, 3), (4, 3, 6), (5, 6, 8)]
    for signature in reversed(score_header):
        assert run_score_chunk(signature) == "written"
    assert run_score_chunk(score_header[0]) == "written", "delivered again"
    joined.refresh_from_db()
    assert (joined.progress_done, joined.progress_total) == (16, 16), "run twice counts once"
    split = score_assemble(score_body)

    assert split.status == "succeeded", split.error
    assert score_assemble(score_body).status == "succeeded", "delivered again, changes nothing"
    assert not list(export_storage._walk(export_storage.run_parts_folder(run.pk)))
    monkeypatch.setattr(runs, "chunks_go_to_workers", lambda chunks, **_: False)
    one_process = start(study_export, django_capture_on_commit_callbacks)
    assert predictions_of(one_process) == predictions_of(split)
    assert scores_json(one_process) == scores_json(split)


def test_a_failed_chunk_fails_the_run_and_scores_nothing(
    study_export, settings, split_over_workers, django_capture_on_commit_callbacks, monkeypatch
):
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3
    run = start(study_export, django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    explain = runs.explain_lines

    def breaks_on_the_second_chunk(*args, start, **kwargs):
        if start == 3:
            raise ValueError("the model cannot read this instance")
        return explain(*args, start=start, **kwargs)

    monkeypatch.setattr(runs, "explain_lines", breaks_on_the_second_chunk)

    results = [run_chunk(s) for s in header]
    done = assemble(body)

    assert results == ["written", "failed", "stopped"]
    assert done.status == "failed" and done.scores is None and not done.predictions
    assert "the model cannot read this instance (chunk 1, instances 3-5)" in done.error
    assert "nothing was scored" in done.error
    assert not ExplainerRunPart.objects.filter(run=run).exists()
    assert not list(export_storage._walk(export_storage.run_parts_folder(run.pk)))


def test_a_run_started_again_supersedes_its_earlier_chunks(
    study_export, settings, split_over_workers, django_capture_on_commit_callbacks
):
    """The run's task delivered again (its worker died after sending the chunks)."""
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3
    run = start(study_export, django_capture_on_commit_callbacks)
    runs.explainer_run_execute(run_id=run.pk)
    (first_header, first_body), (second_header, second_body) = split_over_workers

    assert run_chunk(first_header[0]) == "stopped"
    for signature in second_header:
        assert run_chunk(signature) == "written"
    assert assemble(first_body).status == "running"
    assert assemble(second_body).status == "running"
    (score_header, score_body) = split_over_workers[-1]
    assert [run_score_chunk(s) for s in score_header] == ["written"] * 3
    assert score_assemble(score_body).status == "succeeded"


def test_a_silent_run_fails_and_the_sweep_removes_its_chunks(
    study_export, settings, split_over_workers, django_capture_on_commit_callbacks
):
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3
    run = start(study_export, django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    run_chunk(header[0])
    ExplainerRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS + 1)
    )

    swept = export_work_sweep()

    run.refresh_from_db()
    assert swept["lost_runs"] == 1
    assert run.status == "failed" and "worker running this run stopped" in run.error
    assert not list(export_storage._walk(export_storage.run_parts_folder(run.pk)))
    assert run_chunk(header[1]) == "stopped"
    assert assemble(body).status == "failed" and run.scores is None
