"""Showing a job's progress while waiting: a tqdm bar (the `progress` extra), or any
callable given (done, total, unit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

ProgressCallback = Callable[[int, int, str], None]
Progress = bool | ProgressCallback | None


class _Reporter(Protocol):
    def update(self, done: int, total: int, unit: str) -> None: ...

    def close(self) -> None: ...


class _Silent:
    def update(self, done: int, total: int, unit: str) -> None:
        pass

    def close(self) -> None:
        pass


class _Calling:
    def __init__(self, callback: ProgressCallback):
        self.callback = callback

    def update(self, done: int, total: int, unit: str) -> None:
        self.callback(done, total, unit)

    def close(self) -> None:
        pass


class _Bar:
    def __init__(self, description: str):
        try:
            from tqdm.auto import tqdm
        except ImportError as missing:
            raise ImportError(
                "progress=True draws a tqdm bar: pip install 'rationale-workbench-client[progress]'"
            ) from missing
        self.bar: Any = tqdm(desc=description, total=None)

    def update(self, done: int, total: int, unit: str) -> None:
        if total and self.bar.total != total:
            self.bar.total = total
        self.bar.unit = f" {unit}" if unit else "it"
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def reporter(progress: Progress, description: str) -> _Reporter:
    if progress is True:
        return _Bar(description)
    if callable(progress):
        return _Calling(progress)
    return _Silent()
