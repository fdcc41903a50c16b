"""Private work folders that a killed process leaves behind, and their removal.

A folder in use is held by its process with an exclusive lock (flock) on a file inside it.
The kernel drops the lock when the process ends, however it ends, even by SIGKILL; so a
folder whose lock can be taken belongs to no running process, and may be removed. This
needs no process id (which the system reuses) and no clock.

The lock is taken before the folder gets its final name, so a sweep never sees an unlocked
folder that is still being set up.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = ".lock"
SUFFIX = ".work"
# A folder of ours without a lock file: made by a process killed before it could lock it.
UNLOCKED_GRACE_SECONDS = 3600


@contextmanager
def work_folder(parent: Path, prefix: str) -> Iterator[Path]:
    """A new folder `<prefix><random>.work` in `parent`, locked while in use and removed
    afterwards. Raises OSError (PermissionError...) when `parent` refuses it."""
    setting_up = Path(tempfile.mkdtemp(prefix=f".setting-up-{prefix}", dir=parent))
    lock = None
    try:
        lock = open(setting_up / LOCK, "w")  # noqa: SIM115 - held until the folder goes
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        folder = parent / f"{prefix}{setting_up.name.rsplit('-', 1)[-1]}{SUFFIX}"
        os.rename(setting_up, folder)
    except BaseException:
        if lock is not None:
            lock.close()
        shutil.rmtree(setting_up, ignore_errors=True)
        raise
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        lock.close()


def remove_abandoned(parent: Path, prefix: str) -> list[Path]:
    """Remove the work folders `<prefix>*.work` in `parent` that no process holds; return
    them. Folders in use are left alone."""
    removed = []
    try:
        candidates = list(parent.glob(f"{prefix}*{SUFFIX}"))
        # Killed while setting one up: only old ones, since a process setting one up
        # now may not have locked it yet.
        half_made = [p for p in parent.glob(f".setting-up-{prefix}*") if _old(p)]
    except OSError:
        return removed
    for folder in candidates + half_made:
        if _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _old(folder: Path) -> bool:
    try:
        return time.time() - folder.stat().st_mtime > UNLOCKED_GRACE_SECONDS
    except OSError:
        return False


def _abandoned(folder: Path) -> bool:
    try:
        handle = open(folder / LOCK)  # noqa: SIM115
    except FileNotFoundError:
        return _old(folder)
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
