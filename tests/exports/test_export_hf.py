"""The `hf` export layout: a folder `datasets.load_dataset` reads as it is, typed, with a
dataset card generated from the datasheet; and pushing it to the hub."""

import datasets
import yaml

from exports.params import ExportParams
from exports.services import export_build, export_write_datasheet
from rationale_metrics.eraser_writer import DirectorySink
from tests.annotate.test_perturbations_export import perturbed  # noqa: F401 - a fixture

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


def test_load_dataset_reads_the_folder_with_its_features(perturbed, tmp_path):  # noqa: F811
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


def test_the_card_carries_the_metadata_the_hub_reads_and_the_datasheet(perturbed, tmp_path):  # noqa: F811
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


def test_a_stated_licence_is_the_hubs_identifier_or_other_with_its_name(perturbed, tmp_path):  # noqa: F811
    from exports.datasheet_info import datasheet_info_update

    project, users, _ = perturbed
    datasheet_info_update(project=project, acting_user=users["author"], licence="CC-BY-4.0")
    export_hf(project, tmp_path / "a")
    datasheet_info_update(project=project, acting_user=users["author"], licence="Ask the lab")
    export_hf(project, tmp_path / "b")

    assert card_metadata(tmp_path / "a")[0]["license"] == "cc-by-4.0"
    other, _ = card_metadata(tmp_path / "b")
    assert (other["license"], other["license_name"]) == ("other", "ask-the-lab")
