"""A run's predictions (docs/design/architecture.md#background-jobs) are scored in chunks of
lines (each chunk's part holds its keys' soft figures, overall and per variant), and the last
step publishes the scores of one process, byte for byte, however the lines were cut, in any
order or twice; a failed scoring chunk fails the run and publishes nothing."""

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from exports import runs
from exports import storage as export_storage
from exports.models import ExplainerRun, ExplainerRunPart
from exports.runs import _dataset_of, explainer_run_start
from exports.services import export_work_sweep
from rationale_metrics.predictions import read_predictions
from rationale_metrics.scoring import score_predictions
from tests.exports.test_export_chunks import FakeChord
from tests.exports.test_run_chunks import (
    run_score_chunk,
    score_assemble,
    scores_json,
    start,
    study_export,  # noqa: F401 - fixture
)
from tests.exports.test_runs import (  # noqa: F401 - fixtures
    movies_export,
    movies_export_of_module,
)


def upload_run(export, capture, predictions: bytes, split="val") -> ExplainerRun:
    with capture(execute=True):
        created = explainer_run_start(
            export=export,
            acting_user=None,
            name="uploaded",
            split=split,
            upload=SimpleUploadedFile("p.jsonl", predictions),
        )
    return ExplainerRun.objects.get(pk=created.pk)


@pytest.fixture
def random_predictions(eraser_reference) -> bytes:
    """Hard and soft rationales, token and sentence scores and classification scores."""
    return (eraser_reference / "movies" / "preds" / "random.jsonl").read_bytes()


@pytest.fixture
def split_over_workers(monkeypatch):
    FakeChord.sent = []
    monkeypatch.setattr(runs, "chunks_go_to_workers", lambda chunks, **_: chunks > 1)
    monkeypatch.setattr("celery.chord", FakeChord)
    return FakeChord.sent


def test_uploaded_predictions_in_chunks_of_any_size_score_as_one_process(
    movies_export,  # noqa: F811
    random_predictions,
    settings,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    lines = random_predictions.count(b"\n")
    done = []
    for size in (100_000, 37, 1):
        settings.EXPLAINER_RUN_CHUNK_INSTANCES = size
        done.append(
            upload_run(movies_export, django_capture_on_commit_callbacks, random_predictions)
        )

    assert [r.status for r in done] == ["succeeded"] * 3, [r.error for r in done]
    assert len({scores_json(r) for r in done}) == 1
    assert {(r.progress_done, r.progress_total) for r in done} == {(lines, lines)}
    # The library's scorer, in one call over the whole file, gives the same bytes.
    dataset = _dataset_of(movies_export)
    path = tmp_path / "p.jsonl"
    path.write_bytes(random_predictions)
    whole = score_predictions(dataset, "val", read_predictions(path, dataset=dataset, split="val"))
    assert json.dumps(done[0].scores, sort_keys=True) == json.dumps(whole, sort_keys=True)
    assert done[0].scores["token_soft_metrics"]["auprc"] is not None


def test_scoring_chunks_in_any_order_and_run_twice_count_once(
    movies_export,  # noqa: F811
    random_predictions,
    settings,
    split_over_workers,
    django_capture_on_commit_callbacks,
    monkeypatch,
):
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 80
    lines = random_predictions.count(b"\n")
    run = upload_run(movies_export, django_capture_on_commit_callbacks, random_predictions)
    ((header, body),) = split_over_workers
    assert [s.args[2:5] for s in header] == [(0, 0, 80), (1, 80, 160), (2, 160, lines)]
    assert (run.status, run.progress_done, run.progress_total) == ("running", 0, lines)

    for signature in reversed(header):
        assert run_score_chunk(signature) == "written"
    assert run_score_chunk(header[1]) == "written", "delivered again after its worker died"
    run.refresh_from_db()
    assert (run.status, run.scores, run.progress_done) == ("running", None, lines)
    split = score_assemble(body)

    assert split.status == "succeeded", split.error
    assert score_assemble(body).status == "succeeded", "delivered again, changes nothing"
    assert not ExplainerRunPart.objects.filter(run=run).exists()
    assert not list(export_storage._walk(export_storage.run_parts_folder(run.pk)))
    monkeypatch.setattr(runs, "chunks_go_to_workers", lambda chunks, **_: False)
    one_process = upload_run(movies_export, django_capture_on_commit_callbacks, random_predictions)
    assert scores_json(one_process) == scores_json(split)


def test_a_failed_scoring_chunk_fails_the_run_and_publishes_nothing(
    study_export,  # noqa: F811
    settings,
    split_over_workers,
    django_capture_on_commit_callbacks,
    monkeypatch,
):
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3
    run = start(study_export, django_capture_on_commit_callbacks, "random")
    ((header, _),) = split_over_workers
    assert [
        runs.explainer_run_chunk_run(
            **dict(zip(("run_id", "attempt", "index", "start", "stop", "k"), s.args, strict=True))
        )
        for s in header
    ] == ["written"] * 3
    runs.explainer_run_assemble_run(run_id=run.pk, attempt=run.attempt, chunks=3)
    (score_header, score_body) = split_over_workers[-1]
    predictions_name = score_body.args[-1]
    scored = runs.soft_per_key_of_lines
    fourth = _dataset_of(study_export).splits["train"][3].key

    def breaks_on_the_second_chunk(dataset, split, predictions, start, stop):
        if fourth in predictions.keys:
            raise ValueError("these scores cannot be sorted")
        return scored(dataset, split, predictions, start, stop)

    monkeypatch.setattr(runs, "soft_per_key_of_lines", breaks_on_the_second_chunk)

    results = [run_score_chunk(s) for s in score_header]
    done = score_assemble(score_body)

    assert results == ["written", "failed", "stopped"]
    assert done.status == "failed" and done.scores is None and not done.predictions
    assert "these scores cannot be sorted (scoring chunk 4, lines 4-6)" in done.error
    assert "nothing was scored" in done.error
    assert not ExplainerRunPart.objects.filter(run=run).exists()
    assert not list(export_storage._walk(export_storage.run_parts_folder(run.pk)))
    assert not run.predictions.storage.exists(predictions_name), "the joined file is removed"


def test_blank_lines_do_not_shift_the_chunks(
    movies_export,  # noqa: F811
    random_predictions,
    settings,
    django_capture_on_commit_callbacks,
):
    """Chunks are cut by predictions and read by file lines: blank lines between them."""
    lines = random_predictions.splitlines(keepends=True)
    spaced = b"\n" + b"".join(
        line + (b"\n" if n % 10 == 0 else b"") for n, line in enumerate(lines)
    )
    done = []
    for size in (100_000, 7):
        settings.EXPLAINER_RUN_CHUNK_INSTANCES = size
        done.append(upload_run(movies_export, django_capture_on_commit_callbacks, spaced))

    assert [r.status for r in done] == ["succeeded"] * 2, [r.error for r in done]
    assert scores_json(done[0]) == scores_json(done[1])
    assert {(r.progress_done, r.progress_total) for r in done} == {(len(lines), len(lines))}


def test_a_run_lost_while_scoring_leaves_neither_parts_nor_its_joined_predictions(
    study_export,  # noqa: F811
    settings,
    split_over_workers,
    django_capture_on_commit_callbacks,
):
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3
    run = start(study_export, django_capture_on_commit_callbacks, "random")
    ((header, _),) = split_over_workers
    for s in header:
        names = ("run_id", "attempt", "index", "start", "stop", "k")
        runs.explainer_run_chunk_run(**dict(zip(names, s.args, strict=True)))
    runs.explainer_run_assemble_run(run_id=run.pk, attempt=run.attempt, chunks=3)
    (score_header, score_body) = split_over_workers[-1]
    joined = score_body.args[-1]
    assert run_score_chunk(score_header[0]) == "written"
    ExplainerRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS + 1)
    )

    assert export_work_sweep()["lost_runs"] == 1

    run.refresh_from_db()
    assert run.status == "failed" and run.scores is None and not run.predictions
    assert not run.predictions.storage.exists(joined)
    assert not list(export_storage._walk(export_storage.run_parts_folder(run.pk)))
    assert run_score_chunk(score_header[1]) == "stopped"
    assert score_assemble(score_body).status == "failed"
