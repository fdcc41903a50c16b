"""Exports in Django's storage (`STORAGES["default"]`): the parts that chunks write, the
published files, and reading them back.

Every worker and the web processes see the same storage (a volume the compose stack
shares, or an object store through django-storages), so a chunk written on one machine is
assembled on another, and a run scores an export wherever it was made. Local disk holds
only a task's private work folder.

    exports/<export id>/parts/<attempt>/<chunk>-<token>.<key>.jsonl   parts (removed once done)
    exports/<export id>/<name>.zip                                     the published zip
    exports/<export id>/<name>/...                                     or a published folder
    runs/<run id>/parts/<attempt>/chunk-<index>-<token>.jsonl          an explainer run's chunks
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import BinaryIO

from django.core.files.storage import default_storage

from config.storage import StoredParts as StoredParts  # its callers read parts from here
from config.storage import stored_names, stored_part_save, stored_remove, stored_save
from rationale_metrics.sources import DatasetSource, ZipSource

ROOT = "exports"
RUNS_ROOT = "runs"


def export_folder(export_id: int) -> str:
    return f"{ROOT}/{export_id}"


def parts_folder(export_id: int) -> str:
    return f"{export_folder(export_id)}/parts"


def part_save(export_id: int, attempt: str, name: str, local: Path) -> dict:
    """Store a chunk's part; return what the assembly checks it against."""
    return _part_store(f"{parts_folder(export_id)}/{attempt}/{name}", local)


def run_parts_folder(run_id: int) -> str:
    """Where an explainer run's chunks keep their predictions until the run is scored."""
    return f"{RUNS_ROOT}/{run_id}/parts"


def run_part_save(run_id: int, attempt: str, name: str, local: Path) -> dict:
    return _part_store(f"{run_parts_folder(run_id)}/{attempt}/{name}", local)


def _part_store(name: str, local: Path) -> dict:
    with open(local, "rb") as handle:
        return stored_part_save(name, handle)


# The names this module's callers and tests use.
_walk = stored_names
remove = stored_remove


def _is_folder(name: str) -> bool:
    try:
        default_storage.listdir(name)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def export_ids_in_storage() -> list[int]:
    try:
        folders, _ = default_storage.listdir(ROOT)
    except FileNotFoundError:
        return []
    return sorted(int(name) for name in folders if name.isdigit())


def publish(export_id: int, built: Path) -> str:
    """Store a finished zip (or folder) under the export's folder; return its name."""
    name = f"{export_folder(export_id)}/{built.name}"
    if built.is_file():
        return stored_save(name, built)
    remove(name)
    for file in sorted(p for p in built.rglob("*") if p.is_file()):
        stored_save(f"{name}/{file.relative_to(built).as_posix()}", file)
    return name


def open_published(name: str) -> BinaryIO:
    return default_storage.open(name, "rb")


class StoredFolderSource(DatasetSource):
    """A dataset published as a folder, read through the storage."""

    def __init__(self, folder: str):
        super().__init__(folder)
        self.folder = folder.rstrip("/")

    def _full(self, name: str) -> str:
        return f"{self.folder}/{name}".rstrip("/")

    def exists(self, name: str) -> bool:
        return default_storage.exists(self._full(name)) or self.is_dir(name)

    def is_dir(self, name: str) -> bool:
        return _is_folder(self._full(name))

    def list_files(self, folder: str) -> list[str]:
        return sorted(default_storage.listdir(self._full(folder))[1])

    def size(self, name: str) -> int:
        return default_storage.size(self._full(name))

    def open(self, name: str) -> BinaryIO:
        return default_storage.open(self._full(name), "rb")


class _StoredZipSource(ZipSource):
    def __init__(self, name: str):
        self.handle = default_storage.open(name, "rb")
        try:
            super().__init__(self.handle, label=posixpath.basename(name))
        except BaseException:
            self.handle.close()
            raise

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.handle.close()


def open_stored_dataset(name: str) -> DatasetSource:
    """A published export as a dataset source: its zip, or its folder."""
    if name.endswith(".zip"):
        return _StoredZipSource(name)
    return StoredFolderSource(name)
