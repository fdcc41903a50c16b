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

import hashlib
import io
import posixpath
from pathlib import Path
from typing import BinaryIO

from django.core.files import File
from django.core.files.storage import default_storage

from config.exceptions import ApplicationError
from rationale_metrics.sources import DatasetSource, ZipSource

ROOT = "exports"
RUNS_ROOT = "runs"


def export_folder(export_id: int) -> str:
    return f"{ROOT}/{export_id}"


def parts_folder(export_id: int) -> str:
    return f"{export_folder(export_id)}/parts"


def _save(name: str, local: Path) -> str:
    """Save a local file under exactly `name`, replacing what is there."""
    if default_storage.exists(name):
        default_storage.delete(name)
    with open(local, "rb") as handle:
        saved = default_storage.save(name, File(handle, name=posixpath.basename(name)))
    if saved != name:  # a storage that renamed it: a name this module did not choose
        default_storage.delete(saved)
        raise ApplicationError(f"the storage refused the name {name!r} (it offered {saved!r})")
    return saved


def part_save(export_id: int, attempt: str, name: str, local: Path) -> dict:
    """Store a chunk's part; return what the assembly checks it against."""
    return _part_store(f"{parts_folder(export_id)}/{attempt}/{name}", local)


def run_parts_folder(run_id: int) -> str:
    """Where an explainer run's chunks keep their predictions until the run is scored."""
    return f"{RUNS_ROOT}/{run_id}/parts"


def run_part_save(run_id: int, attempt: str, name: str, local: Path) -> dict:
    return _part_store(f"{run_parts_folder(run_id)}/{attempt}/{name}", local)


def _part_store(name: str, local: Path) -> dict:
    digest = hashlib.sha256()
    with open(local, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    stored = _save(name, local)
    return {"name": stored, "sha256": digest.hexdigest(), "size": local.stat().st_size}


class PartDamaged(ApplicationError):
    pass


class _CheckedPart(io.RawIOBase):
    """A stored part read back, checked against the size and sha256 recorded when its
    chunk finished: a part replaced or cut short since then fails the export."""

    def __init__(self, stream: BinaryIO, expected: dict):
        super().__init__()
        self.stream = stream
        self.expected = expected
        self.digest = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.stream.read(len(buffer))
        if not data:
            if (self.size, self.digest.hexdigest()) != (
                self.expected["size"],
                self.expected["sha256"],
            ):
                raise PartDamaged(
                    f"the part {self.expected['name']} changed after its chunk finished"
                )
            return 0
        buffer[: len(data)] = data
        self.digest.update(data)
        self.size += len(data)
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self.stream.close()
        super().close()


class StoredParts:
    """The parts of one export in the storage, each checked as it is read."""

    def __init__(self, expected: dict[str, dict]):
        self.expected = expected

    def open(self, name: str) -> BinaryIO:
        raw = _CheckedPart(default_storage.open(name, "rb"), self.expected[name])
        return io.BufferedReader(raw, 1 << 20)


def _walk(folder: str):
    """Every file name under `folder` in the storage."""
    try:
        folders, files = default_storage.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in files:
        yield f"{folder}/{name}"
    for sub in folders:
        yield from _walk(f"{folder}/{sub}")


def remove(folder_or_file: str, keep: str | None = None) -> int:
    """Delete a stored file, or every file under a stored folder except those under
    `keep`; return how many."""
    removed = 0
    names = list(_walk(folder_or_file))
    if not names and default_storage.exists(folder_or_file):
        try:
            default_storage.delete(folder_or_file)  # a file
        except OSError:
            return 0  # on a disk: a folder of empty folders, which hold nothing
        return 1
    for name in names:
        if keep and (name == keep or name.startswith(keep.rstrip("/") + "/")):
            continue
        default_storage.delete(name)
        removed += 1
    return removed


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
        return _save(name, built)
    remove(name)
    for file in sorted(p for p in built.rglob("*") if p.is_file()):
        _save(f"{name}/{file.relative_to(built).as_posix()}", file)
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
