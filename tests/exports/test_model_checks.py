"""The registration's checks as plain functions: folder names, label mappings, zips."""

import io
import stat
import zipfile

import pytest

from exports.model_checks import (
    ModelCheckError,
    folder_name_checked,
    label_mapping_checked,
    prediction_relabelled,
    zip_members_checked,
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("tiny", "tiny"), ("a/b/", "a/b"), ("./a/./b", "a/b"), ("a\\b", "a/b")],
)
def test_a_folder_under_the_root_is_named_relative_to_it(given, expected):
    assert folder_name_checked(given).as_posix() == expected


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("", "name a folder"),
        (".", "not the root itself"),
        ("../other", "climbs out"),
        ("a/../../b", "climbs out"),
        ("/etc", "absolute"),
        ("a\x00b", "name a folder"),
    ],
)
def test_a_folder_that_leaves_the_root_is_refused(given, says):
    with pytest.raises(ModelCheckError, match=says):
        folder_name_checked(given)


def test_the_same_labels_need_no_mapping():
    assert label_mapping_checked(["neg", "pos"], ["pos", "neg"], None) == {
        "neg": "neg",
        "pos": "pos",
    }


def test_a_mapping_names_one_model_label_per_project_label():
    mapping = label_mapping_checked(
        ["neg", "pos"], ["LABEL_0", "LABEL_1"], {"pos": "LABEL_1", "neg": "LABEL_0"}
    )

    assert mapping == {"neg": "LABEL_0", "pos": "LABEL_1"}


@pytest.mark.parametrize(
    ("mapping", "says"),
    [
        (None, "the project's labels ('neg', 'pos') are not the model's ('LABEL_0', 'LABEL_1')"),
        ({"neg": "LABEL_0"}, "project label(s) 'pos' not mapped"),
        ({"neg": "LABEL_0", "pos": "LABEL_9"}, "'LABEL_9' not a label of the model"),
        ({"neg": "LABEL_0", "pos": "LABEL_0"}, "'neg', 'pos' all mapped to model label 'LABEL_0'"),
        (
            {"neg": "LABEL_0", "pos": "LABEL_1", "maybe": "LABEL_1"},
            "'maybe' not a project label",
        ),
    ],
)
def test_a_mapping_that_does_not_line_up_is_refused_naming_the_labels(mapping, says):
    with pytest.raises(ModelCheckError, match="label_mapping") as refused:
        label_mapping_checked(["neg", "pos"], ["LABEL_0", "LABEL_1"], mapping)

    assert says in str(refused.value)


def test_a_model_label_no_project_label_maps_to_is_refused():
    with pytest.raises(ModelCheckError, match="model label\\(s\\) 'neutral' mapped from no"):
        label_mapping_checked(
            ["neg", "pos"], ["neg", "neutral", "pos"], {"neg": "neg", "pos": "pos"}
        )


def test_a_project_without_labels_cannot_map_any():
    with pytest.raises(ModelCheckError, match="no labels yet"):
        label_mapping_checked([], ["a", "b"], None)


def _zip(entries) -> zipfile.ZipFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data, link in entries:
            info = zipfile.ZipInfo(name)
            if link:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, data)
    buffer.seek(0)
    return zipfile.ZipFile(buffer)


def test_a_zipped_folder_is_taken_with_or_without_its_top_folder():
    flat = _zip([("config.json", "{}", False), ("vocab.txt", "a", False)])
    nested = _zip([("tiny/config.json", "{}", False), ("tiny/sub/vocab.txt", "a", False)])

    assert [n for _, n in zip_members_checked(flat, max_bytes=100)[1]] == [
        "config.json",
        "vocab.txt",
    ]
    prefix, members = zip_members_checked(nested, max_bytes=100)
    assert prefix == "tiny" and [n for _, n in members] == ["config.json", "sub/vocab.txt"]


@pytest.mark.parametrize(
    ("entries", "says"),
    [
        ([("config.json", "{}", False), ("../evil", "x", False)], "leaves its folder"),
        ([("/abs/config.json", "{}", False)], "leaves its folder"),
        ([("config.json", "{}", False), ("link", "/etc/passwd", True)], "is a link"),
        ([("weights.bin", "x", False)], "no config.json"),
        ([("config.json", "x" * 200, False)], "more than 100 bytes"),
    ],
)
def test_a_zip_that_leaves_its_folder_or_holds_no_model_is_refused(entries, says):
    with pytest.raises(ModelCheckError, match=says):
        zip_members_checked(_zip(entries), max_bytes=100)


def test_a_models_prediction_is_written_in_the_projects_labels():
    line = {
        "annotation_id": "a",
        "classification": "LABEL_1",
        "classification_scores": {"LABEL_0": 0.25, "LABEL_1": 0.75},
        "comprehensiveness_classification_scores": {"LABEL_0": 0.5, "LABEL_1": 0.5},
        "sufficiency_classification_scores": {"LABEL_0": 0.1, "LABEL_1": 0.9},
        "thresholded_scores": [
            {
                "threshold": 0.1,
                "sufficiency_classification_scores": {"LABEL_0": 1.0, "LABEL_1": 0.0},
            }
        ],
    }

    out = prediction_relabelled(line, {"LABEL_0": "neg", "LABEL_1": "pos"})

    assert out["classification"] == "pos"
    assert out["classification_scores"] == {"neg": 0.25, "pos": 0.75}
    assert out["sufficiency_classification_scores"] == {"neg": 0.1, "pos": 0.9}
    assert out["thresholded_scores"] == [
        {"threshold": 0.1, "sufficiency_classification_scores": {"neg": 1.0, "pos": 0.0}}
    ]
    assert line["classification"] == "LABEL_1"  # the line given is left as it was
