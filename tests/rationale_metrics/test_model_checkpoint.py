"""What needs no torch: a checkpoint's labels, refusals of bad folders and QA models, and
the package importing without torch."""

import json
import subprocess
import sys

import pytest

from rationale_metrics.models import load_classifier, model_labels


def write_config(folder, **config):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_labels_come_from_id2label_in_class_order(tmp_path):
    folder = write_config(tmp_path / "m", id2label={"1": "POS", "0": "NEG"})

    assert model_labels(folder) == ["NEG", "POS"]


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({}, "id2label is missing"),
        ({"id2label": {"0": "a", "2": "b"}}, "class indexes 0..n-1"),
        ({"id2label": {"0": "a", "1": "a"}}, "names a label twice"),
    ],
)
def test_bad_labels_name_the_file_and_the_field(tmp_path, config, named):
    folder = write_config(tmp_path / "m", **config)

    with pytest.raises(ValueError, match=named) as raised:
        model_labels(folder)
    assert "config.json" in str(raised.value)


def test_a_missing_folder_or_config_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        model_labels(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"config\.json: missing"):
        load_classifier(tmp_path / "empty")
    (tmp_path / "empty" / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        model_labels(tmp_path / "empty")


def test_extractive_qa_checkpoints_are_refused_clearly(tmp_path):
    folder = write_config(
        tmp_path / "qa",
        architectures=["BertForQuestionAnswering"],
        id2label={"0": "LABEL_0", "1": "LABEL_1"},
    )

    with pytest.raises(ValueError, match="reading comprehension with QA models is not supported"):
        load_classifier(folder)


def test_importing_the_package_and_its_command_does_not_import_torch():
    code = (
        "import sys, rationale_metrics, rationale_metrics.models, rationale_metrics.explain, "
        "rationale_metrics.cli\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "assert 'transformers' not in sys.modules, 'transformers imported'\n"
    )

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)

    assert done.returncode == 0, done.stderr
