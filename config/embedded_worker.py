"""The background worker of `make run`: a real Celery worker (with beat) beside the web
server, on kombu's filesystem transport, so that jobs run in the background and their
progress shows, with no broker server to install or start.

`manage.py serve` calls `serve_with_worker`, which starts both as child processes, each
in a process group of its own, and stops both (and their own children: the worker's pool
and beat, the dev server's reloaded child) when it is interrupted or when either exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

EMBEDDED_BROKER_URL = "filesystem://"
STOP_GRACE_SECONDS = 20.0


def embedded_environment(*, run_dir: Path, base: dict[str, str]) -> dict[str, str]:
    """The environment both processes share: the filesystem broker and results in
    `run_dir`, and a file cache there too, so that the live progress a worker writes to
    the cache reaches the web server. What `base` already sets is kept."""
    env = dict(base)
    env.setdefault("CELERY_BROKER_URL", EMBEDDED_BROKER_URL)
    env.setdefault("CELERY_EMBEDDED_DIR", str(run_dir))
    env.setdefault("CACHE_URL", f"filecache://{run_dir / 'cache'}")
    return env


def embedded_folders_create(run_dir: Path) -> None:
    for name in ("messages", "results", "cache"):
        (run_dir / name).mkdir(parents=True, exist_ok=True)


def worker_command(*, python: str, run_dir: Path, concurrency: int) -> list[str]:
    return [
        python,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--beat",
        "--schedule",
        str(run_dir / "beat-schedule"),
        f"--concurrency={concurrency}",
        "--without-gossip",
        "--without-mingle",
        # Warnings and errors only: beat sends the quality sweep every second.
        "--loglevel=WARNING",
    ]


def web_command(*, python: str, manage: Path, address: str, reload: bool) -> list[str]:
    return [python, str(manage), "runserver", address, *([] if reload else ["--noreload"])]


def _stop(children: Sequence[subprocess.Popen], grace: float) -> None:
    """The worker (first) gets SIGTERM, Celery's warm shutdown: its tasks end, its pool and
    beat stop. The web server's group gets SIGINT, as Ctrl-C in a terminal would give it
    and its reloader. Whatever is left in either group after `grace` seconds gets SIGKILL:
    a task still running then is lost, and its job is failed by the heartbeat sweep."""
    worker, *others = children
    if worker.poll() is None:
        worker.terminate()
    for child in others:
        if child.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGINT)
    deadline = time.monotonic() + grace
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
    for child in children:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        if child.poll() is None:
            child.wait()


def serve_with_worker(
    *,
    address: str,
    run_dir: Path,
    manage: Path,
    concurrency: int = 2,
    reload: bool = True,
    out=sys.stdout,
) -> int:
    """Run the dev server and the worker until either stops or this process is told to
    stop (Ctrl-C, SIGTERM); returns the exit code of the child that stopped first, or 0."""
    run_dir = run_dir.resolve()
    embedded_folders_create(run_dir)
    env = embedded_environment(run_dir=run_dir, base=dict(os.environ))
    python = sys.executable
    stopping = {"signal": None}

    def on_signal(signum, _frame):
        stopping["signal"] = signum

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    children: list[subprocess.Popen] = []
    try:
        # Each child leads a process group of its own: Ctrl-C reaches this process only,
        # and stopping a group also stops what the child started (pool, beat, reloader).
        children.append(
            subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
                worker_command(python=python, run_dir=run_dir, concurrency=concurrency),
                env=env,
                start_new_session=True,
            )
        )
        children.append(
            subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
                web_command(python=python, manage=manage, address=address, reload=reload),
                env=env,
                start_new_session=True,
            )
        )
        out.write(
            f"Background worker (pid {children[0].pid}) and web server (pid {children[1].pid}) "
            f"started; jobs queue in {run_dir}. Ctrl-C stops both.\n"
        )
        out.flush()
        while stopping["signal"] is None:
            ended = [c for c in children if c.poll() is not None]
            if ended:
                out.write(f"A child process (pid {ended[0].pid}) exited; stopping the other.\n")
                return ended[0].returncode or 1
            time.sleep(0.2)
        return 0
    finally:
        _stop(children, STOP_GRACE_SECONDS)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
