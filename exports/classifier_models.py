"""Models registered for a project, and their loading for the model explainers' runs.

A model is a `save_pretrained` folder of the storage under RW_MODELS_ROOT: an admin names
one already there, or uploads a zip of one. Nothing outside the root is ever read, however
it is named (`..`, an absolute path, a link). The checkpoint's labels are read from its
config.json (no torch needed), and the label mapping is checked against the project's.

torch and transformers belong to the optional `models` extra: nothing here imports them
until a run loads a model, and a run asks `models_extra_missing()` first.
"""

from __future__ import annotations

import importlib.util
import posixpath
import shutil
import tempfile
import threading
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils.text import slugify

from annotate.models import InstructionVariant, Project
from config.exceptions import ApplicationError, ConflictError, NotFoundError
from exports.model_checks import (
    ModelCheckError,
    folder_name_checked,
    label_mapping_checked,
    zip_members_checked,
)
from exports.models import ClassifierModel, ExplainerRun, RunStatus
from qc.models import AuditAction, AuditEvent

MODELS_EXTRA_MODULES = ("torch", "transformers", "captum")
MODELS_EXTRA_MISSING = (
    "model explainers need the 'models' extra (torch, transformers and captum), which this "
    "server does not have: install it with pip install 'rationale-workbench[models]', or run the "
    "bag-of-words explainers (occlusion, lime, linear, random) without a model"
)


def models_extra_missing() -> list[str]:
    """The modules of the `models` extra that this process cannot import."""
    return [name for name in MODELS_EXTRA_MODULES if importlib.util.find_spec(name) is None]


def model_explainer_names() -> tuple[str, ...]:
    """The model explainers' names (rationale_metrics' registry; torch-free to import)."""
    from rationale_metrics.models import MODEL_EXPLAINERS

    return tuple(MODEL_EXPLAINERS)


# ---------------------------------------------------------------- where models are


def _root() -> str:
    return settings.RW_MODELS_ROOT.strip("/") or "models"


def _local_root() -> Path | None:
    """The models root on this machine's disk, when the storage keeps files on one."""
    try:
        return Path(default_storage.path(_root())).resolve()
    except NotImplementedError:
        return None


def model_folder_resolve(given: str) -> str:
    """The storage name of the model folder `given` (relative to the models root, or an
    absolute path inside it), checked: under the root once every link is followed, every
    file in it too, and holding a config.json."""
    text = (given or "").strip()
    local_root = _local_root()
    if text.startswith("/") or Path(text).is_absolute():
        if local_root is None or not Path(text).resolve().is_relative_to(local_root):
            raise ApplicationError(f"folder: {given!r} is outside the models root")
        text = Path(text).resolve().relative_to(local_root).as_posix()
    try:
        relative = folder_name_checked(text)
    except ModelCheckError as exc:
        raise ApplicationError(str(exc)) from exc
    name = f"{_root()}/{relative.as_posix()}"
    if local_root is None:
        if not default_storage.exists(f"{name}/config.json"):
            raise ApplicationError(f"folder: no config.json in {given!r} under the models root")
        return name
    folder = (local_root / relative).resolve()
    if not folder.is_relative_to(local_root):
        raise ApplicationError(f"folder: {given!r} links out of the models root")
    if not folder.is_dir():
        raise ApplicationError(f"folder: no folder {given!r} under the models root")
    for path in sorted(folder.rglob("*")):
        if not path.resolve().is_relative_to(local_root):
            inside = path.relative_to(folder).as_posix()
            raise ApplicationError(f"folder: {inside!r} in {given!r} links out of the models root")
    if not (folder / "config.json").is_file():
        raise ApplicationError(f"folder: no config.json in {given!r}")
    return name


@contextmanager
def model_folder_local(name: str) -> Iterator[Path]:
    """A local folder holding the stored model folder `name`: the folder itself on a
    filesystem storage, else a temporary copy read through the storage."""
    try:
        local = Path(default_storage.path(name))
    except NotImplementedError:
        local = None
    if local is not None and local.is_dir():
        yield local
        return
    with tempfile.TemporaryDirectory(prefix="model-") as tmp:
        _copy_stored_folder(name, Path(tmp))
        yield Path(tmp)


def _stored_files_modified(name: str) -> tuple[tuple[str, float], ...]:
    """(file, modification time) of the stored folder's own files: config, weights and
    tokenizer sit at its top, where `save_pretrained` writes them."""
    _, files = default_storage.listdir(name)
    return tuple(
        sorted(
            (file, default_storage.get_modified_time(f"{name}/{file}").timestamp())
            for file in files
        )
    )


def _copy_stored_folder(name: str, out: Path) -> None:
    folders, files = default_storage.listdir(name)
    for file in files:
        with default_storage.open(f"{name}/{file}", "rb") as source, open(out / file, "wb") as copy:
            shutil.copyfileobj(source, copy, 1 << 20)
    for folder in folders:
        (out / folder).mkdir()
        _copy_stored_folder(f"{name}/{folder}", out / folder)


def _labels_of(local: Path) -> list[str]:
    from rationale_metrics.models import model_labels

    try:
        return list(model_labels(local))
    except (ValueError, OSError) as exc:
        raise ApplicationError(f"folder: {exc}") from exc


# ---------------------------------------------------------------- registering


def classifier_model_list(*, project: Project) -> QuerySet[ClassifierModel]:
    return ClassifierModel.objects.filter(project=project).select_related("registered_by")


def classifier_model_get(*, project: Project, model_id: int) -> ClassifierModel:
    model = ClassifierModel.objects.filter(project=project, pk=model_id).first()
    if model is None:
        raise NotFoundError(f"model: no model {model_id} in this project")
    return model


def classifier_model_register(
    *,
    project: Project,
    acting_user,
    name: str,
    folder: str | None = None,
    upload=None,
    label_mapping: dict | None = None,
) -> ClassifierModel:
    """Register the checkpoint in `folder` (under the models root) or in the zip `upload`
    (unpacked into the models root) for `project`, with its label mapping checked. A
    refused registration leaves nothing behind."""
    if (folder is None) == (upload is None):
        raise ApplicationError("give either a folder under the models root or a zip, not both")
    if ClassifierModel.objects.filter(project=project, name=name).exists():
        raise ConflictError(f"name: the project already has a model named {name!r}")
    if folder is not None:
        stored = model_folder_resolve(folder)
        with model_folder_local(stored) as local:
            labels = _labels_of(local)
        mapping = _mapping_checked(project, labels, label_mapping)
        return _model_create(project, acting_user, name, stored, labels, mapping)
    with tempfile.TemporaryDirectory(prefix="model-upload-") as tmp:
        files = _zip_unpacked(upload, Path(tmp))
        labels = _labels_of(Path(tmp))
        mapping = _mapping_checked(project, labels, label_mapping)
        stored = f"{_root()}/uploads/project-{project.pk}/{slugify(name)[:60] or 'model'}-{uuid.uuid4().hex[:8]}"
        saved = []
        try:
            for relative in files:
                target = f"{stored}/{relative}"
                with open(Path(tmp) / relative, "rb") as handle:
                    saved.append(
                        default_storage.save(target, File(handle, name=posixpath.basename(target)))
                    )
                if saved[-1] != target:
                    raise ApplicationError(f"the storage refused the name {target!r}")
            return _model_create(project, acting_user, name, stored, labels, mapping)
        except BaseException:
            for done in saved:
                default_storage.delete(done)
            raise


def _mapping_checked(project: Project, labels: list[str], mapping: dict | None) -> dict:
    try:
        return label_mapping_checked(project.labels or [], labels, mapping)
    except ModelCheckError as exc:
        raise ApplicationError(str(exc)) from exc


def _zip_unpacked(upload, out: Path) -> list[str]:
    """Unpack the uploaded zip's checked files into `out`: their names relative to it."""
    try:
        archive = zipfile.ZipFile(upload)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ApplicationError(f"file: not a zip archive ({exc})") from exc
    with archive:
        try:
            _, members = zip_members_checked(archive, max_bytes=settings.IMPORT_MAX_UPLOAD_BYTES)
        except ModelCheckError as exc:
            raise ApplicationError(str(exc)) from exc
        names = []
        for member, relative in members:
            target = out / PurePosixPath(relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, open(target, "wb") as copy:
                shutil.copyfileobj(source, copy, 1 << 20)
            names.append(relative)
    return names


def _model_create(project, acting_user, name, folder, labels, mapping) -> ClassifierModel:
    try:
        with transaction.atomic():
            return ClassifierModel.objects.create(
                project=project,
                name=name,
                folder=folder,
                labels=labels,
                label_mapping=mapping,
                registered_by=acting_user,
            )
    except IntegrityError as exc:  # registered at the same moment by another request
        raise ConflictError(f"name: the project already has a model named {name!r}") from exc


@transaction.atomic
def classifier_model_delete(
    *, project: Project, model_id: int, acting_user, with_runs: bool = False
) -> int:
    """Delete a registered model, and its finished runs when `with_runs`; returns how many
    runs went with it. Refused while one of its runs is going, while a variant shows one of
    its runs' tokens as suggestions, and, unless `with_runs`, while it has runs at all (their
    scores would lose the model they measured). A zip uploaded for it is removed from the
    storage; a folder an admin named stays, as it is theirs. Written to the audit."""
    model = ClassifierModel.objects.select_for_update().filter(project=project, pk=model_id).first()
    if model is None:
        raise NotFoundError(f"model: no model {model_id} in this project")
    runs = ExplainerRun.objects.select_for_update().filter(model=model).order_by("pk")
    going = [run.name for run in runs if run.status in (RunStatus.PENDING, RunStatus.RUNNING)]
    if going:
        raise ConflictError(
            f"runs of this model are still going ({', '.join(going)}); wait for them to end",
            extra={"code": "model_runs_going"},
        )
    run_ids = [run.pk for run in runs]
    showing = sorted(
        InstructionVariant.objects.filter(
            project=project, suggestions__run__in=run_ids
        ).values_list("name", flat=True)
    )
    if showing:
        raise ConflictError(
            f"variant(s) {', '.join(showing)} show a run of this model as suggestions; "
            "choose another source for them first",
            extra={"code": "model_runs_suggested"},
        )
    if run_ids and not with_runs:
        raise ConflictError(
            f"the model has {len(run_ids)} run(s), whose scores would lose the model they "
            "measured; delete them with it (runs=delete) or keep the model",
            extra={"code": "model_has_runs", "runs": len(run_ids)},
        )
    files = [run.predictions.name for run in runs if run.predictions]
    if model.folder.startswith(f"{_root()}/uploads/"):
        files += _stored_files(model.folder)
    details = {"model": model.pk, "name": model.name, "folder": model.folder, "runs": run_ids}
    runs.delete()
    model.delete()
    AuditEvent.objects.create(
        project=project,
        actor=acting_user,
        action=AuditAction.DELETE,
        reason=f"model {details['name']} deleted"
        + (f" with {len(run_ids)} run(s)" if run_ids else ""),
        details=details,
    )
    # The files go once the rows are gone for good: a rolled-back delete keeps them.
    transaction.on_commit(lambda: [default_storage.delete(name) for name in files])
    return len(run_ids)


def _stored_files(folder: str) -> list[str]:
    """Every file of the storage under `folder`, as storage names."""
    directories, files = default_storage.listdir(folder)
    names = [f"{folder}/{name}" for name in files]
    for directory in directories:
        names += _stored_files(f"{folder}/{directory}")
    return names


# ---------------------------------------------------------------- loading, once per process

_loaded: dict[tuple[int, str], object] = {}
_loading = threading.Lock()


def classifier_loaded(model: ClassifierModel):
    """The registered model loaded by `rationale_metrics.models.load_classifier`, kept for
    the worker process's next chunks (one model at a time: a worker that moves on to
    another model frees the first). A model retrained into the same folder is loaded
    again: the key holds its files' modification times."""
    missing = models_extra_missing()
    if missing:
        raise ApplicationError(f"{MODELS_EXTRA_MISSING} (missing: {', '.join(missing)})")
    key = (model.pk, model.folder, _stored_files_modified(model.folder))
    with _loading:
        if key not in _loaded:
            from rationale_metrics.models import load_classifier

            _loaded.clear()
            with model_folder_local(model.folder) as local:
                _loaded[key] = load_classifier(local, device=settings.RW_MODELS_DEVICE or None)
        return _loaded[key]


def classifier_cache_clear() -> None:
    with _loading:
        _loaded.clear()
