"""Instructions per "next item" + "submit" pair, counted by callgrind: a cost figure that,
unlike the load bench's milliseconds, does not move with this machine's speed.

    python bench/hotpath_cost.py [--pairs 30] [--items 2000]

Creates the load bench's project (bench/load.py's set-up), then runs one process under
`valgrind --tool=callgrind`: production settings on PostgreSQL and Redis, the WSGI
application called in-process (no server, no client), annotators signed in through
sessions made directly (no password hashing). After each annotator's first visit it
runs --pairs "next" + "submit" pairs, then as many bare requests (GET /healthz: every
middleware, no session, no query), and prints the instructions of each: what the pair
costs, and how far above the framework's floor. Only the application's process is
counted; PostgreSQL's and Redis's work is not. Two runs agree to within a fraction of a
percent (the spans and UUIDs are random). Needs valgrind; takes a few minutes. Not part
of CI.

On the machine whose speed drifts by 2x (see bench/load.py), a change to the hot path
can be judged with this before the load bench can resolve it.
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ANNOTATORS = 20


def _request(application, method: str, path: str, body: dict | None, cookie: str):
    data = json.dumps(body).encode() if body is not None else b""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_COOKIE": cookie,
        "HTTP_X_CSRFTOKEN": "c" * 32,
        "HTTP_REFERER": "http://127.0.0.1/",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(data)),
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    statuses = []
    response = application(environ, lambda status, headers, exc_info=None: statuses.append(status))
    content = b"".join(response)
    response.close()
    return int(statuses[0].split()[0]), content


def child(pairs: int, project_id: int) -> None:
    """Runs under callgrind. Each os.getppid() call marks a boundary: callgrind dumps its
    counts before it (--dump-before=getppid), so the second dump holds exactly the pairs
    and the third exactly the bare requests."""
    from bench.load import server_env, submit_body

    os.environ.update(server_env())
    import django

    django.setup()
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )

    from config.wsgi import application

    store = import_module(settings.SESSION_ENGINE).SessionStore
    cookies = []
    for user in (
        get_user_model().objects.filter(username__startswith="load").order_by("pk")[:ANNOTATORS]
    ):
        session = store()
        session[SESSION_KEY] = str(user.pk)
        # The backend that signs users in (axes' backend, listed first, only counts failures).
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        cookies.append(f"sessionid={session.session_key}; csrftoken={'c' * 32}")
    rng = random.Random(1)

    def pair(cookie: str) -> None:
        status, content = _request(
            application, "POST", f"/api/projects/{project_id}/assignments/next/", None, cookie
        )
        lease = json.loads(content)
        if status != 200 or "id" not in lease:
            raise SystemExit(f"next answered {status}: {content[:200]!r}")
        status, content = _request(
            application,
            "POST",
            f"/api/assignments/{lease['id']}/submit/",
            submit_body(lease, rng),
            cookie,
        )
        if status != 201:
            raise SystemExit(f"submit answered {status}: {content[:200]!r}")

    for cookie in cookies:  # first visits: standing, variant binding; not what is counted
        pair(cookie)
    os.getppid()
    for n in range(pairs):
        pair(cookies[n % len(cookies)])
    os.getppid()
    for _ in range(pairs):
        status, _content = _request(application, "GET", "/healthz", None, "")
        if status != 200:
            raise SystemExit(f"/healthz answered {status}")
    os.getppid()


def _instructions(dump: Path) -> int:
    found = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(errors="replace"), re.M)
    if found is None:
        raise SystemExit(f"{dump}: no instruction total in callgrind's output")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)  # the project id
    args = parser.parse_args()
    if args.child is not None:
        child(args.pairs, args.child)
        return
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    from bench.load import setup_database

    project_id = setup_database(args.items, ANNOTATORS)
    with tempfile.TemporaryDirectory(prefix="rw-hotpath-") as folder:
        out = Path(folder) / "callgrind.out"
        run = subprocess.run(
            [
                valgrind,
                "--tool=callgrind",
                "--dump-before=getppid",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--pairs",
                str(args.pairs),
                "--child",
                str(project_id),
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise SystemExit(f"the counted process failed:\n{run.stderr[-3000:]}")
        pair = _instructions(Path(f"{out}.2")) / args.pairs
        bare = _instructions(Path(f"{out}.3")) / args.pairs
    print(f"instructions of the application process (callgrind), {args.pairs} of each:")
    print(f'  "next" + "submit" pair: {pair / 1e6:7.2f} M  ({pair / 2e6:.2f} M per request)')
    print(f"  bare request (/healthz): {bare / 1e6:6.2f} M")
    print(f"  a request of the pair costs {pair / 2 / bare:.1f} bare requests")


if __name__ == "__main__":
    main()
