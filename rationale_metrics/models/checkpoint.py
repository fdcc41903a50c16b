"""What a checkpoint folder says about itself, read from its `config.json` without torch."""

from __future__ import annotations

import json
from pathlib import Path

QA_REFUSAL = (
    "reading comprehension with QA models is not supported yet: {folder} holds an "
    "extractive question-answering checkpoint ({architecture}); give a sequence-"
    "classification checkpoint"
)


def read_config(folder: str | Path) -> dict:
    """The checkpoint's `config.json` as a dict; a clear `ValueError` for a folder that
    is not a checkpoint."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"model folder {folder} does not exist or is not a folder")
    path = folder / "config.json"
    if not path.is_file():
        raise ValueError(f"{path}: missing; a model folder needs the checkpoint's config.json")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return config


def refuse_question_answering(folder: str | Path, config: dict) -> None:
    for architecture in config.get("architectures") or []:
        if isinstance(architecture, str) and architecture.endswith("ForQuestionAnswering"):
            raise ValueError(QA_REFUSAL.format(folder=folder, architecture=architecture))


def model_labels(folder: str | Path) -> list[str]:
    """The checkpoint's labels in class-index order, from `id2label` in `config.json`."""
    config = read_config(folder)
    path = Path(folder) / "config.json"
    id2label = config.get("id2label")
    if not isinstance(id2label, dict) or not id2label:
        raise ValueError(f"{path}: field id2label is missing or empty; the labels are needed")
    try:
        indexes = sorted(int(i) for i in id2label)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: id2label keys must be class indexes 0..n-1") from exc
    if indexes != list(range(len(indexes))):
        raise ValueError(f"{path}: id2label keys must be class indexes 0..n-1, got {indexes}")
    labels = [str(id2label[str(i)] if str(i) in id2label else id2label[i]) for i in indexes]
    if len(set(labels)) != len(labels):
        raise ValueError(f"{path}: id2label names a label twice")
    return labels
