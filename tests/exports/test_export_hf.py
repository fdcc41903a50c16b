"""The `hf` export layout: a folder `datasets.load_dataset` reads as it is, typed, with a
dataset card generated from the datasheet; and pushing it to the hub."""

import json
import zipfile

import datasets
import pytest
import yaml
from django.core.management import CommandError, call_command

from annotate.models import ImportFormat, Project, TaskType
from annotate.services import dataset_import
from config.exceptions import ApplicationError
from exports.huggingface import SHARD_ROWS, hf_row, shard_names
from exports.params import ExportParams
from exports.services import export_build, export_write_datasheet
from rationale_metrics.eraser_writer import DirectorySink
from tests.annotate import test_perturbations_export

# Items with perturbations of several types, their author and their checker.
perturbed = test_perturbations_export.perturbed

REFERENCE = {"selection": "reference", "aggregation": "reference"}


def export_hf(project, out, **params):
    params = ExportParams(archive="directory", layout="hf", **{**REFERENCE, **params})
    sink = DirectorySink(out)
    stats = export_build(project=project, params=params, sink=sink)
    export_write_datasheet(project=project, params=params, stats=stats, sink=sink)
    return stats


def load(folder, tmp_path):
    """`load_dataset` as a user calls it, with a cache of the test's own (a shared cache
    would answer for another test's folder)."""
    return datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))


def card_metadata(folder):
    text = (folder / "README.md").read_text()
    assert text.startswith("---\n")
    front, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(front), body


def test_load_dataset_reads_the_folder_with_its_features(perturbed, tmp_path):
    project, _, (first, second) = perturbed
    out = tmp_path / "hf"

    stats = export_hf(project, out)

    loaded = load(out, tmp_path)
    assert stats.instances == {"train": 0, "val": 4, "test": 0}
    assert list(loaded) == ["validation"]  # an empty split is left out: nothing to type
    features = loaded[next(iter(loaded))].features
    assert isinstance(features["label"], datasets.ClassLabel)
    assert features["label"].names == project.labels
    rows = {row["annotation_id"]: row for split in loaded.values() for row in split}
    assert set(rows) == {"o0", "o1", first.annotation_id, second.annotation_id}
    assert rows[first.annotation_id]["perturbation_of"] == "o0"
    assert rows[first.annotation_id]["perturbation_types"] == ["syntax", "dispensable_words"]
    assert rows["o0"]["perturbation_of"] is None and rows["o0"]["perturbation_types"] == []
    [document] = rows[first.annotation_id]["documents"]
    stored = first.documents.get()
    assert document["text"] == stored.text
    assert document["tokens"] == stored.token_texts()
    assert document["offsets"] == stored.tokens.tolist()


def test_the_card_carries_the_metadata_the_hub_reads_and_the_datasheet(perturbed, tmp_path):
    project, _, _ = perturbed
    out = tmp_path / "hf"

    stats = export_hf(project, out)

    metadata, body = card_metadata(out)
    assert metadata["language"] == ["en"]
    assert metadata["task_categories"] == ["text-classification"]
    assert metadata["pretty_name"] == project.name
    [config] = metadata["configs"]
    assert config["data_files"] == [{"split": "validation", "path": "data/validation-*"}]
    assert stats.instances == {"train": 0, "val": 4, "test": 0}
    assert "| validation | 4 |" in body
    label = next(f for f in metadata["dataset_info"]["features"] if f["name"] == "label")
    assert label["dtype"]["class_label"]["names"] == {
        str(i): name for i, name in enumerate(project.labels)
    }
    assert metadata["license"] == "unknown"  # the datasheet states none
    assert "## Datasheet: " in body and "### Instructions (verbatim)" in body
    assert "Highlight the words that decide." in body


def test_a_stated_licence_is_the_hubs_identifier_or_other_with_its_name(perturbed, tmp_path):
    from exports.datasheet_info import datasheet_info_update

    project, users, _ = perturbed
    datasheet_info_update(project=project, acting_user=users["author"], licence="CC-BY-4.0")
    export_hf(project, tmp_path / "a")
    datasheet_info_update(project=project, acting_user=users["author"], licence="Ask the lab")
    export_hf(project, tmp_path / "b")

    assert card_metadata(tmp_path / "a")[0]["license"] == "cc-by-4.0"
    other, _ = card_metadata(tmp_path / "b")
    assert (other["license"], other["license_name"]) == ("other", "ask-the-lab")


def test_chunks_of_any_size_publish_the_same_hf_dataset_through_the_job(
    db, settings, django_capture_on_commit_callbacks, tmp_path
):
    from tests.exports.test_export_chunks import make_study, published, run_export

    study = make_study()
    exports = []
    for size in (1000, 4, 1):
        settings.EXPORT_CHUNK_ITEMS = size
        exports.append(run_export(study, django_capture_on_commit_callbacks, layout="hf"))

    assert len({e.sha256 for e in exports}) == 1
    body = published(exports[0])
    (tmp_path / "export.zip").write_bytes(body)
    with zipfile.ZipFile(tmp_path / "export.zip") as archive:
        archive.extractall(tmp_path / "unzipped")
        names = sorted(n.split("/", 1)[1] for n in archive.namelist())
    assert names == [
        "README.md",
        "data/test-00000-of-00001.parquet",
        "data/train-00000-of-00001.parquet",
        "data/validation-00000-of-00001.parquet",
        "datasheet.json",
        "datasheet.md",
    ]
    [folder] = (tmp_path / "unzipped").iterdir()
    loaded = load(folder, tmp_path)
    assert {split: len(rows) for split, rows in loaded.items()} == {
        "train": 4,
        "validation": 4,
        "test": 3,
    }
    # Majority of the workers' highlights, as spans and as the same tokens by index.
    chosen = 0
    for row in (row for split in loaded.values() for row in split):
        spans = {
            (s["docid"], t)
            for group in row["rationale_spans"]
            for s in group
            for t in range(s["start_token"], s["end_token"])
        }
        indices = {
            (entry["docid"], t)
            for group in row["rationale_tokens"]
            for entry in group
            for t in entry["indices"]
        }
        assert spans == indices
        chosen += len(spans)
    assert chosen


def test_a_split_is_cut_into_shards_named_as_the_hub_names_them():
    assert shard_names("val", 5, shard_rows=2) == [
        "data/validation-00000-of-00003.parquet",
        "data/validation-00001-of-00003.parquet",
        "data/validation-00002-of-00003.parquet",
    ]
    assert shard_names("train", 0) == ["data/train-00000-of-00001.parquet"]
    assert SHARD_ROWS >= 10_000


def test_a_label_outside_the_projects_labels_is_refused_by_name():
    line = {"annotation_id": "a", "classification": "maybe", "docids": ["d"], "evidences": []}

    with pytest.raises(ApplicationError, match="'maybe', which is not one of the project's"):
        hf_row(line, {"d": {"docid": "d"}}, {"neg": 0, "pos": 1})


def test_a_project_without_a_label_set_exports_its_labels_as_text(db, tmp_path):
    project = Project.objects.create(
        name="free labels", task_type=TaskType.READING_COMPREHENSION, labels=[]
    )
    source = tmp_path / "qa.jsonl"
    source.write_text(
        json.dumps(
            {
                "id": "q1",
                "passage": "Paris is in France .",
                "question": "Where is Paris ?",
                "answer": "France",
            }
        )
        + "\n"
    )
    dataset_import(project=project, path=source, source_format=ImportFormat.JSONL)
    out = tmp_path / "hf"

    export_hf(project, out, splits="ratios", ratios=(1.0, 0.0, 0.0))

    loaded = load(out, tmp_path)
    assert loaded["train"].features["label"] == datasets.Value("string")
    assert len(loaded["train"]) == 1


def test_the_command_exports_hf_and_pushes_to_the_hub_with_the_token(
    perturbed,
    tmp_path,
    monkeypatch,
):
    pushed = {}

    class FakeHub:
        def __init__(self, token=None):
            pushed["token"] = token

        def create_repo(self, **kwargs):
            pushed["repo"] = kwargs

        def upload_folder(self, **kwargs):
            pushed["files"] = sorted(
                p.relative_to(kwargs["folder_path"]).as_posix()
                for p in __import__("pathlib").Path(kwargs["folder_path"]).rglob("*")
                if p.is_file()
            )
            pushed["upload"] = kwargs
            return "https://hub.example/commit/1"

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub)
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    project, _, _ = perturbed

    call_command(
        "export_eraser",
        project.name,
        str(tmp_path / "out"),
        "--layout",
        "hf",
        "--selection",
        "reference",
        "--aggregation",
        "reference",
        "--push-to-hub",
        "lab/reviews",
    )

    assert pushed["token"] == "hf_secret"
    assert pushed["repo"]["repo_id"] == "lab/reviews" and pushed["repo"]["repo_type"] == "dataset"
    assert pushed["upload"]["repo_id"] == "lab/reviews"
    assert (
        "README.md" in pushed["files"]
        and "data/validation-00000-of-00001.parquet" in pushed["files"]
    )


def test_push_to_hub_needs_the_hf_layout_and_a_folder(perturbed, tmp_path):
    project, _, _ = perturbed

    with pytest.raises(CommandError, match="--push-to-hub"):
        call_command("export_eraser", project.name, str(tmp_path / "a"), "--push-to-hub", "x/y")
    with pytest.raises(CommandError, match="--push-to-hub"):
        call_command(
            "export_eraser",
            project.name,
            str(tmp_path / "b.zip"),
            "--layout",
            "hf",
            "--push-to-hub",
            "x/y",
        )
