"""Load benchmark: annotators hammering "next item" and "submit" on gunicorn + PostgreSQL.

    python bench/load.py [--clients 20 50] [--seconds 30] [--items 2000]

Starts the production stack on loopback (gunicorn with config/gunicorn.conf.py, production
settings, a fresh PostgreSQL database), creates a project of --items items of about 100
words, then for each client count runs that many annotator clients for --seconds (each
logs in with a session, then keeps one connection alive; all of them run in one asyncio
process, so the load generator takes little of the machine it measures). Each client
loops: next item, then submit 3 spans. Prints submits/s, p50/p95/p99 of next and submit, error counts, and checks
that every acknowledged submit is stored exactly once. A retry phase then resubmits 10 % of
the acknowledged submits with the same client UUID and checks that nothing is duplicated.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import (
    ProcessCpuSampler,
    free_port,
    recreate_database,
    reference_loop_ms,
    start_gunicorn,
    start_nginx,
)

DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_load"
)
PASSWORD = "load-bench-password"
# A broker and one Celery worker, as in docker-compose.yml; set CELERY_BROKER_URL="" to
# run the checks eagerly inside the web requests instead.
BROKER = "redis://127.0.0.1:6379/9"
WORDS = [
    "the",
    "film",
    "was",
    "a",
    "quiet",
    "and",
    "honest",
    "story",
    "about",
    "loss",
    "with",
    "sharp",
    "dialogue",
    "but",
    "slow",
    "pacing",
]


def setup_database(items: int, users: int) -> int:

    recreate_database(DATABASE_URL)
    os.environ["DATABASE_URL"] = DATABASE_URL
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import connection

    from annotate.models import Document, Item, ItemDocument, Project, ProjectMembership
    from annotate.services import variant_presets_install
    from annotate.tokenization import tokenize_texts

    call_command("migrate", verbosity=0)
    rng = random.Random(1)
    project = Project.objects.create(
        name="load", labels=["neg", "pos"], annotators_per_item=3, min_highlight=1
    )
    texts = [" ".join(rng.choice(WORDS) for _ in range(100)) + " ." for _ in range(items)]
    docs = []
    for n, (text, tokens) in enumerate(
        zip(texts, tokenize_texts(texts, language="en"), strict=True)
    ):
        docs.append(
            Document(
                project=project,
                docid=f"d{n}",
                text=text,
                tokens=tokens.token_offsets,
                sentences=tokens.sentence_ranges,
                token_count=len(tokens.token_offsets),
                text_sha256=str(n),
                tokenizer="bench",
            )
        )
    docs = Document.objects.bulk_create(docs)
    rows = Item.objects.bulk_create(
        [
            Item(project=project, annotation_id=f"i{n}", label="pos", split="train")
            for n in range(items)
        ]
    )
    ItemDocument.objects.bulk_create(
        [ItemDocument(item=i, document=d, position=0) for i, d in zip(rows, docs, strict=True)]
    )
    variant_presets_install(project=project)
    # The checks still run on every submit; blocking is off because these simulated
    # annotators highlight random tokens, and blocking them would end the benchmark.
    from qc.services import quality_policy_update

    quality_policy_update(project=project, auto_block=False)
    hashed = make_password(PASSWORD)
    people = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"load{n}", password=hashed) for n in range(users)]
    )
    ProjectMembership.objects.bulk_create(
        [ProjectMembership(project=project, user=u, role="annotator") for u in people]
    )
    # Statistics for the tables just filled. The tables the run itself fills (assignments,
    # annotations, spans, checks) are left as migrate made them, never analyzed, as in a
    # new deployment: ANALYZEd while empty, PostgreSQL planned their foreign-key checks as
    # sequential scans and kept those plans as the tables grew during the run.
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname FROM pg_stat_user_tables WHERE n_live_tup > 0")
        for (table,) in cursor.fetchall():
            cursor.execute(f'ANALYZE "{table}"')
    return project.pk


# One per run, shared by gunicorn and the worker: production refuses a typed key.
SECRET_KEY = secrets.token_urlsafe(50)


def server_env() -> dict:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": SECRET_KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_HTTPS": "false",  # clients speak plain HTTP to 127.0.0.1
        "DATABASE_URL": DATABASE_URL,
        "CACHE_URL": os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/11"),
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", BROKER),
        "JOB_HEARTBEAT_TIMEOUT_SECONDS": os.environ.get("JOB_HEARTBEAT_TIMEOUT_SECONDS", "120"),
        "DJANGO_MEDIA_ROOT": str(ROOT / "media"),
        "REQUEST_LOG_LEVEL": "WARNING",
        "LOG_LEVEL": "WARNING",
    }


def start_celery_worker(schedule_dir: Path) -> subprocess.Popen | None:
    """The production stack's worker, with beat, which starts the quality checks' sweep
    every QC_CHECK_INTERVAL_SECONDS (docker-compose.yml runs beat as a service of its own;
    one process less here, and the CPU sampler counts both as "celery")."""
    env = server_env()
    if not env["CELERY_BROKER_URL"]:
        return None
    redis_db_flush(env["CELERY_BROKER_URL"])
    # The cache too: the fresh database's ids would meet an earlier run's keys.
    redis_db_flush(env["CACHE_URL"])
    worker = [sys.executable, "-m", "celery", "-A", "config", "worker", "-c", "1", "-l", "WARNING"]
    return subprocess.Popen(
        [*worker, "--beat", "--schedule", str(schedule_dir / "celerybeat-schedule")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def redis_db_flush(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def gunicorn_env(workers: int | None = None, threads: int | None = None) -> dict:
    """The server's environment; workers and threads only when given, else the defaults
    of config/gunicorn.conf.py (or the GUNICORN_* variables already set) apply."""
    env = server_env()
    if workers is not None:
        env["GUNICORN_WORKERS"] = str(workers)
    if threads is not None:
        env["GUNICORN_THREADS"] = str(threads)
    return env


def gunicorn_layout(env: dict) -> str:
    """What config/gunicorn.conf.py makes of this environment, in words."""
    import runpy
    from unittest import mock

    with mock.patch.dict(os.environ, env, clear=True):
        conf = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))
    if conf["worker_class"] == "gthread":
        return f"{conf['workers']} gthread workers x {conf['threads']} threads"
    return f"{conf['workers']} {conf['worker_class']} workers"


def start_server(port: int, workers: int | None = None, threads: int | None = None):
    return start_gunicorn(gunicorn_env(workers, threads), port)


class Client:
    def __init__(self, port: int, username: str):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.reconnects = 0
        self.cookies: dict[str, str] = {}
        for attempt in range(3):  # fifty logins at once can outlast a keep-alive connection
            try:
                self.login(username)
                break
            except (http.client.RemoteDisconnected, ConnectionError):
                self.conn.close()
                if attempt == 2:
                    raise

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ):
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed this kept-alive connection (a gunicorn worker recycled
            # after max_requests): reconnect and send again, as browsers do. Safe here:
            # "next" returns the open lease and a submit carries its client UUID.
            self.reconnects += 1
            self.conn.close()
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
        data = response.read()
        self.last_retry_after = response.headers.get("Retry-After", "")
        for header in response.headers.get_all("Set-Cookie") or []:
            name, value = header.split(";", 1)[0].split("=", 1)
            self.cookies[name] = value
        return response.status, data

    def login(self, username: str) -> None:
        _, page = self.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        body = urlencode(
            {"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD}
        ).encode()
        status, _ = self.request(
            "POST",
            "/accounts/login/",
            body,
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": "http://127.0.0.1/accounts/login/",
            },
        )
        if status != 302:
            raise RuntimeError(f"login failed for {username}: {status}")

    def post_json(self, path: str, payload: dict | None = None):
        body = json.dumps(payload).encode() if payload is not None else b""
        return self.request(
            "POST",
            path,
            body,
            {
                "Content-Type": "application/json",
                "X-CSRFToken": self.cookies.get("csrftoken", ""),
                "Referer": "http://127.0.0.1/",
            },
        )


def login(args) -> dict[str, str]:
    """Log one annotator in (about 0.5 s of the server's CPU: PBKDF2); their cookies."""
    port, username = args
    return Client(port, username).cookies


class AsyncClient:
    """One annotator's kept-alive HTTP/1.1 connection, in the phase's asyncio loop.

    A few lines over asyncio streams rather than an HTTP library: this client runs on the
    machine it measures, and in processes of its own (http.client, one per annotator) it
    took 1.4-1.6 ms of CPU per submit; here about 0.9."""

    def __init__(self, port: int, cookies: dict[str, str]):
        self.port = port
        self.cookies = dict(cookies)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.reconnects = 0

    async def post_json(self, path: str, payload: dict | None = None) -> tuple[int, bytes]:
        body = json.dumps(payload).encode() if payload is not None else b""
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        request = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-CSRFToken: {self.cookies.get('csrftoken', '')}\r\n"
            f"Referer: http://127.0.0.1/\r\nCookie: {cookie}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        try:
            return await self._exchange(request)
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
        ):
            # The server closed this kept-alive connection (nginx's keepalive_requests, a
            # recycled worker): reconnect and send again, as browsers do. Safe here: "next"
            # returns the open lease and a submit carries its client UUID.
            self.reconnects += 1
            self.close()
            return await self._exchange(request)

    async def _exchange(self, request: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(request)
        # The whole head in one read: a readline per header line cost this process a
        # quarter more CPU per request.
        status_line, *header_lines = (
            (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        )
        status = int(status_line.split()[1])
        length, chunked, closing = 0, False, False
        for line in header_lines:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = "chunked" in value.lower()
            elif name == "connection":
                closing = value.lower() == "close"
            elif name == "set-cookie":
                cookie_name, cookie_value = value.split(";", 1)[0].split("=", 1)
                self.cookies[cookie_name] = cookie_value
        if chunked:
            data = b""
            while size := int((await self.reader.readline()).strip(), 16):
                data += await self.reader.readexactly(size)
                await self.reader.readline()
            await self.reader.readline()
        else:
            data = await self.reader.readexactly(length)
        if closing:
            self.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def submit_body(lease: dict, rng: random.Random) -> dict:
    """What an annotator submits for this lease: 3 two-token spans in its first document,
    with a new client UUID."""
    document = lease["item"]["documents"][0]
    starts = sorted(rng.sample(range(0, len(document["tokens"]) - 2, 3), 3))
    spans = [{"docid": document["docid"], "start_token": s, "end_token": s + 2} for s in starts]
    return {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [spans],
        # What a browser reports: people take tens of seconds per item.
        "time_spent_ms": rng.randint(15_000, 60_000),
    }


async def annotate_until(client: AsyncClient, project_id, start_at, seconds, seed) -> dict:
    rng = random.Random(seed)
    out = {
        "next": [],
        "next_at": [],
        "submit": [],
        "submit_at": [],
        "errors": {},
        "acknowledged": [],
        "sent": [],
    }
    deadline = start_at + seconds
    while time.time() < deadline:
        t0 = time.perf_counter()
        status, data = await client.post_json(f"/api/projects/{project_id}/assignments/next/")
        out["next"].append(time.perf_counter() - t0)
        out["next_at"].append(time.time() - start_at)
        if status != 200:
            out["errors"][f"next {status}"] = out["errors"].get(f"next {status}", 0) + 1
            continue
        lease = json.loads(data)
        if "id" not in lease:
            break  # nothing left for this annotator
        body = submit_body(lease, rng)
        t0 = time.perf_counter()
        status, data = await client.post_json(f"/api/assignments/{lease['id']}/submit/", body)
        out["submit"].append(time.perf_counter() - t0)
        out["submit_at"].append(time.time() - start_at)
        if status == 201:
            out["acknowledged"].append(json.loads(data)["annotation_id"])
            out["sent"].append((lease["id"], body))
        else:
            out["errors"][f"submit {status}"] = out["errors"].get(f"submit {status}", 0) + 1
    out["reconnects"] = client.reconnects
    client.close()
    return out


async def run_phase(port, cookies, project_id, start_at, seconds) -> list[dict]:
    """Every logged-in annotator at once, from `start_at` for `seconds`."""
    clients = [AsyncClient(port, c) for c in cookies]
    await asyncio.sleep(max(0.0, start_at - time.time()))
    return await asyncio.gather(
        *(
            annotate_until(client, project_id, start_at, seconds, seed)
            for seed, client in enumerate(clients)
        )
    )


def run_retries(args) -> dict:
    port, username, resend = args
    client = Client(port, username)
    result = {"same": 0, "different": 0, "errors": 0}
    for assignment_id, body, annotation_id in resend:
        status, data = client.post_json(f"/api/assignments/{assignment_id}/submit/", body)
        if status == 200 and json.loads(data)["annotation_id"] == annotation_id:
            result["same"] += 1
        elif status in (200, 201):
            result["different"] += 1
        else:
            result["errors"] += 1
    return result


def latencies_write(path: Path, clients: int, results: list[dict]) -> None:
    new = not path.exists() or clients == 0
    with path.open("a") as out:
        if new:
            out.write("clients,kind,start_s,latency_ms\n")
        for r in results:
            for kind in ("next", "submit"):
                for at, took in zip(r[f"{kind}_at"], r[kind], strict=True):
                    out.write(f"{clients},{kind},{at - took:.4f},{took * 1000:.2f}\n")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] * 1000


def unchecked_annotations() -> int:
    """Stored submissions the quality checks have not reached yet."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM annotate_annotation a WHERE NOT EXISTS "
            "(SELECT 1 FROM qc_submissioncheck c WHERE c.annotation_id = a.id)"
        )
        return cursor.fetchone()[0]


def stored_annotations() -> tuple[int, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*), COUNT(DISTINCT client_uuid) FROM annotate_annotation")
        return cursor.fetchone()


# Where the machine's CPU goes during a phase, by kind of process (first match wins).
CPU_KINDS = {
    "gunicorn": lambda comm, cmd: "gunicorn" in cmd,
    "postgres": lambda comm, cmd: comm.startswith("postgres"),
    "celery": lambda comm, cmd: "celery" in cmd,
    "nginx": lambda comm, cmd: comm == "nginx",
    "redis": lambda comm, cmd: comm.startswith("redis"),
    "clients": lambda comm, cmd: "bench/load.py" in cmd,
}


def cpu_line(used: dict[str, float], submits: int, seconds: float) -> str:
    """CPU milliseconds per acknowledged submit (one next + one submit), by process kind."""
    total = sum(used.values())
    parts = ", ".join(
        f"{kind} {used.get(kind, 0.0) * 1000 / max(submits, 1):.1f}"
        for kind in [*CPU_KINDS, "other"]
    )
    busy = total / (seconds * os.cpu_count()) * 100
    return (
        f"        CPU ms per submit: {parts}; total {total * 1000 / max(submits, 1):.1f} "
        f"({busy:.0f}% of {os.cpu_count()} cores)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument(
        "--workers", type=int, help="gunicorn workers (default: config/gunicorn.conf.py's)"
    )
    parser.add_argument(
        "--threads", type=int, help="threads per worker, for GUNICORN_WORKER_CLASS=gthread"
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="clients talk to gunicorn itself, not through nginx as in docker-compose.yml",
    )
    parser.add_argument("--nginx", default=os.environ.get("RW_NGINX", "/usr/sbin/nginx"))
    parser.add_argument(
        "--latencies",
        type=Path,
        help="write every request's phase, kind, start (s into the phase) and latency (ms) "
        "to this CSV file",
    )
    args = parser.parse_args()
    speed_before = reference_loop_ms()
    users = sum(args.clients)
    project_id = setup_database(args.items, users)
    app_port = free_port()
    server = start_server(app_port, args.workers, args.threads)
    proxy = None
    port = app_port
    if not args.direct:
        port = free_port()
        proxy_dir = Path(tempfile.mkdtemp(prefix="rw-load-nginx-"))
        proxy = start_nginx(Path(args.nginx), proxy_dir, port, app_port)
    beat_dir = Path(tempfile.mkdtemp(prefix="rw-load-beat-"))
    celery_worker = start_celery_worker(beat_dir)
    broker = server_env()["CELERY_BROKER_URL"]
    print(
        ("clients -> gunicorn" if args.direct else "clients -> nginx -> gunicorn")
        + f": {gunicorn_layout(gunicorn_env(args.workers, args.threads))} on PostgreSQL; "
        + f"{args.items} items of ~100 words; "
        + (
            "quality checks on 1 Celery worker with beat via " + broker
            if broker
            else "quality checks eager, inside the requests"
        )
    )
    print(
        f"{'clients':>7} {'submits':>8} {'submits/s':>10} {'next p50/p95/p99 ms':>22} {'submit p50/p95/p99 ms':>24} {'errors':>8} {'lost':>5} {'dups':>5}"
    )
    sampler = ProcessCpuSampler(CPU_KINDS).start()
    try:
        first_user = 0
        all_sent = []
        for clients in args.clients:
            # Every client logs in first, before the measured phase: a login costs a
            # deliberately slow password hash, which is not what submits/s should measure.
            usernames = [f"load{first_user + i}" for i in range(clients)]
            first_user += clients
            with multiprocessing.Pool(min(clients, 2 * (os.cpu_count() or 1))) as pool:
                cookies = pool.map(login, [(port, u) for u in usernames])
            before, _ = stored_annotations()
            start_at = time.time() + 1
            results = asyncio.run(run_phase(port, cookies, project_id, start_at, args.seconds))
            elapsed = args.seconds
            reconnects = sum(r.get("reconnects", 0) for r in results)
            if reconnects:
                print(
                    f"note: {reconnects} request(s) resent after the server closed a kept-alive connection"
                )
            nexts = [x for r in results for x in r["next"]]
            submits = [x for r in results for x in r["submit"]]
            acknowledged = [a for r in results for a in r["acknowledged"]]
            errors: dict[str, int] = {}
            for r in results:
                for k, v in r["errors"].items():
                    errors[k] = errors.get(k, 0) + v
            after, distinct = stored_annotations()
            unchecked = unchecked_annotations()
            lost = len(acknowledged) - (after - before)
            duplicates = after - distinct + (len(acknowledged) - len(set(acknowledged)))
            for username, r in zip(usernames, results, strict=True):
                all_sent += [
                    (username, a, b, ann)
                    for (a, b), ann in zip(r["sent"], r["acknowledged"], strict=True)
                ]
            print(
                f"{clients:>7} {len(acknowledged):>8} {len(acknowledged) / elapsed:>10.1f} "
                f"{percentile(nexts, 0.5):>6.0f}/{percentile(nexts, 0.95):>5.0f}/{percentile(nexts, 0.99):>5.0f}      "
                f"{percentile(submits, 0.5):>7.0f}/{percentile(submits, 0.95):>5.0f}/{percentile(submits, 0.99):>5.0f}       "
                f"{sum(errors.values()):>5} {lost:>5} {duplicates:>5}  {errors or ''}"
            )
            if args.latencies:
                latencies_write(args.latencies, clients, results)
            time.sleep(2 * sampler.interval)  # a reading after the phase's end
            used = sampler.window(start_at, start_at + args.seconds)
            print(cpu_line(used, len(acknowledged), args.seconds))
            if celery_worker is not None:
                print(
                    f"        quality checks: {after - unchecked} of {after} stored submissions "
                    f"checked when the phase ended"
                )
            print(
                f"        machine speed: a fixed Python loop took {reference_loop_ms():.0f} ms "
                f"after the phase ({speed_before:.0f} ms before the run; lower is faster)"
            )
        resend = random.Random(2).sample(all_sent, max(1, len(all_sent) // 10))
        by_user: dict[str, list] = {}
        for username, assignment_id, body, annotation_id in resend:
            by_user.setdefault(username, []).append((assignment_id, body, annotation_id))
        before, _ = stored_annotations()
        with multiprocessing.Pool(min(20, len(by_user))) as pool:
            retried = pool.map(run_retries, [(port, u, items) for u, items in by_user.items()])
        after, distinct = stored_annotations()
        same = sum(r["same"] for r in retried)
        print(
            f"retries: {len(resend)} resubmitted with their client UUID: {same} returned the same annotation, "
            f"{sum(r['different'] for r in retried)} a different one, {sum(r['errors'] for r in retried)} errors; "
            f"stored annotations {before} -> {after} ({after - distinct} duplicates)"
        )
        if celery_worker is not None:
            print(
                f"quality checks: {unchecked_annotations()} stored submissions unchecked at the end"
            )
    finally:
        sampler.stop()
        if proxy is not None:
            os.killpg(proxy.pid, signal.SIGTERM)
            proxy.wait(timeout=30)
            shutil.rmtree(proxy_dir, ignore_errors=True)
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        if celery_worker is not None:
            os.killpg(celery_worker.pid, signal.SIGTERM)
            celery_worker.wait(timeout=30)
        shutil.rmtree(beat_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
