"""The checks a model's registration makes, as plain functions over plain data: the folder
an admin names (it stays under the models root) and the label mapping (each project label
is one model label, and the other way round)."""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath


class ModelCheckError(ValueError):
    pass


def folder_name_checked(given: str) -> PurePosixPath:
    """The folder `given`, relative to the models root, as a clean relative path. Refused:
    an empty name, `..` anywhere, and any absolute name (the caller maps an absolute path
    inside the root to a relative one first)."""
    text = (given or "").strip().replace("\\", "/")
    if not text or "\x00" in text:
        raise ModelCheckError("folder: name a folder under the models root")
    path = PurePosixPath(text)
    if path.is_absolute():
        raise ModelCheckError(f"folder: {given!r} is an absolute path outside the models root")
    if ".." in path.parts:
        raise ModelCheckError(f"folder: {given!r} climbs out of the models root ('..')")
    parts = [part for part in path.parts if part not in ("", ".")]
    if not parts:
        raise ModelCheckError("folder: name a folder under the models root, not the root itself")
    return PurePosixPath(*parts)


def label_mapping_checked(
    project_labels: Sequence[str], model_labels: Sequence[str], mapping: Mapping | None
) -> dict[str, str]:
    """The mapping project label -> model label, checked: every project label is mapped to
    one model label, no two to the same one, and every model label is some project label's
    (else the model could predict a class the project does not have, and its scores would
    not line up with the gold). With no mapping, the labels must be the same ones."""
    project_labels, model_labels = list(project_labels), list(model_labels)
    if not project_labels:
        raise ModelCheckError(
            "the project has no labels yet: import its data before registering a model"
        )
    if not mapping:
        if sorted(project_labels) != sorted(model_labels):
            raise ModelCheckError(
                f"label_mapping: the project's labels ({_names(project_labels)}) are not the "
                f"model's ({_names(model_labels)}); give a label_mapping from each project "
                "label to a model label"
            )
        return {label: label for label in project_labels}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise ModelCheckError("label_mapping: give project labels and model labels as text")
    problems = []
    unknown = [label for label in mapping if label not in project_labels]
    if unknown:
        problems.append(
            f"{_names(unknown)} not a project label (those are {_names(project_labels)})"
        )
    missing = [label for label in project_labels if label not in mapping]
    if missing:
        problems.append(f"project label(s) {_names(missing)} not mapped")
    not_model = sorted({v for v in mapping.values() if v not in model_labels})
    if not_model:
        problems.append(
            f"{_names(not_model)} not a label of the model (those are {_names(model_labels)})"
        )
    targets: dict[str, list[str]] = {}
    for label, target in mapping.items():
        targets.setdefault(target, []).append(label)
    shared = {t: ls for t, ls in targets.items() if len(ls) > 1}
    for target, labels in sorted(shared.items()):
        problems.append(f"project labels {_names(labels)} all mapped to model label {target!r}")
    unmapped = [label for label in model_labels if label not in targets]
    if unmapped and not not_model:
        problems.append(f"model label(s) {_names(unmapped)} mapped from no project label")
    if problems:
        raise ModelCheckError("label_mapping: " + "; ".join(problems))
    return {label: mapping[label] for label in project_labels}


def _names(labels) -> str:
    return ", ".join(repr(str(label)) for label in labels)


def zip_members_checked(archive: zipfile.ZipFile, *, max_bytes: int) -> tuple[str, list]:
    """The archive's files to extract, each (member, name relative to the model's folder),
    and the folder prefix they sat under: a `save_pretrained` folder zipped as it is, or
    inside one top folder. Refused: absolute names, `..`, links, more than `max_bytes`
    unpacked, and an archive without config.json."""
    files, total = [], 0
    for member in archive.infolist():
        name = member.filename.replace("\\", "/")
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or (len(name) > 1 and name[1] == ":"):
            raise ModelCheckError(f"file: {member.filename!r} in the zip leaves its folder")
        if stat.S_ISLNK(member.external_attr >> 16):
            raise ModelCheckError(f"file: {member.filename!r} in the zip is a link")
        if member.is_dir():
            continue
        total += member.file_size
        if total > max_bytes:
            raise ModelCheckError(f"file: the zip unpacks to more than {max_bytes} bytes")
        files.append((member, path))
    names = {path.as_posix() for _, path in files}
    prefix = ""
    if "config.json" not in names:
        tops = {path.parts[0] for _, path in files}
        if len(tops) == 1 and f"{next(iter(tops))}/config.json" in names:
            prefix = next(iter(tops))
        else:
            raise ModelCheckError(
                "file: the zip holds no config.json (zip the folder save_pretrained wrote)"
            )
    chosen = [
        (member, PurePosixPath(*path.parts[1:]).as_posix() if prefix else path.as_posix())
        for member, path in files
    ]
    return prefix, chosen


_SCORE_FIELDS = (
    "classification_scores",
    "comprehensiveness_classification_scores",
    "sufficiency_classification_scores",
)


def prediction_relabelled(line: dict, names: Mapping[str, str]) -> dict:
    """An ERASER predictions line written with a model's labels, with the project's instead
    (`names`: model label -> project label); the order of the scores is kept."""

    def scores(found: dict) -> dict:
        return {names.get(label, label): value for label, value in found.items()}

    out = dict(line)
    if "classification" in out:
        out["classification"] = names.get(out["classification"], out["classification"])
    for field in _SCORE_FIELDS:
        if isinstance(out.get(field), dict):
            out[field] = scores(out[field])
    if isinstance(out.get("thresholded_scores"), list):
        out["thresholded_scores"] = [
            {
                k: scores(v) if k in _SCORE_FIELDS and isinstance(v, dict) else v
                for k, v in t.items()
            }
            for t in out["thresholded_scores"]
        ]
    return out
