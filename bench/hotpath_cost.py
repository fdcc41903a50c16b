"""Instructions per "next item" + "submit" pair, and per request of a crowd arrival,
counted by callgrind: cost figures that, unlike the load bench's milliseconds, do not move
with this machine's speed, checked against the budget in bench/hotpath_budget.json.

    python bench/hotpath_cost.py [--pairs 30] [--arrivals N] [--items 2000]
                                 [--keep DIR] [--write-budget]

Creates the load bench's project (bench/load.py's set-up) and a Prolific study link to it,
then runs one process under `valgrind --tool=callgrind`: production settings on
PostgreSQL and Redis, the WSGI application called in-process (no server, no client),
annotators signed in through sessions made directly (no password hashing). The process
starts as gunicorn's workers do (config/gunicorn.conf.py: the application loaded, then
its objects frozen out of the garbage collector's reach), makes each annotator's first
visit and two crowd arrivals (standing, variant binding, templates compiled), collects
the garbage those left and freezes what they keep, and only then has callgrind count
(instrumentation starts off: Django's start-up under callgrind took minutes). It counts
--pairs "next" + "submit" pairs, then as many bare requests (GET /healthz, answered by
the first middleware), then --arrivals crowd arrivals, each kind of their requests on its
own: the study link's entry (account, session, sign-in), the consent page, the consent
answer, the workspace page (the qualification standing decided) and the first "next"
(the variant bound). Each figure includes the garbage collections its own requests
cause. Only the application's process is counted; PostgreSQL's and Redis's work is not.

Every figure is compared with the budget: a figure more than its tolerance (5 %) above its
budget fails the run (exit 1), naming it. --write-budget records this run's figures as
the new budget instead (after a change that is meant to cost more or less). The smoke
run (bench/smoke.py) counts 20 pairs and 3 arrivals against the same budget: with 3
pairs, a garbage collection more or less moved the pair's figure by 9 %.

Needs valgrind. Two runs agree to within a fraction of a percent (the spans and UUIDs
are random); the load average does not move them.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ANNOTATORS = 20
BUDGET_FILE = ROOT / "bench" / "hotpath_budget.json"
# The figures, in the order the counted process produces them after the pairs.
ARRIVAL_KINDS = ["entry", "consent page", "consent answer", "workspace", "first next"]
FIGURES = ["pair", "bare request", *ARRIVAL_KINDS]
# The counted process says it is ready, then waits for this file before counting.
READY = "ready to count"


def _request(
    application,
    method: str,
    path: str,
    body: bytes | dict | None,
    cookies: dict[str, str],
    *,
    content_type: str = "application/json",
    accept: str = "*/*",
    client: str = "",
):
    """The application's answer to one request: (status, body, headers)."""
    data = json.dumps(body).encode() if isinstance(body, dict) else body or b""
    path, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_COOKIE": "; ".join(f"{name}={value}" for name, value in cookies.items()),
        "HTTP_X_CSRFTOKEN": cookies.get("csrftoken", ""),
        "HTTP_REFERER": "http://127.0.0.1/",
        "HTTP_ACCEPT": accept,
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(data)),
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if client:
        environ["HTTP_X_FORWARDED_FOR"] = client
    started = []
    response = application(
        environ, lambda status, headers, exc_info=None: started.append((status, headers))
    )
    content = b"".join(response)
    response.close()
    status, headers = started[0]
    for name, value in headers:
        if name.lower() == "set-cookie":
            cookie_name, cookie_value = value.split(";", 1)[0].strip().split("=", 1)
            cookies[cookie_name] = cookie_value
    return int(status.split()[0]), content, dict(headers)


def _wait_to_be_counted(flag: Path) -> None:
    """Tells the parent it may switch callgrind's instrumentation on, and waits (busy, so
    that valgrind keeps polling for the parent's command) until it has."""
    print(READY, flush=True)
    while not flag.exists():
        pass


def child(pairs: int, arrivals: int, project_id: int, link_key: str, flag: Path) -> None:
    """Runs under callgrind. Each os.getppid() call marks a boundary: callgrind dumps its
    counts before it (--dump-before=getppid), so the second dump holds exactly the pairs,
    the third the bare requests, then one dump per request of each arrival."""
    from bench.load import PROLIFIC_STUDY, server_env, submit_body

    os.environ.update(server_env())
    # Each participant arrives from an address of its own, as behind nginx (bench/load.py).
    os.environ["CROWD_TRUSTED_PROXIES"] = "1"
    # Work done once per so many seconds of wall time must not be counted per request:
    # under callgrind a request takes about a second, so the lease expiry sweep (at most
    # once per EXPIRY_SWEEP_SECONDS per process) landed in one arrival's "next" in three,
    # and a connection older than CONN_MAX_AGE was reopened mid-count, moving the figures
    # by up to 25 % with the machine's load. Served at 250 requests/s, each is once in
    # thousands of requests. Both still happen once during the warm-up.
    os.environ["DATABASE_CONN_MAX_AGE"] = str(24 * 3600)
    import django

    django.setup()
    from annotate.services.assignments import leasing

    leasing.EXPIRY_SWEEP_SECONDS = 24 * 3600
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )

    from config.wsgi import application

    # As gunicorn's pre_fork does for the preloaded application (config/gunicorn.conf.py).
    gc.freeze()
    store = import_module(settings.SESSION_ENGINE).SessionStore
    cookies = []
    for user in (
        # As many annotators as the pairs use, up to ANNOTATORS: each first visit takes
        # seconds under valgrind.
        get_user_model()
        .objects.filter(username__startswith="load")
        .order_by("pk")[: min(ANNOTATORS, pairs)]
    ):
        session = store()
        session[SESSION_KEY] = str(user.pk)
        # The backend that signs users in (axes' backend, listed first, only counts failures).
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        cookies.append({"sessionid": session.session_key, "csrftoken": "c" * 32})
    rng = random.Random(1)
    next_path = f"/api/projects/{project_id}/assignments/next/"

    def pair(cookie: dict) -> None:
        status, content, _ = _request(application, "POST", next_path, None, cookie)
        lease = json.loads(content)
        if status != 200 or "id" not in lease:
            raise SystemExit(f"next answered {status}: {content[:200]!r}")
        status, content, _ = _request(
            application,
            "POST",
            f"/api/assignments/{lease['id']}/submit/",
            submit_body(lease, rng),
            cookie,
        )
        if status != 201:
            raise SystemExit(f"submit answered {status}: {content[:200]!r}")

    def arrive(n: int, mark) -> None:
        """One Prolific participant's way in, as bench/load.py --crowd makes it."""
        cookie: dict[str, str] = {}
        client = f"2001:db8::{n:x}"
        query = urlencode(
            {"PROLIFIC_PID": f"{n:024x}", "STUDY_ID": PROLIFIC_STUDY, "SESSION_ID": f"s{n:023x}"}
        )
        page = {"accept": "text/html", "client": client}
        status, content, headers = _request(
            application, "GET", f"/crowd/s/{link_key}/?{query}", None, cookie, **page
        )
        consent = headers.get("Location", "")
        if status != 302 or "/consent/" not in consent:
            raise SystemExit(f"the entry answered {status}: {content[:200]!r}")
        mark()
        status, content, _ = _request(application, "GET", consent, None, cookie, **page)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', content)
        if status != 200 or token is None:
            raise SystemExit(f"the consent page answered {status}: {content[:200]!r}")
        mark()
        form = urlencode({"csrfmiddlewaretoken": token.group(1).decode(), "answer": "agree"})
        status, content, headers = _request(
            application,
            "POST",
            consent,
            form.encode(),
            cookie,
            content_type="application/x-www-form-urlencoded",
            **page,
        )
        work = headers.get("Location", "")
        if status != 302 or "/work/" not in work:
            raise SystemExit(f"the consent answer answered {status}: {content[:200]!r}")
        mark()
        status, content, _ = _request(application, "GET", work, None, cookie, **page)
        if status != 200:
            raise SystemExit(f"the workspace answered {status}: {content[:200]!r}")
        mark()
        status, content, _ = _request(application, "POST", next_path, None, cookie, client=client)
        if status != 200 or b'"id"' not in content:
            raise SystemExit(f"the first next answered {status}: {content[:200]!r}")
        mark()

    for cookie in cookies:  # first visits: standing, variant binding; not what is counted
        pair(cookie)
    arrivals_before = 2
    for n in range(arrivals_before):  # the crowd pages' templates compiled, and the like
        arrive(n, lambda: None)
    # The warm-up's garbage collected, and what it left (caches, compiled templates)
    # frozen too: a worker traverses those in a full collection every few hundred
    # requests, and within 30 pairs one either landed or not, moving the pair by 4 %.
    gc.collect()
    gc.freeze()
    _wait_to_be_counted(flag)
    os.getppid()
    for n in range(pairs):
        pair(cookies[n % len(cookies)])
    os.getppid()
    for _ in range(pairs):
        status, _content, _headers = _request(application, "GET", "/healthz", None, {})
        if status != 200:
            raise SystemExit(f"/healthz answered {status}")
    os.getppid()
    for n in range(arrivals):
        arrive(arrivals_before + n, os.getppid)


def _instructions(dump: Path) -> int:
    found = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(errors="replace"), re.M)
    if found is None:
        raise SystemExit(f"{dump}: no instruction total in callgrind's output")
    return int(found.group(1))


def figures_from_dumps(out: Path, pairs: int, arrivals: int) -> dict[str, float]:
    """Instructions per pair, per bare request and per request of each arrival kind, from
    callgrind's numbered dumps (see `child`)."""
    figures = {
        "pair": _instructions(Path(f"{out}.2")) / pairs,
        "bare request": _instructions(Path(f"{out}.3")) / pairs,
    }
    for k, kind in enumerate(ARRIVAL_KINDS):
        dumps = [Path(f"{out}.{4 + n * len(ARRIVAL_KINDS) + k}") for n in range(arrivals)]
        figures[kind] = sum(_instructions(dump) for dump in dumps) / arrivals
    return figures


def budget_read(path: Path = BUDGET_FILE) -> tuple[dict[str, float], float]:
    """The budget's figures (instructions) and its tolerance (a fraction)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: cannot read the budget: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("instructions"), dict):
        raise SystemExit(f'{path}: the budget needs an "instructions" object of figures')
    tolerance = data.get("tolerance", 0.05)
    if not isinstance(tolerance, int | float) or not 0 <= tolerance < 1:
        raise SystemExit(f'{path}: "tolerance" must be a fraction in [0, 1), not {tolerance!r}')
    budget = {}
    for name, value in data["instructions"].items():
        if name not in FIGURES:
            raise SystemExit(f"{path}: instructions.{name}: not a figure ({', '.join(FIGURES)})")
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise SystemExit(f"{path}: instructions.{name}: must be a positive number")
        budget[name] = float(value)
    return budget, float(tolerance)


def budget_overruns(
    figures: dict[str, float], budget: dict[str, float], tolerance: float
) -> list[str]:
    """A line for each figure more than `tolerance` above its budget."""
    return [
        f"{name}: {figures[name] / 1e6:.2f} M instructions, "
        f"{figures[name] / budget[name] - 1:+.1%} against its budget of {budget[name] / 1e6:.2f} M"
        for name in FIGURES
        if name in budget and name in figures and figures[name] > budget[name] * (1 + tolerance)
    ]


def budget_write(figures: dict[str, float], path: Path = BUDGET_FILE) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("tolerance", 0.05)
    data["instructions"] = {name: round(figures[name], -3) for name in FIGURES}
    path.write_text(json.dumps(data, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument(
        "--arrivals",
        type=int,
        help="crowd arrivals counted (default: as many as pairs, at most 10)",
    )
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument(
        "--keep",
        type=Path,
        help="write callgrind's dumps into this folder and keep them (for callgrind_annotate)",
    )
    parser.add_argument(
        "--write-budget",
        action="store_true",
        help=f"record this run's figures as the budget ({BUDGET_FILE.relative_to(ROOT)})",
    )
    # project,link,flag in one value given as --child=...: a study link's key may start with
    # "-" (one in 64 do), which argparse would take for an option as a value of its own.
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arrivals is None:
        args.arrivals = min(args.pairs, 10)
    if args.pairs < 1 or args.arrivals < 1:
        parser.error("--pairs and --arrivals must be at least 1")
    if args.child is not None:
        project_id, link_key, flag = args.child.split(",", 2)
        child(args.pairs, args.arrivals, int(project_id), link_key, Path(flag))
        return
    valgrind = shutil.which("valgrind")
    control = shutil.which("callgrind_control")
    if valgrind is None or control is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    budget, tolerance = budget_read() if not args.write_budget else ({}, 0.05)
    from bench.load import setup_crowd_link, setup_database

    project_id = setup_database(args.items, ANNOTATORS)
    link_key = setup_crowd_link(project_id)
    with tempfile.TemporaryDirectory(prefix="rw-hotpath-") as folder:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
        out = (args.keep or Path(folder)).resolve() / "callgrind.out"
        for old in out.parent.glob(f"{out.name}*"):
            old.unlink()
        flag = Path(folder) / "counting"
        figures = _count(valgrind, control, out, flag, args, project_id, link_key)
    print(f"instructions of the application process (callgrind), {args.pairs} pairs:")
    print(
        f'  "next" + "submit" pair: {figures["pair"] / 1e6:7.2f} M  '
        f"({figures['pair'] / 2e6:.2f} M per request)"
    )
    print(f"  bare request (/healthz): {figures['bare request'] / 1e6:6.2f} M")
    print(
        f"  a request of the pair costs {figures['pair'] / 2 / figures['bare request']:.1f} "
        "bare requests"
    )
    print(f"  a crowd arrival's requests, {args.arrivals} arrivals:")
    for kind in ARRIVAL_KINDS:
        print(f"    {kind:<15} {figures[kind] / 1e6:7.2f} M")
    if args.write_budget:
        budget_write(figures)
        print(f"budget written to {BUDGET_FILE.relative_to(ROOT)}")
        return
    overruns = budget_overruns(figures, budget, tolerance)
    if overruns:
        raise SystemExit(
            f"over the budget ({BUDGET_FILE.relative_to(ROOT)}) by more than {tolerance:.0%}:\n  "
            + "\n  ".join(overruns)
        )
    print(f"within the budget ({BUDGET_FILE.relative_to(ROOT)}, {tolerance:.0%} tolerance)")


def _count(valgrind, control, out, flag, args, project_id, link_key) -> dict[str, float]:
    with (flag.parent / "stderr").open("w+") as errors:
        return _count_into(valgrind, control, out, flag, args, project_id, link_key, errors)


def _count_into(valgrind, control, out, flag, args, project_id, link_key, errors):
    counted = subprocess.Popen(
        [
            valgrind,
            "--tool=callgrind",
            "--instr-atstart=no",
            "--dump-before=getppid",
            f"--callgrind-out-file={out}",
            sys.executable,
            __file__,
            "--pairs",
            str(args.pairs),
            "--arrivals",
            str(args.arrivals),
            f"--child={project_id},{link_key},{flag}",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        stdout=subprocess.PIPE,
        # To a file: valgrind's and Django's warnings must not fill a pipe nobody reads
        # while the parent waits for the ready line.
        stderr=errors,
        text=True,
    )
    ready = counted.stdout.readline().strip()
    if ready == READY:
        switched = subprocess.run(
            [control, "--instr=on", str(counted.pid)], capture_output=True, text=True
        )
        flag.touch()
        if switched.returncode != 0:
            counted.kill()
            raise SystemExit(f"callgrind_control could not start counting:\n{switched.stderr}")
    counted.communicate()
    if counted.returncode != 0 or ready != READY:
        errors.seek(0)
        raise SystemExit(f"the counted process failed:\n{errors.read()[-3000:]}")
    return figures_from_dumps(out, args.pairs, args.arrivals)


if __name__ == "__main__":
    main()
