"""Reading stored files (Django's storage API) with tools that want a path."""

from __future__ import annotations

import posixpath
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.files.storage import Storage, default_storage


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
