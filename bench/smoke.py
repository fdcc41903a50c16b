"""Run every benchmark script to its end at a small size, so none breaks unseen.

A smoke run, not a timing: each script runs as a user would run it (a fresh process, its
own command line), on sizes small enough for CI, and must exit 0. Prints one line per
script with its exit code and seconds, then the tail of the output of any that failed.
The scripts run in two lanes side by side (LANES), one per core.

    python bench/smoke.py            # every script
    python bench/smoke.py load faults  # some of them
    python bench/smoke.py --changed-since origin/main  # those a pull request's change touches
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]

# script -> its arguments at smoke size
SMOKE_RUNS: dict[str, list[str]] = {
    "agreement": [
        "--items",
        "200",
        "--variants",
        "3",
        "--sklearn-items",
        "20",
        "--api-items",
        "20",
    ],
    "metrics": ["--scales", "tiny", "--repeat", "1", "--whole-repeat", "1"],
    "fine_grained": ["--instances", "200", "--repeat", "1"],
    "import": ["--sizes", "100", "200", "--tokens", "50", "--split-sizes", "200"],
    "export": ["--sizes", "200", "400", "--repeat", "1"],
    "explain": ["--items", "1000"],
    "data_manager": ["--smoke"],
    # Tiny: four instances of 30 words, few samples; ferret only where its venv is.
    "model_explain": [
        *("--instances", "4", "--words", "30", "--samples", "20", "--ig-steps", "4"),
    ],
    "workspace": ["--tokens", "300", "--toggles", "5"],
    # The demo's data is its fixed size; the agreement project and the loads are small.
    "pages": [
        *("--loads", "1", "--variants", "3", "--workers", "4", "--agreement-items", "10"),
    ],
    "load": [
        *("--clients", "5", "--seconds", "5", "--items", "200"),
        # A crowd launch of 10 participants: entry, consent, first visit, a few submits.
        *("--crowd", "--crowd-annotators", "10", "--crowd-arrival-seconds", "2"),
        *("--crowd-work-seconds", "4", "--think", "0.5", "1.5"),
    ],
    # Under callgrind against bench/hotpath_budget.json: 20 pairs hold the pair's figure to
    # a percent or two (3 pairs moved it by 9 %, a garbage collection more or less), and
    # counting them costs seconds; start-up is not counted, nor instrumented.
    "hotpath_cost": ["--pairs", "20", "--arrivals", "3", "--items", "200"],
    "scale_out": [
        "--items",
        "2000",
        "--agreement-items",
        "200",
        "--variants",
        "3",
        "--export-chunk-items",
        "500",
        "--agreement-chunk-items",
        "50",
    ],
}
# faults.py's Redis outage, only when asked (--faults): it stops and starts a redis-server
# of its own, never the machine's, but takes a minute and a half. Its database outage stops
# the machine's PostgreSQL, so the smoke run never starts it (run it by hand, as root, on a
# machine nothing else is using: python bench/faults.py --only database).
FAULT_RUNS: dict[str, list[str]] = {
    "faults": ["--only", "redis", "--outage-seconds", "2", "--catch-up-seconds", "30"]
}
# What a script needs beyond Python and the project's services, and why it may be absent.
NEEDS = {
    "workspace": ("/usr/bin/chromium", "headless Chromium (Debian package chromium)"),
    "pages": ("/usr/bin/chromium", "headless Chromium (Debian package chromium)"),
    "load": ("/usr/sbin/nginx", "nginx (Debian package nginx-light)"),
    "hotpath_cost": ("valgrind", "valgrind"),
    "faults": ("/usr/bin/redis-server", "redis-server (Debian package redis-server)"),
}
TIMEOUT_SECONDS = 600
# Two lanes run side by side, each script of a lane after the one before. Scripts that share
# something are in the same lane: load and hotpath_cost share load's database
# (rw_bench_load) and its Redis databases (9, 11), import takes Redis 9 as its broker, and
# explain, export and workspace keep files in the checkout's media folder, as load does. In
# the other lane each script has a database (or SQLite file) and a media folder of its own
# (scale_out's broker is Redis 8; data_manager has rw_bench_dm). A script in no lane (faults)
# runs alone after both.
LANES: tuple[tuple[str, ...], ...] = (
    ("load", "hotpath_cost", "import", "explain", "export", "workspace"),
    ("pages", "scale_out", "agreement", "metrics", "fine_grained", "data_manager", "model_explain"),
)

# What each script exercises, as path prefixes: with --changed-since, a script runs only when
# a change touches one of them (a pull request's CI); everything runs otherwise (.ci/scheduled,
# a push). Changes to what every script stands on run them all.
EVERY_SCRIPT_STANDS_ON = ("bench/common.py", "bench/smoke.py", "pyproject.toml", "requirements/")
DJANGO_STACK = ("config/", "annotate/")
EXERCISES: dict[str, tuple[str, ...]] = {
    "agreement": ("rationale_metrics/", "qc/", *DJANGO_STACK),
    "metrics": ("rationale_metrics/",),
    "fine_grained": ("rationale_metrics/",),
    "model_explain": ("rationale_metrics/", "bench/ferret_runner.py"),
    "import": DJANGO_STACK,
    "export": ("exports/", "qc/", "rationale_metrics/", *DJANGO_STACK),
    "explain": ("exports/", "rationale_metrics/", *DJANGO_STACK),
    "data_manager": ("qc/", *DJANGO_STACK),
    "workspace": ("frontend/", *DJANGO_STACK),
    "pages": ("frontend/", "qc/", "exports/", "crowd/", "locale/", *DJANGO_STACK),
    "load": ("frontend/", "qc/", "crowd/", *DJANGO_STACK),
    "hotpath_cost": ("frontend/", "qc/", "crowd/", *DJANGO_STACK),
    "scale_out": ("exports/", "qc/", "rationale_metrics/", *DJANGO_STACK),
    "faults": ("frontend/", "qc/", "exports/", "crowd/", *DJANGO_STACK),
}


def scripts_touched_by(changed: list[str], scripts: list[str]) -> list[str]:
    """The scripts whose own file, or anything they exercise, is among `changed` paths."""
    if any(path.startswith(EVERY_SCRIPT_STANDS_ON) for path in changed):
        return scripts
    return [
        script
        for script in scripts
        if any(path.startswith((f"bench/{script}.py", *EXERCISES[script])) for path in changed)
    ]


def changed_since(revision: str) -> list[str]:
    done = subprocess.run(
        ["git", "diff", "--name-only", f"{revision}...HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def _available(script: str) -> str | None:
    """Why `script` cannot run here, or None."""
    need = NEEDS.get(script)
    if need is None:
        return None
    program, what = need
    found = Path(program).exists() if program.startswith("/") else shutil.which(program)
    return None if found else f"needs {what}"


class _Outcome(NamedTuple):
    line: str  # the script's line in the summary
    failure: str | None  # the tail of its output when it failed


def _run(script: str, arguments: list[str], *, require_all: bool) -> _Outcome:
    """Runs `script` at smoke size: its line to print, and what to show if it failed."""
    missing = _available(script)
    if missing:
        line = f"{script:14} {'FAILED' if require_all else 'not run'}: {missing}"
        return _Outcome(line, missing if require_all else None)
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, f"bench/{script}.py", *arguments],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
        )
        code, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        code, output = "timeout", f"{expired.stdout or ''}{expired.stderr or ''}"
    line = f"{script:14} exit {code} in {time.monotonic() - started:.0f} s"
    return _Outcome(line, None if code == 0 else "\n".join(str(output).splitlines()[-25:]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", help=f"some of: {' '.join(SMOKE_RUNS)}")
    parser.add_argument(
        "--faults",
        action="store_true",
        help="also run faults.py's Redis outage (on a redis-server of its own)",
    )
    parser.add_argument(
        "--changed-since",
        metavar="REVISION",
        help="only the scripts that exercise what changed since REVISION (a pull request's base)",
    )
    parser.add_argument(
        "--require-all",
        action="store_true",
        help="a script whose tools are missing fails instead of being passed over (CI)",
    )
    args = parser.parse_args()
    runs = {**SMOKE_RUNS, **(FAULT_RUNS if args.faults else {})}
    unknown = sorted(set(args.scripts) - set(runs))
    if unknown:
        parser.error(f"unknown script(s): {', '.join(unknown)}")
    args.scripts = args.scripts or list(runs)
    if args.changed_since:
        chosen = scripts_touched_by(changed_since(args.changed_since), args.scripts)
        left_out = [script for script in args.scripts if script not in chosen]
        if left_out:
            print(
                f"not run, nothing they exercise changed since {args.changed_since}: {' '.join(left_out)}"
            )
        args.scripts = chosen
    failed: list[tuple[str, str]] = []
    printing = threading.Lock()

    def run_lane(scripts: list[str]) -> None:
        for script in scripts:
            outcome = _run(script, runs[script], require_all=args.require_all)
            with printing:
                print(outcome.line, flush=True)
                if outcome.failure is not None:
                    failed.append((script, outcome.failure))

    chosen = set(args.scripts)
    lanes = [[script for script in lane if script in chosen] for lane in LANES]
    alone = [script for script in args.scripts if not any(script in lane for lane in LANES)]
    threads = [threading.Thread(target=run_lane, args=(lane,)) for lane in lanes if lane]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run_lane(alone)
    for script, tail in failed:
        print(f"\n--- {script} ---\n{tail}")
    print(
        f"\n{len(args.scripts) - len(failed)} of {len(args.scripts)} benchmark scripts ran to the end"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
