"""Chunked imports (docs/design/architecture.md#background-jobs) of ERASER and benchmark
uploads: checked whole, prepared in chunks of documents and instances, written in one
transaction. The rows equal those of the one-step import whatever the chunk size or order;
nothing is in the project until the last step; a failed chunk fails the job with nothing
written."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from celery import states
from django.db import OperationalError

from annotate import tasks as annotate_tasks
from annotate.models import (
    Document,
    ImportJob,
    ImportPart,
    Item,
    ItemDocument,
    Project,
    RationaleSpan,
)
from annotate.services import dataset_import, imports
from annotate.services.imports import benchmark as benchmark_import
from annotate.services.imports import import_job_progress
from annotate.services.imports import prepare as import_prepare
from config.storage import stored_names
from tests.annotate.test_import_chunks import admin_of, split_over_workers  # noqa: F401
from tests.annotate.test_import_hostile_input import upload_job
from tests.factories import ProjectFactory

CHARACTERS = "地瓜不是红薯一般生吃或者凉拌外形纺锤型的有明显瓣状结构内里肉白色清淡药香味"


def zipped(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, f"data/{path.relative_to(directory)}")
    return buffer.getvalue()


def benchmark_lines(task: str, pairs: int) -> bytes:
    """Originals and their perturbed copies; every third pair has its copy first, so links
    cross chunks both ways."""
    lines = []
    for n in range(pairs):
        original, perturbed = f"o{n}", 1000 + n  # ids of both JSON types
        pair = []
        for sent_id, kind in ((original, "ori"), (perturbed, "disturb")):
            words = [
                ("the", "film", "was", "not", "good", "at", "all")[(n + k) % 7] for k in range(6)
            ]
            line = {"sent_id": sent_id, "sample_type": kind}
            if task == "sentiment":
                line |= {"sent_token": words, "sent_label": n % 2, "rationales": [[1, 2], [3]]}
            elif task == "similarity":
                line |= {
                    "text_q_seg": words,
                    "text_t_seg": words[::-1],
                    "sent_label": 1,
                    "rationale_q_idx": [0, 1],
                    "rationale_t_idx": [2],
                }
            else:
                chars = [CHARACTERS[(n + k) % len(CHARACTERS)] for k in range(20)]
                line |= {
                    "title": "",
                    "context": "".join(chars),
                    "question": "".join(chars[:6]) + "吗",
                    "sent_token": chars,
                    "sent_label": "".join(chars[3:6]),
                    "rationales": [3, 4, 5],
                }
            if kind == "ori":
                line["rel_ids"] = [perturbed]
            else:
                line["perturbation_types"] = ["dispensable_words"]
            pair.append(line)
        lines += pair[::-1] if n % 3 == 0 else pair
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()


BENCHMARK_TASKS = {
    "sentiment": ("classification", "en"),
    "similarity": ("sentence_pair", "en"),
    "reading_comprehension": ("reading_comprehension", "zh"),
}


def project_dump(project: Project) -> list:
    """Everything an import writes, without ids, in the order written."""
    documents = [
        (
            d.docid,
            d.text,
            d.token_count,
            d.text_sha256,
            d.tokenizer,
            d.tokens.astype("<i4").tobytes(),
            d.sentences.astype("<i4").tobytes(),
        )
        for d in Document.objects.filter(project=project).order_by("pk")
    ]
    items = list(
        Item.objects.filter(project=project)
        .order_by("pk")
        .values_list(
            "annotation_id",
            "annotation_id_is_int",
            "label",
            "split",
            "query",
            "query_type",
            "declared_docids",
            "source_keys",
            "source_extra",
            "source_sha256",
            "answer",
            "options",
            "perturbation_of__annotation_id",
            "perturbation_types",
        )
    )
    links = list(
        ItemDocument.objects.filter(item__project=project)
        .order_by("item_id", "position")
        .values_list("item__annotation_id", "document__docid", "position", "role")
    )
    spans = list(
        RationaleSpan.objects.filter(rationale_set__reference_item__project=project)
        .order_by("rationale_set__reference_item_id", "rationale_set__position", "position")
        .values_list(
            "rationale_set__reference_item__annotation_id",
            "rationale_set__position",
            "document__docid",
            "start_token",
            "end_token",
            "position",
            "source_fields",
        )
    )
    project.refresh_from_db()
    return [documents, items, links, spans, project.labels]


def one_step(content: bytes, name: str, tmp_path, **project_fields) -> tuple[list, dict]:
    project = ProjectFactory(labels=[], **project_fields)
    path = tmp_path / name
    path.write_bytes(content)
    summary = dataset_import(project=project, path=path)
    return project_dump(project), summary.as_dict()


def chunked(content: bytes, name: str, capture, **project_fields) -> ImportJob:
    project = ProjectFactory(labels=[], **project_fields)
    return upload_job(project, admin_of(project), name, content, capture)


@pytest.mark.parametrize("slice_dir", ["movies/data", "multirc/data", "movies_docsjsonl"])
def test_eraser_chunks_of_any_size_write_the_rows_of_the_one_step_import(
    db, settings, eraser_reference, slice_dir, tmp_path, django_capture_on_commit_callbacks
):
    content = zipped(eraser_reference / slice_dir)
    expected, expected_summary = one_step(content, "ds.zip", tmp_path)

    # A chunk re-reads its share of the upload: one-unit chunks on the small slice only.
    sizes = (100_000, 7, 1) if slice_dir.startswith("multirc") else (100_000, 37)
    for size in sizes:
        settings.IMPORT_CHUNK_ROWS = size
        job = chunked(content, "ds.zip", django_capture_on_commit_callbacks)

        assert job.status == "succeeded", (job.error, job.problems[:3])
        assert project_dump(Project.objects.get(pk=job.project_id)) == expected
        assert job.summary == expected_summary
    assert len(expected[0]) > 1 and len(expected[3]) > 0
    assert not ImportPart.objects.exists()
    assert not list(stored_names(imports.PARTS_ROOT))


def test_an_eraser_dataset_with_a_missing_split_keeps_its_warning(
    db, settings, eraser_reference, tmp_path, django_capture_on_commit_callbacks
):
    data = tmp_path / "data"
    data.mkdir()
    source = eraser_reference / "movies_docsjsonl"
    for name in ("docs.jsonl", "train.jsonl", "test.jsonl"):
        (data / name).write_bytes((source / name).read_bytes())
    settings.IMPORT_CHUNK_ROWS = 3

    job = chunked(zipped(data), "ds.zip", django_capture_on_commit_callbacks)

    assert job.status == "succeeded", job.error
    assert job.summary["warnings"] == ["val.jsonl is absent: imported as an empty split"]


@pytest.mark.parametrize("task", BENCHMARK_TASKS)
def test_benchmark_chunks_of_any_size_write_the_rows_of_the_one_step_import(
    db, settings, task, tmp_path, django_capture_on_commit_callbacks
):
    task_type, language = BENCHMARK_TASKS[task]
    content = benchmark_lines(task, 9)
    fields = {"task_type": task_type, "language": language}
    expected, expected_summary = one_step(content, "gold.jsonl", tmp_path, **fields)

    for size in (100_000, 4, 1):
        settings.IMPORT_CHUNK_ROWS = size
        job = chunked(content, "gold.jsonl", django_capture_on_commit_callbacks, **fields)

        assert job.status == "succeeded", (job.error, job.problems[:3])
        assert project_dump(Project.objects.get(pk=job.project_id)) == expected
        assert job.summary == expected_summary
    linked = [row for row in expected[1] if row[12] is not None]
    assert len(linked) == 9, "every perturbed copy points at its original"


def test_a_benchmark_file_imported_again_in_chunks_creates_nothing(
    db, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_CHUNK_ROWS = 5
    content = benchmark_lines("sentiment", 6)
    first = chunked(content, "gold.jsonl", django_capture_on_commit_callbacks)
    project = Project.objects.get(pk=first.project_id)
    before = project_dump(project)

    again = upload_job(
        project, admin_of(project), "gold.jsonl", content, django_capture_on_commit_callbacks
    )

    assert again.status == "succeeded", again.error
    assert again.summary["items_unchanged"] == 12 and again.summary["items_created"] == 0
    assert again.summary["documents_unchanged"] == 12
    assert project_dump(project) == before


def run_chunk(signature) -> str:
    job_id, attempt, index, start, stop = signature.args
    return imports.import_chunk_run(
        job_id=job_id, attempt=attempt, index=index, start=start, stop=stop, **signature.kwargs
    )


def publish(body) -> ImportJob:
    job_id, attempt, chunks, labels = body.args
    return imports.import_publish_run(
        job_id=job_id, attempt=attempt, chunks=chunks, labels=labels, **body.kwargs
    )


def test_eraser_chunks_in_any_order_and_run_twice_write_nothing_until_the_last_step(
    db,
    settings,
    eraser_reference,
    tmp_path,
    split_over_workers,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    content = zipped(eraser_reference / "multirc" / "data")
    expected, _ = one_step(content, "ds.zip", tmp_path)
    settings.IMPORT_CHUNK_ROWS = 4
    job = chunked(content, "ds.zip", django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    units = len(expected[0]) + len(expected[1])
    assert (job.status, job.phase, job.progress_total) == ("running", "preparing", units)
    assert {s.kwargs["plan"]["documents"] for s in header} == {len(expected[0])}

    for signature in reversed(header):
        assert run_chunk(signature) == "written"
    assert run_chunk(header[1]) == "written", "delivered again after its worker died"
    job.refresh_from_db()
    assert job.progress_done == units, "a chunk run twice counts once"
    assert import_job_progress(job) == {"phase": "preparing", "done": units, "total": units}
    assert len(list(stored_names(imports.parts_folder(job.pk)))) == len(header)
    assert not Item.objects.filter(project_id=job.project_id).exists()
    assert not Document.objects.filter(project_id=job.project_id).exists()

    done = publish(body)

    assert done.status == "succeeded", (done.error, done.problems[:3])
    assert publish(body).status == "succeeded", "a last step delivered again changes nothing"
    assert project_dump(Project.objects.get(pk=job.project_id)) == expected
    assert not list(stored_names(imports.parts_folder(job.pk)))


def test_a_benchmark_chunk_that_fails_in_preparing_fails_the_job_and_writes_nothing(
    db,
    settings,
    monkeypatch,
    split_over_workers,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    settings.IMPORT_CHUNK_ROWS = 4
    content = benchmark_lines("reading_comprehension", 6)
    job = chunked(
        content,
        "gold.jsonl",
        django_capture_on_commit_callbacks,
        task_type="reading_comprehension",
        language="zh",
    )
    ((header, body),) = split_over_workers
    tokenize = benchmark_import.tokenize_texts
    doomed = json.loads(content.splitlines()[5])["question"]

    def breaks_on_one_question(texts, **kwargs):
        texts = list(texts)
        if doomed in texts:
            raise RuntimeError("the tokenizer ran out of memory")
        return tokenize(texts, **kwargs)

    monkeypatch.setattr(benchmark_import, "tokenize_texts", breaks_on_one_question)

    results = [run_chunk(s) for s in header]
    done = publish(body)

    assert results == ["written", "failed", "stopped"]
    assert done.status == "failed" and "nothing was imported" in done.error
    assert "chunk 1, instances 5-8" in done.error
    assert "the tokenizer ran out of memory" in done.error
    assert not Item.objects.filter(project_id=job.project_id).exists()
    assert not Document.objects.filter(project_id=job.project_id).exists()
    assert not ImportPart.objects.filter(job=job).exists()
    assert not list(stored_names(imports.parts_folder(job.pk)))


@pytest.fixture
def errors_kept_in_results():
    """Retries applied in-process re-raise unless the app keeps errors in results."""
    from config.celery import app

    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = previous


def test_an_eraser_chunk_whose_database_fails_four_times_fails_the_job_with_nothing_written(
    db,
    settings,
    eraser_reference,
    monkeypatch,
    errors_kept_in_results,
    split_over_workers,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    settings.IMPORT_CHUNK_ROWS = 10
    job = chunked(
        zipped(eraser_reference / "movies" / "data"), "ds.zip", django_capture_on_commit_callbacks
    )
    ((header, body),) = split_over_workers
    assert run_chunk(header[0]) == "written"
    record_part = import_prepare._record_part
    calls = []

    def database_down(*args):
        calls.append(args)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(import_prepare, "_record_part", database_down)
    result = annotate_tasks.import_chunk.apply(args=header[1].args, kwargs=header[1].kwargs)
    monkeypatch.setattr(import_prepare, "_record_part", record_part)

    assert result.state == states.SUCCESS and result.get() == "failed"
    assert len(calls) == 4, "tried, then retried three times"
    done = publish(body)
    assert done.status == "failed"
    assert done.error.startswith("chunk 1: the database failed 4 times")
    assert done.error.endswith("nothing was imported; start the import again")
    assert not Item.objects.filter(project_id=job.project_id).exists()
    assert not Document.objects.filter(project_id=job.project_id).exists()
    assert not ImportPart.objects.filter(job=job).exists()
    assert not list(stored_names(imports.parts_folder(job.pk)))


def test_a_conflict_found_before_the_chunks_fails_the_job_with_the_same_words(
    db, settings, eraser_reference, tmp_path, django_capture_on_commit_callbacks
):
    """A dataset whose document the project holds with another text is refused as the
    one-step import refuses it, before any chunk runs."""
    settings.IMPORT_CHUNK_ROWS = 5
    data = tmp_path / "data"
    (data / "docs").mkdir(parents=True)
    source = eraser_reference / "movies" / "data"
    for path in (source / "docs").iterdir():
        (data / "docs" / path.name).write_bytes(path.read_bytes())
    for split in ("train", "val", "test"):
        (data / f"{split}.jsonl").write_bytes((source / f"{split}.jsonl").read_bytes())
    first = chunked(zipped(data), "ds.zip", django_capture_on_commit_callbacks)
    assert first.status == "succeeded", first.error
    changed = sorted((data / "docs").iterdir())[2]
    changed.write_text(changed.read_text() + "\nOne more sentence .")
    project = Project.objects.get(pk=first.project_id)
    with pytest.raises(Exception) as one_step_refusal:
        dataset_import(project=project, path=data)

    again = upload_job(
        project, admin_of(project), "ds.zip", zipped(data), django_capture_on_commit_callbacks
    )

    assert again.status == "failed"
    assert [(p["field"], p["message"]) for p in again.problems] == [
        (p.field, p.message) for p in one_step_refusal.value.problems
    ]
    assert f"document {changed.name!r} already exists" in again.problems[0]["message"]
    assert not ImportPart.objects.filter(job=again).exists()
