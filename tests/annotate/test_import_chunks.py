"""Imports of raw texts (docs/design/architecture.md#background-jobs) checked whole, tokenized
in chunks of rows and written in one transaction: the same rows however the chunks were cut, run
in any order or twice; nothing in the project until the last step; a failed chunk fails the
job."""

import json

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotate.models import Document, ImportJob, ImportPart, Item, ItemDocument, Project
from annotate.services import imports
from annotate.services.imports import import_job_progress
from annotate.services.imports import raw_text as raw_text_import
from annotate.services.imports import split as import_split
from config.storage import stored_names
from tests.annotate.test_import_hostile_input import upload_job
from tests.exports.test_export_chunks import FakeChord
from tests.factories import MembershipFactory, ProjectFactory, UserFactory


def rows_jsonl(count: int, start: int = 0) -> bytes:
    words = ["a", "quiet", "film", "about", "loss", ",", "with", "sharp", "dialogue", "."]
    return "".join(
        json.dumps(
            {
                "id": f"r{n}",
                "text": " ".join(words[(n + k) % len(words)] for k in range(5 + n % 7))
                + ". Then 北京 again!",
                "label": ("neg", "pos")[n % 2],
                "split": ("train", "val", "test")[n % 3],
            }
        )
        + "\n"
        for n in range(start, start + count)
    ).encode()


def project_rows(project: Project) -> list:
    """What an import wrote, without ids: documents, items and their links, in pk order."""
    documents = list(
        Document.objects.filter(project=project)
        .order_by("pk")
        .values_list("docid", "text", "token_count", "text_sha256", "tokenizer")
    )
    arrays = [
        (bytes(d.tokens.astype("<i4").tobytes()), bytes(d.sentences.astype("<i4").tobytes()))
        for d in Document.objects.filter(project=project).order_by("pk")
    ]
    items = list(
        Item.objects.filter(project=project)
        .order_by("pk")
        .values_list("annotation_id", "label", "split", "query", "source_sha256", "options")
    )
    links = list(
        ItemDocument.objects.filter(item__project=project)
        .order_by("pk")
        .values_list("item__annotation_id", "document__docid", "position", "role")
    )
    return [documents, arrays, items, links, project.labels]


def admin_of(project):
    user = UserFactory()
    MembershipFactory(project=project, user=user, role="admin")
    return user


def import_into_new_project(content: bytes, capture, name="rows.jsonl") -> ImportJob:
    project = ProjectFactory(labels=[])
    return upload_job(project, admin_of(project), name, content, capture)


def test_chunks_of_any_size_write_the_rows_of_one_chunk(
    db, settings, django_capture_on_commit_callbacks
):
    jobs = []
    for size in (1000, 7, 1):
        settings.IMPORT_CHUNK_ROWS = size
        jobs.append(import_into_new_project(rows_jsonl(40), django_capture_on_commit_callbacks))

    assert [j.status for j in jobs] == ["succeeded"] * 3, [j.error for j in jobs]
    written = [project_rows(Project.objects.get(pk=j.project_id)) for j in jobs]
    assert written[0] == written[1] == written[2]
    assert len(written[0][2]) == 40 and written[0][4] == ["neg", "pos"]
    assert {json.dumps(j.summary, sort_keys=True) for j in jobs} == {
        json.dumps(jobs[0].summary, sort_keys=True)
    }
    assert {(j.progress_done, j.progress_total) for j in jobs} == {(40, 40)}
    assert not ImportPart.objects.exists()
    assert not list(stored_names(imports.PARTS_ROOT))


def test_a_csv_of_text_pairs_is_split_the_same_way(
    db, settings, django_capture_on_commit_callbacks
):
    rows = "id,text_a,text_b,label\n" + "".join(
        f'p{n},"The film {n} is good.","It was {"not " * (n % 2)}fine, said the critic.",'
        f"{('yes', 'no')[n % 2]}\n"
        for n in range(9)
    )
    written = []
    for size in (1000, 2):
        settings.IMPORT_CHUNK_ROWS = size
        project = ProjectFactory(labels=[], task_type="sentence_pair")
        job = upload_job(
            project,
            admin_of(project),
            "pairs.csv",
            rows.encode(),
            django_capture_on_commit_callbacks,
        )
        assert job.status == "succeeded", (job.error, job.problems[:3])
        written.append(project_rows(project))

    assert written[0] == written[1]
    assert [link[1] for link in written[0][3][:2]] == ["p0:a", "p0:b"]


@pytest.fixture
def split_over_workers(monkeypatch):
    """The job sends its chunks as a chord; the test then plays the workers' part."""
    FakeChord.sent = []
    monkeypatch.setattr(import_split, "chunks_go_to_workers", lambda chunks, **_: chunks > 1)
    monkeypatch.setattr("celery.chord", FakeChord)
    return FakeChord.sent


def run_chunk(signature) -> str:
    job_id, attempt, index, start, stop = signature.args
    return imports.import_chunk_run(
        job_id=job_id, attempt=attempt, index=index, start=start, stop=stop
    )


def publish(body) -> ImportJob:
    job_id, attempt, chunks, labels = body.args
    return imports.import_publish_run(job_id=job_id, attempt=attempt, chunks=chunks, labels=labels)


def test_chunks_in_any_order_and_run_twice_write_nothing_until_the_last_step(
    db, settings, split_over_workers, django_capture_on_commit_callbacks, monkeypatch
):
    settings.IMPORT_CHUNK_ROWS = 4
    job = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    assert [s.args[2:] for s in header] == [(0, 0, 4), (1, 4, 8), (2, 8, 10)]
    assert (job.status, job.phase, job.progress_total) == ("running", "tokenizing", 10)

    for signature in reversed(header):
        assert run_chunk(signature) == "written"
    assert run_chunk(header[1]) == "written", "delivered again after its worker died"
    job.refresh_from_db()
    assert job.progress_done == 10, "a chunk run twice counts once"
    assert import_job_progress(job) == {"phase": "tokenizing", "done": 10, "total": 10}
    assert len(list(stored_names(imports.parts_folder(job.pk)))) == 3
    assert not Item.objects.filter(project_id=job.project_id).exists()
    assert not Document.objects.filter(project_id=job.project_id).exists()

    split = publish(body)

    assert split.status == "succeeded", (split.error, split.problems)
    assert split.summary["items_created"] == 10
    assert publish(body).status == "succeeded", "a last step delivered again changes nothing"
    assert Item.objects.filter(project_id=job.project_id).count() == 10
    assert not list(stored_names(imports.parts_folder(job.pk)))
    monkeypatch.setattr(import_split, "chunks_go_to_workers", lambda chunks, **_: False)
    one_process = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    assert project_rows(Project.objects.get(pk=one_process.project_id)) == project_rows(
        Project.objects.get(pk=split.project_id)
    )


def test_a_failed_chunk_fails_the_job_and_writes_nothing(
    db, settings, split_over_workers, django_capture_on_commit_callbacks, monkeypatch
):
    settings.IMPORT_CHUNK_ROWS = 4
    job = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    tokenize = raw_text_import.tokenize_texts

    def breaks_on_a_word(texts, **kwargs):
        texts = list(texts)
        if any(text.startswith("sharp") for text in texts):
            raise RuntimeError("the tokenizer ran out of memory")
        return tokenize(texts, **kwargs)

    monkeypatch.setattr(raw_text_import, "tokenize_texts", breaks_on_a_word)

    results = [run_chunk(s) for s in header]
    done = publish(body)

    assert results == ["written", "failed", "stopped"]
    assert done.status == "failed" and "nothing was imported" in done.error
    assert "chunk 1, rows 5-8" in done.error and "the tokenizer ran out of memory" in done.error
    assert not Item.objects.filter(project_id=job.project_id).exists()
    assert not Document.objects.filter(project_id=job.project_id).exists()
    assert not ImportPart.objects.filter(job=job).exists()
    assert not list(stored_names(imports.parts_folder(job.pk)))
    assert not done.upload, "a rejected upload is deleted"


def test_a_last_step_without_every_chunk_fails_clearly(
    db, settings, split_over_workers, django_capture_on_commit_callbacks
):
    """The chord's callback cannot start before its chunks; a part that went missing, or
    changed, since its chunk recorded it is refused all the same."""
    settings.IMPORT_CHUNK_ROWS = 4
    job = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    for signature in header:
        run_chunk(signature)
    changed = ImportPart.objects.get(job=job, index=2)
    with default_storage.open(changed.file["name"], "rb") as handle:
        content = handle.read()
    default_storage.delete(changed.file["name"])
    default_storage.save(changed.file["name"], ContentFile(content.replace(b"neg", b"pos")))

    done = publish(body)

    assert done.status == "failed"
    assert f"the part {changed.file['name']} changed after its chunk finished" in done.error
    assert "nothing was imported" in done.error and "internal" not in done.error
    assert not Item.objects.filter(project_id=job.project_id).exists()

    job = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers[1:]
    run_chunk(header[0])
    done = publish(body)
    assert done.status == "failed"
    assert done.error.startswith("2 chunk(s) did not finish (1, 2)")


def test_a_conflict_that_arrives_while_chunks_run_fails_the_last_step(
    db, settings, split_over_workers, django_capture_on_commit_callbacks, monkeypatch
):
    """Another import wrote one of these ids with another text after this one was checked:
    the last step checks again under the project's lock, and writes nothing."""
    settings.IMPORT_CHUNK_ROWS = 4
    job = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    ((header, body),) = split_over_workers
    for signature in header:
        run_chunk(signature)
    monkeypatch.setattr(import_split, "chunks_go_to_workers", lambda chunks, **_: False)
    other = rows_jsonl(1, start=3).replace(b'"r3"', b'"r5"')
    racing = upload_job(
        job.project, admin_of(job.project), "other.jsonl", other, django_capture_on_commit_callbacks
    )
    assert racing.status == "succeeded"

    done = publish(body)

    assert done.status == "failed" and "1 problem(s) found" in done.error
    assert [(p["line"], p["field"]) for p in done.problems] == [(6, "id")]
    assert "already exists in this project with other content" in done.problems[0]["message"]
    assert list(
        Item.objects.filter(project=job.project).values_list("annotation_id", flat=True)
    ) == ["r5"]


def test_an_import_started_again_supersedes_its_earlier_chunks(
    db, settings, split_over_workers, django_capture_on_commit_callbacks
):
    settings.IMPORT_CHUNK_ROWS = 4
    job = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    imports.import_job_split(job, "second-attempt")
    # As import_job_run records it before splitting.
    ImportJob.objects.filter(pk=job.pk).update(attempt="second-attempt")
    (first_header, first_body), (second_header, second_body) = split_over_workers

    assert run_chunk(first_header[0]) == "stopped"
    for signature in second_header:
        assert run_chunk(signature) == "written"
    assert publish(first_body).status == "running"
    assert publish(second_body).status == "succeeded"
    assert Item.objects.filter(project=job.project).count() == 10


def test_the_sweep_removes_the_chunks_of_a_lost_job(
    db, settings, split_over_workers, django_capture_on_commit_callbacks
):
    settings.IMPORT_CHUNK_ROWS = 4
    job = import_into_new_project(rows_jsonl(10), django_capture_on_commit_callbacks)
    ((header, _),) = split_over_workers
    run_chunk(header[0])
    ImportJob.objects.filter(pk=job.pk).update(status="failed")

    assert imports.import_parts_sweep() == 1
    assert not ImportPart.objects.filter(job=job).exists()
    assert not list(stored_names(imports.parts_folder(job.pk)))
    assert default_storage.exists(job.upload.name), "the upload is the daily sweep's to expire"


@pytest.mark.parametrize(
    ("task_type", "name", "content"),
    [
        ("classification", "rows.jsonl", rows_jsonl(11)),
        (
            "sentence_pair",
            "pairs.csv",
            (
                "id,text_a,text_b,label\n"
                + "".join(
                    f'p{n},"Film {n} is good.","It was {n} times fine.",yes\n' for n in range(7)
                )
            ).encode(),
        ),
    ],
)
def test_a_job_writes_the_rows_and_summary_of_the_one_step_import(
    db, settings, tmp_path, django_capture_on_commit_callbacks, task_type, name, content
):
    """A raw-text chunk stages its rows as items with their tokenized documents, as the
    other formats do; what the last step writes from them is what the one-step import,
    which tokenizes while it writes, writes from the file."""
    settings.IMPORT_CHUNK_ROWS = 3
    path = tmp_path / name
    path.write_bytes(content)
    one_step = ProjectFactory(labels=[], task_type=task_type)
    chunked = ProjectFactory(labels=[], task_type=task_type)

    summaries = [imports.dataset_import(project=one_step, path=path).as_dict()]
    job = upload_job(chunked, admin_of(chunked), name, content, django_capture_on_commit_callbacks)
    again = upload_job(
        chunked, admin_of(chunked), name, content, django_capture_on_commit_callbacks
    )

    one_step.refresh_from_db()  # it adopted the file's labels
    summaries.append(imports.dataset_import(project=one_step, path=path).as_dict())
    chunked.refresh_from_db()

    assert job.status == again.status == "succeeded", (job.error, again.error)
    assert [job.summary, again.summary] == summaries
    assert again.summary["items_created"] == 0 and again.summary["items_unchanged"] > 0
    assert project_rows(chunked) == project_rows(one_step)
