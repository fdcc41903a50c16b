"""The metrics package installs on its own (rationale_metrics/pyproject.toml): in a fresh
virtual environment, `pip install` of its folder brings numpy and its JSON readers but no
Django, and its command scores, validates and measures agreement there."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = {"d1": "a good film .", "d2": "a dull film ."}
GOLD = [
    {
        "annotation_id": docid,
        "classification": label,
        "evidences": [
            [
                {
                    "docid": docid,
                    "start_token": 1,
                    "end_token": 2,
                    "start_sentence": 0,
                    "end_sentence": 1,
                    "text": DOCUMENTS[docid].split()[1],
                }
            ]
        ],
        "query": "What is the sentiment?",
        "query_type": None,
    }
    for docid, label in (("d1", "POS"), ("d2", "NEG"))
]


def _prediction(docid: str, label: str, start: int) -> dict:
    other = "NEG" if label == "POS" else "POS"
    return {
        "annotation_id": docid,
        "rationales": [
            {
                "docid": docid,
                "hard_rationale_predictions": [{"start_token": start, "end_token": start + 1}],
            }
        ],
        "classification": label,
        "classification_scores": {label: 0.9, other: 0.1},
        "comprehensiveness_classification_scores": {label: 0.3, other: 0.7},
        "sufficiency_classification_scores": {label: 0.8, other: 0.2},
    }


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def standalone_env(tmp_path_factory) -> Path:
    """A virtual environment with only the metrics package installed, from a copy of its
    folder (a build writes into the folder it builds)."""
    where = tmp_path_factory.mktemp("standalone")
    source = where / "source" / "rationale_metrics"
    shutil.copytree(
        ROOT / "rationale_metrics",
        source,
        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"),
    )
    env = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    install = subprocess.run(
        [str(env / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", source],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, f"pip install of the package failed:\n{install.stderr}"
    return env


def _run(env: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(env / "bin" / "rationale-metrics"), *args], capture_output=True, text=True
    )


def test_the_package_installs_without_django(standalone_env):
    installed = subprocess.run(
        [str(standalone_env / "bin" / "pip"), "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {row["name"].lower() for row in json.loads(installed.stdout)}

    assert {"rationale-metrics", "numpy", "orjson", "msgspec"} <= names
    assert not names & {"django", "djangorestframework", "celery", "scikit-learn", "spacy"}


def test_its_command_scores_and_validates_a_dataset_there(standalone_env, tmp_path):
    data = tmp_path / "data"
    (data / "docs").mkdir(parents=True)
    for docid, text in DOCUMENTS.items():
        (data / "docs" / docid).write_text(text + "\n")
    _jsonl(data / "val.jsonl", GOLD)
    predictions = _jsonl(
        tmp_path / "predictions.jsonl", [_prediction("d1", "POS", 1), _prediction("d2", "NEG", 0)]
    )
    scores = tmp_path / "scores.json"

    scored = _run(
        standalone_env,
        "score",
        "--data_dir",
        str(data),
        "--split",
        "val",
        "--results",
        str(predictions),
        "--score_file",
        str(scores),
    )
    validated = _run(standalone_env, "validate", "--data_dir", str(data))

    assert scored.returncode == 0, scored.stderr
    figures = json.loads(scores.read_text())
    assert figures["classification_scores"]["accuracy"] == 1.0
    # One of the two predicted rationales is the gold token: token F1 of one half.
    assert figures["token_prf"]["instance_macro"]["f1"] == pytest.approx(0.5)
    assert validated.returncode == 0, validated.stderr


def test_explain_without_the_baselines_extra_says_what_to_install(standalone_env, tmp_path):
    done = _run(
        standalone_env,
        "explain",
        "--data_dir",
        str(tmp_path),
        "--split",
        "val",
        "--explainer",
        "occlusion",
        "--results",
        str(tmp_path / "out.jsonl"),
    )

    assert done.returncode == 2
    assert "pip install 'rationale-metrics[baselines]'" in done.stderr
