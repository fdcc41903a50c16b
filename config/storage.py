"""Stored files (Django's storage API): read with tools that want a path, listed and
removed by folder, and the parts that a job's chunks store, checked as they are read back."""

from __future__ import annotations

import hashlib
import io
import posixpath
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from django.core.files import File
from django.core.files.storage import Storage, default_storage

from config.exceptions import ApplicationError


@contextmanager
def local_path(name: str, storage: Storage | None = None) -> Iterator[Path]:
    """A local path to the stored file `name`: the file itself when the storage keeps
    it on a disk this process sees (the filesystem storage, on a volume every container
    mounts), else a temporary copy read through the storage and removed afterwards (an
    object store)."""
    storage = storage or default_storage
    try:
        path = Path(storage.path(name))
    except NotImplementedError:  # the documented answer of storages without local files
        path = None
    # Some storages (the in-memory one) name a path that holds nothing.
    if path is not None and path.is_file():
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="stored-") as tmp:
        copy = Path(tmp) / posixpath.basename(name)
        with storage.open(name, "rb") as source, open(copy, "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        yield copy


def stored_save(name: str, local: Path) -> str:
    """Save a local file under exactly `name`, replacing what is there."""
    with open(local, "rb") as handle:
        return _save_exactly(name, handle)


def stored_part_save(name: str, handle: BinaryIO) -> dict:
    """Store a chunk's part, read from the start of `handle`, under exactly `name`;
    return what the job's last step checks it against (name, sha256, size)."""
    digest, size = hashlib.sha256(), 0
    handle.seek(0)
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
        size += len(block)
    handle.seek(0)
    return {"name": _save_exactly(name, handle), "sha256": digest.hexdigest(), "size": size}


def _save_exactly(name: str, handle: BinaryIO) -> str:
    if default_storage.exists(name):
        default_storage.delete(name)
    saved = default_storage.save(name, File(handle, name=posixpath.basename(name)))
    if saved != name:  # a storage that renamed it: a name the caller did not choose
        default_storage.delete(saved)
        raise ApplicationError(f"the storage refused the name {name!r} (it offered {saved!r})")
    return saved


class PartDamaged(ApplicationError):
    pass


class _CheckedPart(io.RawIOBase):
    """A stored part read back, checked against the size and sha256 recorded when its
    chunk finished: a part replaced or cut short since then fails its job."""

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
    """The parts of one job in the storage, each checked as it is read."""

    def __init__(self, expected: dict[str, dict]):
        self.expected = expected

    def open(self, name: str) -> BinaryIO:
        raw = _CheckedPart(default_storage.open(name, "rb"), self.expected[name])
        return io.BufferedReader(raw, 1 << 20)


def stored_names(folder: str) -> Iterator[str]:
    """Every file name under `folder` in the storage."""
    try:
        folders, files = default_storage.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in files:
        yield f"{folder}/{name}"
    for sub in folders:
        yield from stored_names(f"{folder}/{sub}")


def stored_remove(folder_or_file: str, keep: str | None = None) -> int:
    """Delete a stored file, or every file under a stored folder except those under
    `keep`; return how many."""
    removed = 0
    names = list(stored_names(folder_or_file))
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
