"""Imports on the real services: a Celery worker on Redis, and concurrent clients on PostgreSQL."""

import threading
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse

from annotate.models import Document, ImportJob, Item, RationaleSet
from annotate.services import dataset_import
from rationale_metrics.problems import DataValidationError
from tests.annotate.test_apis import zipped_dataset
from tests.conftest import client_for
from tests.factories import MembershipFactory, ProjectFactory, UserFactory


def wait_for_job(job_id: int, timeout: float = 90) -> ImportJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_id)
        if job.status in ("succeeded", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"import job {job_id} did not finish within {timeout} s")


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_import_runs_on_the_real_worker(live_celery, eraser_reference, tmp_path):
    project = ProjectFactory(labels=[])
    admin = UserFactory(username="worker-admin")
    MembershipFactory(project=project, user=admin, role="admin")
    archive = tmp_path / "multirc.zip"
    import zipfile

    with zipfile.ZipFile(archive, "w") as zf:
        for path in (eraser_reference / "multirc" / "data").rglob("*"):
            if path.is_file():
                zf.write(path, f"multirc/{path.relative_to(eraser_reference / 'multirc' / 'data')}")

    response = client_for(admin).post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile("multirc.zip", archive.read_bytes())},
        format="multipart",
    )

    assert response.status_code == 202
    job = wait_for_job(response.data["id"])
    assert job.status == "succeeded", (
        job.error,
        job.problems,
        live_celery["log"].read_text()[-3000:],
    )
    assert job.summary["items_created"] == 200
    assert Item.objects.filter(project=project).count() == 200
    assert "import_job_execute" in live_celery["log"].read_text()


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_failing_import_on_the_worker_writes_nothing(live_celery):
    project = ProjectFactory(labels=["POS"])
    admin = UserFactory(username="worker-admin2")
    MembershipFactory(project=project, user=admin, role="admin")
    bad = zipped_dataset(label="NEG")

    response = client_for(admin).post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile("ds.zip", bad)},
        format="multipart",
    )

    job = wait_for_job(response.data["id"])
    assert job.status == "failed"
    assert job.problems[0]["field"] == "classification"
    assert Document.objects.filter(project=project).count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_imports_of_the_same_data_never_duplicate(postgres_only, eraser_reference):
    project = ProjectFactory(labels=[])
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def run():
        try:
            barrier.wait()
            summary = dataset_import(project=project, path=eraser_reference / "multirc" / "data")
            outcomes.append(f"created {summary.items_created}")
        except DataValidationError as exc:
            outcomes.append(f"refused: {exc.problems[0].message}")
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["created 0"] * 5 + ["created 200"]
    assert Item.objects.filter(project=project).count() == 200
    assert Document.objects.filter(project=project).count() == 5
    assert RationaleSet.objects.filter(reference_item__project=project).count() == 200


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_export_runs_on_the_real_worker(live_celery, eraser_reference):
    from pathlib import Path

    from exports.models import Export

    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=eraser_reference / "multirc" / "data")
    researcher = UserFactory(username="worker-researcher")
    MembershipFactory(project=project, user=researcher, role="researcher")

    response = client_for(researcher).post(
        reverse("exports:export-list", args=[project.id]),
        {"selection": "reference", "aggregation": "reference"},
        format="json",
    )

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        export = Export.objects.get(pk=response.data["id"])
        if export.status in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.2)
    assert export.status == "succeeded", (export.error, live_celery["log"].read_text()[-3000:])
    assert (Path(live_celery["media_root"]) / export.file_path).is_file()
    assert "export_execute" in live_celery["log"].read_text()


@pytest.mark.postgres
def test_an_import_leaves_planner_statistics_on_the_tables_it_filled(
    postgres_only, eraser_reference
):
    """Without them PostgreSQL takes a freshly filled table for nearly empty, and plans
    the "next" and "submit" statements as scans of every item."""
    project = ProjectFactory(labels=[])

    dataset_import(project=project, path=eraser_reference / "multirc" / "data")

    with connection.cursor() as cursor:
        for model in (Item, Document, RationaleSet):
            table = model._meta.db_table
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
            (estimated,) = cursor.fetchone()
            assert estimated == model.objects.count(), table
