"""Uploaded predictions scored in chunks of lines on real Celery workers (PostgreSQL,
Redis): two workers publish the scores of one worker, byte for byte."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.services import dataset_import
from config.storage import stored_names
from exports import storage as export_storage
from tests.annotate.test_worker_killed import wait_until
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
    assert not list(stored_names(export_storage.run_parts_folder(split.pk)))
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
