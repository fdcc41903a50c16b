"""Uploaded predictions scored in chunks of lines on real Celery workers (PostgreSQL,
Redis): two workers publish the scores of one worker, byte for byte; a worker killed in the
middle of the scoring leaves the run failed with nothing published."""

import json
import os
import signal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.services import dataset_import
from config.storage import stored_names
from exports import runs
from exports import storage as export_storage
from exports.models import ExplainerRun, ExplainerRunPart
from exports.runs import _dataset_of
from tests.annotate.test_worker_killed import big_jsonl, wait_until
from tests.exports.test_export_workers import export_and_wait, researcher, workers  # noqa: F401
from tests.exports.test_run_workers import finished
from tests.factories import ProjectFactory

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def upload_and_wait(client, project, export, predictions: bytes):
    created = client.post(
        reverse("exports:run-list", args=[project.id, export.pk]),
        {"name": "random", "split": "val", "file": SimpleUploadedFile("random.jsonl", predictions)},
        format="multipart",
    )
    assert created.status_code == 202, created.content
    return wait_until(lambda: finished(created.data["id"]))


def test_uploaded_predictions_scored_on_two_workers_give_the_scores_of_one(
    workers,  # noqa: F811
    eraser_reference,
):
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=eraser_reference / "movies" / "data")
    client = researcher(project)
    predictions = (eraser_reference / "movies" / "preds" / "random.jsonl").read_bytes()
    lines = predictions.count(b"\n")
    first, first_log = workers("score-a", EXPLAINER_RUN_CHUNK_INSTANCES="30")
    second, second_log = workers("score-b", EXPLAINER_RUN_CHUNK_INSTANCES="30")
    export = export_and_wait(client, project, selection="reference", aggregation="reference")

    split = upload_and_wait(client, project, export, predictions)

    assert split.status == "succeeded", split.error
    chunks = -(-lines // 30)
    logged = sum(
        log.read_text().count("exports.tasks.explainer_run_score_chunk[")
        for log in (first_log, second_log)
    )
    assert logged >= 2 * chunks, f"{chunks} scoring chunks, each received and finished"
    assert (split.progress_done, split.progress_total) == (lines, lines)
    # Removed right after the scores are published, the commit point.
    folder = export_storage.run_parts_folder(split.pk)
    assert wait_until(lambda: not list(stored_names(folder)), timeout=30)
    for worker in (first, second):
        worker.terminate()
        worker.wait(timeout=30)

    _, single_log = workers("score-single", EXPLAINER_RUN_CHUNKED="false")
    whole = upload_and_wait(client, project, export, predictions)

    assert whole.status == "succeeded", whole.error
    assert "exports.tasks.explainer_run_score_chunk[" not in single_log.read_text()
    assert json.dumps([whole.scores, whole.plausibility_by_variant], sort_keys=True) == json.dumps(
        [split.scores, split.plausibility_by_variant], sort_keys=True
    )
    assert split.scores["token_soft_metrics"]["auprc"] is not None


def soft_predictions(dataset, split: str) -> bytes:
    """A soft score for every token of every instance of the split."""
    lines = []
    for n, instance in enumerate(dataset.splits[split]):
        rationales = [
            {
                "docid": docid,
                "soft_rationale_predictions": [
                    ((n + t) % 7) / 7 for t in range(dataset.documents[docid].n_tokens)
                ],
            }
            for docid in instance.resolved_docids()
        ]
        lines.append(json.dumps({"annotation_id": instance.key, "rationales": rationales}))
    return ("\n".join(lines) + "\n").encode()


def test_a_worker_killed_in_the_middle_of_scoring_publishes_nothing(
    workers,  # noqa: F811
    worker_silence_outlasts_timeout,
    tmp_path,
):
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(
        big_jsonl(1000).replace(b'"label": "pos"}', b'"label": "pos", "split": "test"}')
    )
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=rows)
    client = researcher(project)
    # Sixty chunks: the kill lands after the first and before the last.
    worker, _ = workers("score-doomed", EXPLAINER_RUN_CHUNK_INSTANCES="17")
    export = export_and_wait(client, project, selection="reference", aggregation="reference")
    predictions = soft_predictions(_dataset_of(export), "test")
    lines = predictions.count(b"\n")
    created = client.post(
        reverse("exports:run-list", args=[project.id, export.pk]),
        {"name": "soft", "split": "test", "file": SimpleUploadedFile("soft.jsonl", predictions)},
        format="multipart",
    ).data

    wait_until(lambda: 0 < ExplainerRun.objects.get(pk=created["id"]).progress_done < lines - 17)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    run = ExplainerRun.objects.get(pk=created["id"])
    assert run.status == "running" and run.scores is None
    worker_silence_outlasts_timeout()
    listed = client.get(reverse("exports:run-list", args=[project.id, export.pk])).data
    (shown,) = [r for r in listed["results"] if r["id"] == run.pk]
    assert shown["status"] == "failed" and shown["scores"] is None
    assert "worker running this run stopped" in shown["error"]

    _, log = workers("score-after", EXPLAINER_RUN_CHUNK_INSTANCES="17")
    wait_until(lambda: "exports.tasks.explainer_run_score_chunk[" in log.read_text(), timeout=60)
    runs.explainer_run_sweep()
    run.refresh_from_db()
    assert run.status == "failed" and run.scores is None
    assert not ExplainerRunPart.objects.filter(run=run).exists()
    assert not list(stored_names(export_storage.run_parts_folder(run.pk)))
