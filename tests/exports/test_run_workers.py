"""Explainer runs split over real Celery workers (PostgreSQL, Redis): chunks of instances
on two workers give the predictions and scores of one worker; a worker killed in the middle
of a chunk leaves the run failed with nothing scored."""

import json
import os
import signal

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from annotate.models import Item
from annotate.services import dataset_import
from config.storage import stored_names
from exports import runs
from exports import storage as export_storage
from exports.models import ExplainerRun, ExplainerRunPart
from tests.annotate.test_worker_killed import big_jsonl, wait_until
from tests.exports.test_export_workers import export_and_wait, researcher, workers  # noqa: F401
from tests.exports.test_run_chunks import labelled_study
from tests.factories import ProjectFactory

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def finished(pk):
    return ExplainerRun.objects.exclude(status__in=["pending", "running"]).filter(pk=pk).first()


def run_and_wait(client, project, export, **body) -> ExplainerRun:
    created = client.post(
        reverse("exports:run-list", args=[project.id, export.pk]), body, format="json"
    )
    assert created.status_code == 202, created.content
    return wait_until(lambda: finished(created.data["id"]))


def stored_bytes(name: str) -> bytes:
    with default_storage.open(name, "rb") as handle:
        return handle.read()


def test_run_chunks_on_two_workers_give_the_scores_of_one(workers):  # noqa: F811
    project = labelled_study()
    client = researcher(project)
    first, first_log = workers("run-a", EXPLAINER_RUN_CHUNK_INSTANCES="3")
    second, second_log = workers("run-b", EXPLAINER_RUN_CHUNK_INSTANCES="3")
    export = export_and_wait(client, project)

    split = run_and_wait(client, project, export, name="lime", split="train", explainer="lime")

    assert split.status == "succeeded", split.error
    chunk_lines = sum(
        log.read_text().count("exports.tasks.explainer_run_chunk[")
        for log in (first_log, second_log)
    )
    assert chunk_lines >= 2 * 3, "3 chunks, each received and finished"
    score_lines = sum(
        log.read_text().count("exports.tasks.explainer_run_score_chunk[")
        for log in (first_log, second_log)
    )
    assert score_lines >= 2 * 3, "then 3 scoring chunks"
    # 8 instances explained, then their 8 lines scored.
    assert (split.progress_done, split.progress_total) == (16, 16)
    # Removed right after the scores are published, the commit point.
    folder = export_storage.run_parts_folder(split.pk)
    assert wait_until(lambda: not list(stored_names(folder)), timeout=30)
    for worker in (first, second):
        worker.terminate()
        worker.wait(timeout=30)

    _, single_log = workers("run-single", EXPLAINER_RUN_CHUNKED="false")
    whole = run_and_wait(client, project, export, name="lime", split="train", explainer="lime")

    assert whole.status == "succeeded", whole.error
    assert "exports.tasks.explainer_run_chunk[" not in single_log.read_text()
    assert "exports.tasks.explainer_run_score_chunk[" not in single_log.read_text()
    assert stored_bytes(whole.predictions.name) == stored_bytes(split.predictions.name)
    assert json.dumps([whole.scores, whole.plausibility_by_variant], sort_keys=True) == json.dumps(
        [split.scores, split.plausibility_by_variant], sort_keys=True
    )


def test_a_worker_killed_in_the_middle_of_a_run_chunk_scores_nothing(
    workers,  # noqa: F811
    worker_silence_outlasts_timeout,
    tmp_path,
):
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(
        b"".join(
            line.replace(b'"label": "pos"}', b'"label": "%s", "split": "test"}' % label)
            for line, label in zip(
                big_jsonl(1000).splitlines(keepends=True), [b"pos", b"neg"] * 500, strict=True
            )
        )
    )
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=rows)
    Item.objects.filter(project=project, annotation_id__in=["r0", "r1", "r2", "r3"]).update(
        split="train"
    )
    client = researcher(project)
    # Thirty chunks: the kill lands after the first and before the last.
    worker, _ = workers("run-doomed", EXPLAINER_RUN_CHUNK_INSTANCES="34")
    export = export_and_wait(client, project, selection="reference", aggregation="reference")
    created = client.post(
        reverse("exports:run-list", args=[project.id, export.pk]),
        {"name": "lime", "split": "test", "explainer": "lime"},
        format="json",
    ).data

    wait_until(lambda: 0 < ExplainerRun.objects.get(pk=created["id"]).progress_done < 996)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)

    run = ExplainerRun.objects.get(pk=created["id"])
    assert run.status == "running" and run.scores is None and not run.predictions
    worker_silence_outlasts_timeout()
    listed = client.get(reverse("exports:run-list", args=[project.id, export.pk])).data
    (shown,) = [r for r in listed["results"] if r["id"] == run.pk]
    assert shown["status"] == "failed" and shown["scores"] is None
    assert "worker running this run stopped" in shown["error"]

    _, log = workers("run-after", EXPLAINER_RUN_CHUNK_INSTANCES="34")
    wait_until(lambda: "exports.tasks.explainer_run_chunk[" in log.read_text(), timeout=60)
    runs.explainer_run_sweep()
    run.refresh_from_db()
    assert run.status == "failed" and run.scores is None and not run.predictions
    assert not ExplainerRunPart.objects.filter(run=run).exists()
    assert not list(stored_names(export_storage.run_parts_folder(run.pk)))
