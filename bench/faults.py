"""Fault scenarios against the production stack on loopback. Not part of CI.

    python bench/faults.py [--outage-seconds 5] [--only database redis killed-worker]
                            [--catch-up-seconds 60]

The stack (gunicorn with production settings, a Celery worker with beat) uses a Redis of
the bench's own: a redis-server started on a free port of 6391-6395 with nothing on disk,
as broker, result backend and cache. The machine's Redis is never touched.

1. Database outage: annotator clients loop next/submit while PostgreSQL is stopped for a
   few seconds (pg_ctlcluster, so run it as root on a machine whose database you may stop;
   leave it out with --only on a shared machine). Prints, second by second, the status
   codes answered; then checks that every submit acknowledged before, during or after the
   outage is stored exactly once.
2. Redis outage: the same clients (who also open their workspace page, and one signs in
   again now and then), an admin starting a small import every 2 s (which needs the
   broker), and the Celery worker and beat running the quality checks, while the bench's
   own Redis (broker, result backend and cache) is stopped for a few seconds. Prints the requests answered during the outage by outcome (ok, 503 with
   Retry-After, other errors), the latency percentiles before, during and after, that
   every acknowledged submit is stored once, and how many submissions are still unchecked
   a minute after Redis is back (the quality checks' sweep catches up).
3. Worker killed: a large import is sent to a real Celery worker, which is SIGKILLed
   during the write; prints what the job and the database show afterwards.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# A database of this script's own, so a run of bench/load.py is not dropped under it.
os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_faults")

from bench.common import free_port
from bench.load import (
    DATABASE_URL,
    PASSWORD,
    Client,
    percentile,
    setup_database,
    start_celery_worker,
    start_server,
    stored_annotations,
)

REDIS_SERVER = os.environ.get("RW_REDIS_SERVER", "/usr/bin/redis-server")
REDIS_PORTS = range(6391, 6396)
SCENARIOS = ("database", "redis", "killed-worker")
ANNOTATORS = 8  # load0 ... load7
ADMIN = 9  # load9, the project's admin, who starts imports


def pg_cluster(action: str) -> None:
    version = sorted(os.listdir("/etc/postgresql"))[-1]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action], check=True
    )


class PrivateRedis:
    """A redis-server of the bench's own on 127.0.0.1:`port`, keeping nothing on disk (no
    snapshots, no append-only file, its folder a temporary one), which the Redis scenario
    stops and starts; nothing else uses it."""

    def __init__(self, port: int):
        self.port = port
        self.folder = Path(tempfile.mkdtemp(prefix="rw-faults-redis-"))
        self.process: subprocess.Popen | None = None

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
                "--logfile",
                str(self.folder / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        import redis

        probe = redis.Redis(port=self.port, socket_connect_timeout=1)
        for _ in range(100):
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"redis-server on port {self.port} exited with {self.process.returncode}"
                )
            try:
                probe.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError(f"redis-server on port {self.port} did not answer PING")

    def stop(self) -> None:
        """SIGTERM, as a service manager stops it; with nothing to save it exits at once."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def private_redis_start() -> PrivateRedis:
    """The bench's own Redis on the first free port of REDIS_PORTS."""
    import socket

    if not Path(REDIS_SERVER).exists():
        raise SystemExit(f"needs {REDIS_SERVER} (Debian package redis-server)")
    for port in REDIS_PORTS:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                continue  # taken
        server = PrivateRedis(port)
        server.start()
        return server
    raise SystemExit(
        f"no free port for a private Redis in {REDIS_PORTS.start}-{REDIS_PORTS.stop - 1}"
    )


@dataclass
class Answer:
    kind: str  # next, submit, page, sign-in
    started: float  # seconds since the scenario began
    took: float  # seconds
    status: int  # 0: the connection failed
    retry_after: str


def outage(port: int, project_id: int, seconds: int, stop, start, service: str) -> dict:
    """Annotator clients loop "next" and "submit" (and now and then open their workspace
    page, one of them signing in again) while `service` is stopped for `seconds` by
    `stop()` and brought back by `start()`; returns what the clients saw."""
    answers: list[Answer] = []
    acknowledged: list[int] = []
    lock = threading.Lock()

    def timed(kind: str, call, *args) -> tuple[int, bytes]:
        """call(*args), recorded as an answer of `kind` (status 0: the connection failed)."""
        t0 = time.time()
        try:
            status, data = call(*args)
            retry_after = client_retry_after()
        except (OSError, http.client.HTTPException):
            status, data, retry_after = 0, b"", ""
        with lock:
            answers.append(Answer(kind, t0 - began, time.time() - t0, status, retry_after))
        return status, data

    local = threading.local()

    def client_retry_after() -> str:
        return local.client.last_retry_after

    def client_loop(n: int, client: Client) -> None:
        local.client = client
        cycle = 0
        while time.time() < stop_at:
            cycle += 1
            if cycle % 5 == 0:
                timed("page", local.client.request, "GET", f"/projects/{project_id}/annotate/")
            if n == 0 and cycle % 4 == 0:
                signed_in = timed("sign-in", sign_in_again, n)
                if signed_in[0] != 302:
                    time.sleep(0.5)
            status, data = timed(
                "next", local.client.post_json, f"/api/projects/{project_id}/assignments/next/"
            )
            if status == 0:
                local.client = connect(n)
                continue
            if status != 200:
                time.sleep(0.5)
                continue
            lease = json.loads(data)
            if "id" not in lease:
                time.sleep(0.5)
                continue
            doc = lease["item"]["documents"][0]
            body = {
                "client_uuid": str(uuid.uuid4()),
                "rationale_sets": [[{"docid": doc["docid"], "start_token": 0, "end_token": 2}]],
            }
            for _attempt in range(40):  # the same submission until it is answered
                status, data = timed(
                    "submit",
                    local.client.post_json,
                    f"/api/assignments/{lease['id']}/submit/",
                    body,
                )
                if status == 0:
                    local.client = connect(n)
                    continue
                if status in (200, 201):
                    with lock:
                        acknowledged.append(json.loads(data)["annotation_id"])
                    break
                if status < 500:
                    break  # refused for good (409: the lease went elsewhere)
                time.sleep(0.5)

    def importer_loop(client: Client) -> None:
        """An admin starting a small import every 2 s: a request that needs the broker."""
        local.client = client
        while time.time() < stop_at:
            row = {"id": f"outage-{uuid.uuid4().hex[:8]}", "text": "a short text .", "label": "pos"}
            timed("import", import_post, client, project_id, "row.jsonl", json.dumps(row).encode())
            time.sleep(2)

    def sign_in_again(n: int) -> tuple[int, bytes]:
        """The sign-in form fetched and posted again on this client's connection: the
        POST's status (302 when signed in), or the form's when it could not be fetched."""
        status, page = local.client.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        if status != 200 or token is None:
            return status, page
        body = urlencode(
            {
                "csrfmiddlewaretoken": token.group(1).decode(),
                "username": f"load{n}",
                "password": PASSWORD,
            }
        ).encode()
        return local.client.request(
            "POST",
            "/accounts/login/",
            body,
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": "http://127.0.0.1/accounts/login/",
            },
        )

    def connect(n: int) -> Client:
        while True:
            try:
                return Client(port, f"load{n}")
            except Exception:
                time.sleep(0.5)

    before, _ = stored_annotations()
    # Every client signs in before the clock starts: a sign-in costs a deliberately slow
    # password hash, and eight at once took longer than the 5 s before the outage.
    clients = [connect(n) for n in range(ANNOTATORS)]
    began = time.time()
    stop_at = began + 5 + seconds + 14
    threads = [
        threading.Thread(target=client_loop, args=(n, client)) for n, client in enumerate(clients)
    ]
    threads.append(threading.Thread(target=importer_loop, args=(connect(ADMIN),)))
    for thread in threads:
        thread.start()
    time.sleep(5)
    stopped_at = time.time() - began
    print(f"  t={stopped_at:.1f}s: stopping {service}")
    stop()
    time.sleep(seconds)
    start()
    back_at = time.time() - began
    print(f"  t={back_at:.1f}s: {service} answers again")
    for thread in threads:
        thread.join()
    back_epoch = began + back_at
    from django.db import connection

    connection.close()
    after, distinct = stored_annotations()
    unique = len(set(acknowledged))
    report = outage_report(answers, stopped_at, back_at)
    print(report)
    duplicates, lost = after - distinct, unique - (after - before)
    print(
        f"  acknowledged submits: {len(acknowledged)} ({unique} distinct annotations); "
        f"stored: {after - before}; duplicates: {duplicates}; lost: {lost}"
    )
    return {
        "answers": answers,
        "during": [a for a in answers if stopped_at <= a.started < back_at],
        "duplicates": duplicates,
        "lost": lost,
        "back_at": back_epoch,
    }


def outage_report(answers: list[Answer], stopped_at: float, back_at: float) -> str:
    """Requests by phase (before, during, after the outage, by when they started) and
    outcome, with latency percentiles, and the Retry-After values of the 503s."""
    phases = {
        "before": lambda a: a.started < stopped_at,
        "during": lambda a: stopped_at <= a.started < back_at,
        "after": lambda a: a.started >= back_at,
    }
    lines = []
    for phase, within in phases.items():
        chosen = [a for a in answers if within(a)]
        ok = sum(1 for a in chosen if 200 <= a.status < 400)
        unavailable = [a for a in chosen if a.status == 503]
        with_retry = sum(1 for a in unavailable if a.retry_after)
        refused = collections.Counter(a.status for a in chosen if 400 <= a.status < 500)
        other = collections.Counter(
            a.status for a in chosen if a.status == 0 or (a.status >= 500 and a.status != 503)
        )
        took = [a.took for a in chosen]
        lines.append(
            f"  {phase:>6}: {len(chosen):>5} requests: ok {ok}, 503 with Retry-After "
            f"{with_retry}, 503 without {len(unavailable) - with_retry}, "
            f"refused {dict(refused) or 0}, other errors {dict(other) or 0} "
            f"(0 = connection failed); latency p50 {percentile(took, 0.5):.0f} ms, "
            f"p99 {percentile(took, 0.99):.0f} ms"
        )
        kinds = collections.Counter((a.kind, a.status) for a in chosen)
        lines.append(
            "          by kind: "
            + ", ".join(f"{kind} {status} x{n}" for (kind, status), n in sorted(kinds.items()))
        )
    retry_after = sorted({a.retry_after for a in answers if a.status == 503})
    lines.append(f"  Retry-After values of the 503s: {retry_after or 'none'}")
    return "\n".join(lines)


def unchecked_submissions() -> int:
    from django.db import connection

    from annotate.models import Annotation

    connection.close()
    return Annotation.objects.filter(submission_check__isnull=True).count()


def import_jobs_by_status() -> dict[str, int]:
    from django.db import connection
    from django.db.models import Count

    from annotate.models import ImportJob

    connection.close()
    rows = ImportJob.objects.values("status").annotate(n=Count("id"))
    return {row["status"]: row["n"] for row in rows}


def redis_outage(
    port: int, project_id: int, seconds: int, redis_server: PrivateRedis, catch_up_seconds: int
) -> list[str]:
    """The Redis scenario; what went wrong, if anything."""
    beat_dir = Path(tempfile.mkdtemp(prefix="rw-faults-beat-"))
    worker = start_celery_worker(beat_dir)
    try:
        seen = outage(
            port,
            project_id,
            seconds,
            redis_server.stop,
            redis_server.start,
            service=f"Redis (the bench's own, port {redis_server.port})",
        )
        wait_until = seen["back_at"] + catch_up_seconds
        all_checked_after = None
        while time.time() < wait_until:
            if not unchecked_submissions() and all_checked_after is None:
                all_checked_after = time.time() - seen["back_at"]
            time.sleep(1)
        left = unchecked_submissions()
        print(
            f"  unchecked submissions {catch_up_seconds} s after Redis returned: {left}"
            + (
                f" (none left {all_checked_after:.0f} s after it returned)"
                if all_checked_after is not None
                else ""
            )
        )
        jobs = import_jobs_by_status()
        print(
            "  imports started: "
            + ", ".join(f"{status} {n}" for status, n in sorted(jobs.items()))
            + " (failed: refused with 503 while the broker was away, marked so on the row)"
        )
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
        shutil.rmtree(beat_dir, ignore_errors=True)
    unfinished = jobs.get("pending", 0) + jobs.get("running", 0)
    failed = [
        a
        for a in seen["answers"]
        if a.status == 0 or (a.status >= 500 and not (a.status == 503 and a.retry_after))
    ]
    problems = [
        *([f"{len(failed)} requests failed without a 503 and Retry-After"] if failed else []),
        *([f"{seen['lost']} acknowledged submits lost"] if seen["lost"] else []),
        *([f"{seen['duplicates']} submits stored twice"] if seen["duplicates"] else []),
        *([f"{left} submissions unchecked"] if left else []),
        *([f"{unfinished} imports never finished"] if unfinished else []),
    ]
    if not any(a.kind == "submit" and a.status == 201 for a in seen["during"]):
        problems.append("no submit was acknowledged during the outage")
    print(f"  verdict: {'; '.join(problems) if problems else 'as it should be'}")
    return problems


def import_post(client: Client, project_id: int, filename: str, payload: bytes):
    """Upload `payload` to the project's import API as `filename`: (status, body)."""
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        + payload
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return client.request(
        "POST",
        f"/api/projects/{project_id}/imports/",
        body,
        {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-CSRFToken": client.cookies.get("csrftoken", ""),
            "Referer": "http://127.0.0.1/",
        },
    )


def killed_worker(port: int, project_id: int, env: dict) -> None:
    from django.db import connection

    from annotate.models import ImportJob, Item, ProjectMembership
    from tests.annotate.test_worker_killed import big_jsonl

    connection.close()
    ProjectMembership.objects.get_or_create(project_id=project_id, user_id=1, role="admin")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "-l", "WARNING"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    time.sleep(6)
    client = Client(port, "load0")
    _status, data = import_post(client, project_id, "big.jsonl", big_jsonl(30000))
    job_id = json.loads(data)["id"]
    items_before = Item.objects.filter(project_id=project_id).count()
    # Killed while it works: tokenizing its chunks (raw texts are split into chunks) or
    # writing them; a job that never gets there is a failure of its own, not a wait forever.
    deadline = time.monotonic() + 600
    while True:
        _, data = client.request("GET", f"/api/projects/{project_id}/imports/{job_id}/")
        job = json.loads(data)
        phase = job["progress"].get("phase")
        if job["status"] == "running" and phase in {"tokenizing", "writing"}:
            break
        if job["status"] in {"succeeded", "failed"} or time.monotonic() > deadline:
            os.killpg(worker.pid, signal.SIGKILL)
            raise SystemExit(f"the import never reached its work phases: {job}")
        time.sleep(0.05)
    print(f"  job {job_id} is {phase} ({job['progress']}); killing the worker with SIGKILL")
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    print(
        f"  items in the project: {Item.objects.filter(project_id=project_id).count()} (before the import: {items_before})"
    )
    time.sleep(int(env["JOB_HEARTBEAT_TIMEOUT_SECONDS"]) + 1)
    client = Client(port, "load0")  # the idle keep-alive connection has been closed
    _, data = client.request("GET", f"/api/projects/{project_id}/imports/{job_id}/")
    job = json.loads(data)
    print(
        f"  after {env['JOB_HEARTBEAT_TIMEOUT_SECONDS']} s without a heartbeat the job reads: {job['status']}: {job['error']}"
    )
    print(f"  job row: {ImportJob.objects.get(pk=job_id).status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outage-seconds", type=int, default=5)
    parser.add_argument(
        "--only",
        choices=SCENARIOS,
        nargs="+",
        default=list(SCENARIOS),
        help="run only these scenarios ('database' stops the machine's PostgreSQL)",
    )
    parser.add_argument(
        "--catch-up-seconds",
        type=int,
        default=60,
        help="after Redis returns, count the unchecked submissions this much later",
    )
    args = parser.parse_args()
    redis_server = private_redis_start()
    try:
        problems = run_scenarios(
            args.only, args.outage_seconds, args.catch_up_seconds, redis_server
        )
    finally:
        redis_server.close()
    sys.exit(1 if problems else 0)


def run_scenarios(
    scenarios: list[str], outage_seconds: int, catch_up_seconds: int, redis_server: PrivateRedis
) -> list[str]:
    """Run `scenarios` on a fresh stack; what went wrong in those that check themselves."""
    problems: list[str] = []
    project_id = setup_database(items=300, users=10)
    # Admins of the load-bench project: load0 for the import a worker is killed in, and
    # load{ADMIN} for the imports started during the Redis outage.
    from django.contrib.auth import get_user_model

    from annotate.models import ProjectMembership

    for username in ("load0", f"load{ADMIN}"):
        ProjectMembership.objects.get_or_create(
            project_id=project_id,
            user=get_user_model().objects.get(username=username),
            role="admin",
        )
    # Broker, result backend (the broker's, config/settings/base.py) and cache: the
    # bench's own Redis, for gunicorn, the worker and this process alike.
    os.environ["CELERY_BROKER_URL"] = redis_server.url(0)
    os.environ["BENCH_CACHE_URL"] = redis_server.url(1)
    os.environ["JOB_HEARTBEAT_TIMEOUT_SECONDS"] = "5"
    port = free_port()
    server = start_server(port)
    env = {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "CACHE_URL": redis_server.url(1),
        "JOB_HEARTBEAT_TIMEOUT_SECONDS": "5",
        "DJANGO_MEDIA_ROOT": str(ROOT / "media"),
    }
    try:
        if "database" in scenarios:
            print(f"database outage of {outage_seconds} s under 8 annotator clients")
            outage(
                port,
                project_id,
                outage_seconds,
                lambda: pg_cluster("stop"),
                lambda: pg_cluster("start"),
                service="PostgreSQL",
            )
        if "redis" in scenarios:
            print(
                f"Redis (broker, result backend and cache) outage of {outage_seconds} s "
                "under 8 annotator clients"
            )
            problems += redis_outage(
                port, project_id, outage_seconds, redis_server, catch_up_seconds
            )
        if "killed-worker" in scenarios:
            print("a Celery worker killed during an import")
            killed_worker(port, project_id, env)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return problems


if __name__ == "__main__":
    main()
