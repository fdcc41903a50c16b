"""Hugging Face datasets imported: the round trip (export hf, load_dataset, import into a
new project) keeps everything an item is; columns are mapped by a guess or a mapping,
checked before anything is written; bad datasets are refused with file, row and column."""

import uuid

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.models import (
    Document,
    ImportFormat,
    ImportJob,
    Item,
    ItemDocument,
    RationaleSet,
    RationaleSpan,
    TaskType,
)
from annotate.services import dataset_import
from annotate.services.imports.check import detect_import_format
from annotate.tokenization import tokenize_text
from exports.params import ExportParams
from exports.services import export_build, export_write_datasheet
from rationale_metrics.eraser_writer import DirectorySink, ZipSink
from rationale_metrics.problems import DataValidationError
from tests.conftest import client_for
from tests.factories import ProjectFactory
from tests.hypothesis_budget import examples

WORDS = ["the", "film", "drags", ",", "but", "superb", "naïve", "!", "café", "ends", "."]
SPACING = [" ", " ", " ", "  ", "\n", " \t"]
TYPES = ["syntax", "dispensable_words", "important_words"]


def _document(project, docid: str, text: str) -> Document:
    tokens = tokenize_text(text, language=project.language)
    return Document.objects.create(
        project=project,
        docid=docid,
        text=text,
        tokens=tokens.token_offsets,
        sentences=tokens.sentence_ranges,
        token_count=len(tokens.token_offsets),
        text_sha256=uuid.uuid4().hex,
        tokenizer="given",
    )


@st.composite
def texts(draw):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
    gaps = draw(st.lists(st.sampled_from(SPACING), min_size=len(words), max_size=len(words)))
    return "".join(w + g for w, g in zip(words, gaps, strict=True)).strip()


@st.composite
def items(draw, documents_per_item: int):
    """Items as plain data: texts, a label, a split, reference sets as (document position,
    start, end) in token counts to be known once tokenized, and perturbation links."""
    count = draw(st.integers(1, 5))
    drawn = []
    for index in range(count):
        original = draw(st.none() | st.integers(0, index - 1)) if index else None
        drawn.append(
            {
                "texts": [draw(texts()) for _ in range(documents_per_item)],
                "label": draw(st.sampled_from([None, "neg", "pos"])),
                "split": draw(st.sampled_from(["train", "val", "test"])),
                "sets": draw(
                    st.lists(
                        st.lists(
                            st.tuples(
                                st.integers(0, documents_per_item - 1),
                                st.floats(0, 0.99),
                                # None: an empty span, as ERASER's movies data has some.
                                st.none() | st.floats(0.01, 1),
                            ),
                            min_size=1,
                            max_size=2,
                        ),
                        max_size=2,
                    )
                ),
                "original": original,
                "types": draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True))
                if original is not None
                else [],
            }
        )
    return drawn


def project_with(drawn, task_type) -> tuple:
    """A project holding the drawn items with their reference rationales and links."""
    project = ProjectFactory(task_type=task_type, labels=["neg", "pos"])
    made = []
    for index, spec in enumerate(drawn):
        key = f"i{index}"
        docids = [f"{key}-d{p}" for p in range(len(spec["texts"]))]
        original = made[spec["original"]] if spec["original"] is not None else None
        item = Item.objects.create(
            project=project,
            annotation_id=key,
            declared_docids=docids,
            label=spec["label"],
            split=spec["split"],
            perturbation_of=original,
            perturbation_types=spec["types"],
        )
        documents = [_document(project, d, t) for d, t in zip(docids, spec["texts"], strict=True)]
        for position, document in enumerate(documents):
            ItemDocument.objects.create(item=item, document=document, position=position)
        for g, group in enumerate(spec["sets"]):
            rset = RationaleSet.objects.create(reference_item=item, position=g)
            for s, (doc, low, high) in enumerate(group):
                n = documents[doc].token_count
                start = min(int(low * n), n - 1)
                end = start if high is None else max(start + 1, min(n, int(high * n) + 1))
                RationaleSpan.objects.create(
                    rationale_set=rset,
                    document=documents[doc],
                    start_token=start,
                    end_token=end,
                    position=s,
                )
        made.append(item)
    return project


def item_contents(project) -> dict:
    """Everything the round trip keeps, by annotation_id."""
    found = {}
    for item in Item.objects.filter(project=project).select_related("perturbation_of"):
        documents = [link.document for link in item.item_documents.order_by("position")]
        found[item.annotation_id] = {
            "label": item.label,
            "split": item.split,
            "documents": [(d.docid, d.text, d.token_texts()) for d in documents],
            "sets": [
                [
                    (s.document.docid, s.start_token, s.end_token)
                    for s in rset.spans.order_by("position")
                ]
                for rset in item.reference_sets.order_by("position")
            ],
            "perturbation_of": item.perturbation_of.annotation_id if item.perturbation_of else None,
            "perturbation_types": list(item.perturbation_types or []),
        }
    return found


def export_hf(project, out, archive="directory"):
    params = ExportParams(
        selection="reference", aggregation="reference", layout="hf", archive=archive
    )
    sink = ZipSink(out, "dataset") if archive == "zip" else DirectorySink(out)
    try:
        stats = export_build(project=project, params=params, sink=sink)
        export_write_datasheet(project=project, params=params, stats=stats, sink=sink)
    finally:
        sink.close()
    return stats


@pytest.mark.parametrize(
    ("task_type", "documents"), [(TaskType.CLASSIFICATION, 1), (TaskType.SENTENCE_PAIR, 2)]
)
@settings(
    max_examples=examples(24),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_export_load_dataset_import_keeps_every_item(db, tmp_path, task_type, documents, data):
    drawn = data.draw(items(documents))
    source = project_with(drawn, task_type)
    run = tmp_path / uuid.uuid4().hex
    export_hf(source, run / "hf")

    loaded = datasets.load_dataset(str(run / "hf"), cache_dir=str(run / "cache"))
    target = ProjectFactory(task_type=task_type, labels=[])
    summary = dataset_import(project=target, path=run / "hf")

    assert sum(len(split) for split in loaded.values()) == len(drawn)
    assert summary.source_format == ImportFormat.HF
    assert item_contents(target) == item_contents(source)
    target.refresh_from_db()
    assert target.labels == ["neg", "pos"]


OPTION_WORDS = ["river", "bank", "money", "fish", "boat", "tree"]


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_multiple_choice_round_trip_keeps_the_question_its_options_and_the_answer(
    db, tmp_path, data
):
    """Multiple choice: the options travel in the query (CoS-E's "a [sep] b" form), the
    label names the right one; both come back, with the text and the rationale sets."""
    drawn = data.draw(items(1))
    source = project_with(drawn, TaskType.MULTIPLE_CHOICE)
    for item in Item.objects.filter(project=source):
        options = data.draw(
            st.lists(st.sampled_from(OPTION_WORDS), min_size=2, max_size=4, unique=True)
        )
        item.query = " [sep] ".join(options)
        item.options = options
        item.label = data.draw(st.sampled_from(options))
        item.save(update_fields=["query", "options", "label"])
    run = tmp_path / uuid.uuid4().hex
    export_hf(source, run / "hf")

    loaded = datasets.load_dataset(str(run / "hf"), cache_dir=str(run / "cache"))
    target = ProjectFactory(task_type=TaskType.MULTIPLE_CHOICE, labels=[])
    dataset_import(project=target, path=run / "hf")

    assert sum(len(split) for split in loaded.values()) == len(drawn)
    assert item_contents(target) == item_contents(source)

    def questions(project):
        return {
            i.annotation_id: (i.query, list(i.options), i.label)
            for i in Item.objects.filter(project=project)
        }

    assert questions(target) == questions(source)


def test_a_zipped_export_imports_as_a_hugging_face_dataset(db, tmp_path):
    source = project_with(
        [
            {
                "texts": ["A fine film ."],
                "label": "pos",
                "split": "train",
                "sets": [[(0, 0, 0.5)]],
                "original": None,
                "types": [],
            }
        ],
        TaskType.CLASSIFICATION,
    )
    export_hf(source, tmp_path / "hf.zip", archive="zip")
    target = ProjectFactory(labels=[])

    with open(tmp_path / "hf.zip", "rb") as stream:
        head = stream.read(4096)
    assert detect_import_format("hf.zip", head) == ImportFormat.HF
    dataset_import(project=target, path=tmp_path / "hf.zip")

    assert item_contents(target) == item_contents(source)


# ---------------------------------------------------------------- datasets from elsewhere


def write_parquet(path, columns: dict, features: dict | None = None):
    table = pa.table(columns)
    if features is not None:
        table = datasets.Dataset.from_dict(columns, features=datasets.Features(features)).data.table
    pq.write_table(table, path)
    return path


def test_a_plain_parquet_file_is_mapped_by_its_column_names_and_tokenized(db, tmp_path):
    path = write_parquet(
        tmp_path / "train-00000-of-00001.parquet",
        {"text": ["A superb film .", "It drags ."], "label": [1, 0]},
        {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["neg", "pos"])},
    )
    project = ProjectFactory(labels=[])

    summary = dataset_import(project=project, path=path)

    assert summary.items_created == 2
    items = {i.annotation_id: i for i in Item.objects.filter(project=project)}
    assert {k: (i.label, i.split) for k, i in items.items()} == {
        "train-0": ("pos", "train"),
        "train-1": ("neg", "train"),
    }
    assert items["train-0"].documents.get().token_texts() == ["A", "superb", "film", "."]


def test_a_mapping_names_the_columns_and_token_indices_become_spans(db, tmp_path):
    path = write_parquet(
        tmp_path / "reviews.parquet",
        {
            "review": ["A superb film .", "It drags ."],
            "sentiment": ["pos", "neg"],
            "uid": [7, 8],
            "highlight": [[[1, 2]], [[1]]],
            "part": ["test", "validation"],
        },
    )
    project = ProjectFactory(labels=["neg", "pos"])

    dataset_import(
        project=project,
        path=path,
        mapping={
            "text": "review",
            "label": "sentiment",
            "id": "uid",
            "rationale_tokens": "highlight",
            "split": "part",
        },
    )

    item = Item.objects.get(project=project, annotation_id="7")
    assert (item.label, item.split) == ("pos", "test")
    [rset] = item.reference_sets.all()
    assert [(s.start_token, s.end_token) for s in rset.spans.all()] == [(1, 3)]
    assert Item.objects.get(project=project, annotation_id="8").split == "val"


def test_a_saved_dataset_dict_folder_imports_with_its_splits(db, tmp_path):
    features = datasets.Features(
        {"sentence": datasets.Value("string"), "label": datasets.ClassLabel(names=["neg", "pos"])}
    )
    datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict(
                {"sentence": ["Superb ."], "label": [1]}, features=features
            ),
            "test": datasets.Dataset.from_dict(
                {"sentence": ["Dull ."], "label": [0]}, features=features
            ),
        }
    ).save_to_disk(str(tmp_path / "saved"))
    project = ProjectFactory(labels=[])

    dataset_import(project=project, path=tmp_path / "saved")

    assert sorted(
        Item.objects.filter(project=project).values_list("annotation_id", "split", "label")
    ) == [
        ("test-0", "test", "neg"),
        ("train-0", "train", "pos"),
    ]


# ---------------------------------------------------------------- bad input


def problems_of(project, path, **kwargs) -> list[dict]:
    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path, **kwargs)
    assert not Item.objects.filter(project=project).exists()
    assert not Document.objects.filter(project=project).exists()
    return [p.as_dict() for p in caught.value.problems]


def test_no_text_column_is_named_with_the_columns_there_are(db, tmp_path):
    path = write_parquet(tmp_path / "x.parquet", {"body": ["A film ."], "label": ["pos"]})

    [problem] = problems_of(ProjectFactory(labels=[]), path)

    assert problem["field"] == "mapping.text"
    assert "body, label" in problem["message"]


def test_a_mapping_to_an_absent_column_is_refused_before_anything_is_read(db, tmp_path):
    path = write_parquet(tmp_path / "x.parquet", {"text": ["A film ."]})

    [problem] = problems_of(ProjectFactory(labels=[]), path, mapping={"label": "sentiment"})

    assert (problem["file"], problem["field"]) == ("x.parquet", "mapping.label")
    assert "'sentiment' is not in the dataset" in problem["message"]


def test_a_column_of_the_wrong_type_is_named(db, tmp_path):
    path = write_parquet(tmp_path / "x.parquet", {"text": [3, 4]})

    [problem] = problems_of(ProjectFactory(labels=[]), path)

    assert problem["field"] == "text"
    assert "int" in problem["message"] and "needs string" in problem["message"]


def test_bad_rows_are_named_by_file_row_and_column(db, tmp_path):
    path = write_parquet(
        tmp_path / "x.parquet",
        {
            "text": ["A film .", None, "Dull ."],
            "label": ["pos", "neg", "meh"],
            "rationale_tokens": [[[0]], [[0]], [[9]]],
        },
    )

    problems = problems_of(ProjectFactory(labels=["neg", "pos"]), path)

    where = {(p["line"], p["field"]) for p in problems}
    assert (1, "text") in where  # no text in row 1
    assert (2, "label") in where  # not one of the project's labels
    assert all(p["file"] == "x.parquet" for p in problems)


def test_a_rationale_past_the_tokens_fails_the_import_with_nothing_written(db, tmp_path):
    path = write_parquet(
        tmp_path / "x.parquet", {"text": ["A film ."], "rationale_tokens": [[[0, 9]]]}
    )

    [problem] = problems_of(ProjectFactory(labels=[]), path)

    assert (problem["line"], problem["field"]) == (0, "rationale_tokens")
    assert "past the 3 tokens" in problem["message"]


def test_a_perturbation_of_an_unknown_item_is_refused(db, tmp_path):
    path = write_parquet(
        tmp_path / "x.parquet",
        {"text": ["A film ."], "id": ["p1"], "perturbation_of": ["nowhere"]},
    )

    [problem] = problems_of(ProjectFactory(labels=[]), path)

    assert (problem["line"], problem["field"]) == (0, "perturbation_of")


def test_a_file_that_is_not_parquet_is_named(db, tmp_path):
    path = tmp_path / "x.parquet"
    path.write_bytes(b"not parquet at all")

    [problem] = problems_of(ProjectFactory(labels=[]), path)

    assert problem["file"] == "x.parquet" and "cannot read" in problem["message"]


def test_the_command_takes_a_mapping_and_refuses_a_malformed_one(db, tmp_path, capsys):
    path = write_parquet(tmp_path / "x.parquet", {"review": ["A film ."], "stars": ["pos"]})
    project = ProjectFactory(labels=[])

    call_command(
        "import_eraser",
        str(project.pk),
        str(path),
        "--format",
        "hf",
        "--mapping",
        "text=review,label=stars",
    )
    with pytest.raises(CommandError):
        call_command("import_eraser", str(project.pk), str(path), "--mapping", "text")

    assert Item.objects.get(project=project).label == "pos"


# ---------------------------------------------------------------- the API


def parquet_bytes(tmp_path, columns: dict) -> bytes:
    return write_parquet(tmp_path / f"{uuid.uuid4().hex}.parquet", columns).read_bytes()


def test_the_preview_shows_columns_and_the_guessed_mapping_and_writes_nothing(
    db, project, role_users, tmp_path
):
    body = parquet_bytes(tmp_path, {"body": ["A superb film .", "Dull ."], "label": ["pos", "neg"]})
    url = reverse("annotate:import-hf-mapping", args=[project.id])

    guessed = client_for(role_users["admin"]).post(
        url, {"file": SimpleUploadedFile("train.parquet", body)}, format="multipart"
    )
    mapped = client_for(role_users["admin"]).post(
        url,
        {"file": SimpleUploadedFile("train.parquet", body), "mapping": '{"text": "body"}'},
        format="multipart",
    )

    assert guessed.status_code == 200, guessed.content
    assert guessed.data["columns"] == [
        {"name": "body", "type": "string", "label_names": None},
        {"name": "label", "type": "string", "label_names": None},
    ]
    assert guessed.data["mapping"] == {"label": "label"}
    assert [p["field"] for p in guessed.data["problems"]] == ["mapping.text"]
    assert mapped.status_code == 200
    assert mapped.data["mapping"] == {"label": "label", "text": "body"}
    assert mapped.data["problems"] == []
    assert [(s["id"], s["label"], s["split"]) for s in mapped.data["sample"]] == [
        ("train-0", "pos", "train"),
        ("train-1", "neg", "train"),
    ]
    assert not Item.objects.filter(project=project).exists()


def test_the_preview_refuses_a_file_of_another_format_by_its_field(db, project, role_users):
    response = client_for(role_users["admin"]).post(
        reverse("annotate:import-hf-mapping", args=[project.id]),
        {"file": SimpleUploadedFile("texts.jsonl", b'{"text": "a"}\n')},
        format="multipart",
    )

    assert response.status_code == 400
    assert response.data["field"] == "file"


def test_an_upload_with_a_mapping_imports_through_the_job(
    db, project, role_users, tmp_path, django_capture_on_commit_callbacks
):
    body = parquet_bytes(
        tmp_path, {"review": ["A superb film .", "Dull ."], "stars": ["pos", "neg"]}
    )

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(role_users["admin"]).post(
            reverse("annotate:import-list", args=[project.id]),
            {
                "file": SimpleUploadedFile("test-00000-of-00001.parquet", body),
                "mapping": '{"text": "review", "label": "stars"}',
            },
            format="multipart",
        )

    assert response.status_code == 202, response.content
    job = ImportJob.objects.get(pk=response.data["id"])
    assert (job.source_format, job.status) == ("hf", "succeeded"), job.problems
    assert job.options == {"mapping": {"text": "review", "label": "stars"}}
    assert sorted(
        Item.objects.filter(project=project).values_list("annotation_id", "label", "split")
    ) == [
        ("test-0", "pos", "test"),
        ("test-1", "neg", "test"),
    ]


def test_an_upload_whose_mapping_names_an_absent_column_fails_naming_it(
    db, project, role_users, tmp_path, django_capture_on_commit_callbacks
):
    body = parquet_bytes(tmp_path, {"review": ["A superb film ."]})

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(role_users["admin"]).post(
            reverse("annotate:import-list", args=[project.id]),
            {"file": SimpleUploadedFile("x.parquet", body), "mapping": '{"text": "body"}'},
            format="multipart",
        )

    job = ImportJob.objects.get(pk=response.data["id"])
    assert job.status == "failed"
    assert [(p["file"], p["field"]) for p in job.problems] == [("x.parquet", "mapping.text")]
    assert not Item.objects.filter(project=project).exists()


@pytest.mark.parametrize(
    ("name", "mapping", "field"),
    [
        ("x.parquet", "not json", "mapping"),
        ("x.parquet", '["text"]', "mapping"),
        ("x.jsonl", '{"text": "review"}', "mapping"),
    ],
)
def test_a_malformed_mapping_is_a_400_naming_the_field(
    db, project, role_users, name, mapping, field
):
    response = client_for(role_users["admin"]).post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile(name, b"{}\n"), "mapping": mapping},
        format="multipart",
    )

    assert response.status_code == 400
    assert field in response.data or response.data.get("field") == field


def test_a_role_given_as_null_stays_empty_and_a_given_text_replaces_the_guessed_documents():
    from annotate.hf_mapping import Column
    from annotate.services.imports.huggingface import hf_mapping_resolved

    columns = {
        "text": Column("string"),
        "documents": Column(("list", ("struct", {"text": "string"}))),
        "label": Column("string"),
        "body": Column("string"),
    }

    assert hf_mapping_resolved(None, columns) == {"documents": "documents", "label": "label"}
    assert hf_mapping_resolved({"label": None, "documents": None}, columns) == {"text": "text"}
    assert hf_mapping_resolved({"text": "body"}, columns) == {"text": "body", "label": "label"}


def test_a_backwards_span_is_named_and_an_empty_one_is_kept(db, tmp_path):
    spans = [[{"start_token": 2, "end_token": 1}]], [[{"start_token": 1, "end_token": 1}]]
    bad = write_parquet(
        tmp_path / "bad.parquet", {"text": ["A film ."], "rationale_spans": [spans[0]]}
    )
    good = write_parquet(
        tmp_path / "good.parquet", {"text": ["A film ."], "rationale_spans": [spans[1]]}
    )

    [problem] = problems_of(ProjectFactory(labels=[]), bad)
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=good)

    assert (problem["line"], problem["field"]) == (0, "rationale_spans")
    assert "[2, 1) is not a token range" in problem["message"]
    [rset] = Item.objects.get(project=project).reference_sets.all()
    assert [(s.start_token, s.end_token) for s in rset.spans.all()] == [(1, 1)]
