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
        self.extra_headers = ""  # whole header lines, each ending in CRLF
        self.location = ""  # of the last redirect

    async def post_json(self, path: str, payload: dict | None = None) -> tuple[int, bytes]:
        body = json.dumps(payload).encode() if payload is not None else b""
        return await self.send("POST", path, body, "application/json")

    async def send(
        self, method: str, path: str, body: bytes = b"", content_type: str = ""
    ) -> tuple[int, bytes]:
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        request = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + (f"Content-Type: {content_type}\r\n" if content_type else "")
            + f"X-CSRFToken: {self.cookies.get('csrftoken', '')}\r\n"
            f"Referer: http://127.0.0.1/\r\nCookie: {cookie}\r\n{self.extra_headers}"
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
            elif name == "location":
                self.location = value
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


# ---------------------------------------------------------------- a crowd launch

# The kinds of request of a crowd annotator, in the order they first make them.
CROWD_KINDS = [
    "entry",  # the study link with the platform's ids: account, session, variant bound
    "consent page",
    "consent answer",
    "workspace",  # the first visit: the qualification standing decided, the page rendered
    "first next",
    "next",
    "submit",
]
PROLIFIC_STUDY = "5f0c0ffee0ddba11c0ffee00"


def setup_crowd_link(project_id: int) -> str:
    """A Prolific study link to the project, variant left to the allocation (permuted
    blocks over the 7 preset variants); its key."""
    from django.contrib.auth import get_user_model

    from annotate.models import Project
    from crowd.services import study_link_create

    admin = get_user_model().objects.create_user(username="crowd-admin", is_staff=True)
    link = study_link_create(
        project=Project.objects.get(pk=project_id),
        acting_user=admin,
        name="crowd launch",
        platform="prolific",
        consent_text="I agree to take part.",
        # More than anyone does in 3 minutes: nobody finishes and leaves early.
        items_required=100,
        completion_code="C0MPLETE",
        currency="GBP",
    )
    return link.key


class CrowdRecord:
    """What one simulated crowd annotator saw: latencies by kind, errors, acknowledged
    submits."""

    def __init__(self):
        self.latencies: dict[str, list[float]] = {kind: [] for kind in CROWD_KINDS}
        self.errors: dict[str, int] = {}
        self.acknowledged: list[int] = []
        self.session_id: int | None = None

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


async def _timed(record: CrowdRecord, kind: str, request) -> tuple[int, bytes]:
    t0 = time.perf_counter()
    status, data = await request
    record.latencies[kind].append(time.perf_counter() - t0)
    return status, data


def _same_origin_path(location: str) -> str:
    """A redirect's path (Django sends them relative, but a full URL is fine too)."""
    return "/" + location.split("://", 1)[-1].split("/", 1)[-1] if "://" in location else location


async def crowd_annotator(
    port: int, project_id: int, link_key: str, n: int, arrive_at: float, args
) -> CrowdRecord:
    """One Prolific participant: arrives through the study link at `arrive_at`, consents,
    opens the workspace and asks for an item, then works for --crowd-work-seconds,
    thinking --think seconds before each submit. The connection is dropped during each
    think, as a browser's idles out behind nginx's keepalive_timeout."""
    rng = random.Random(10_000 + n)
    record = CrowdRecord()
    client = AsyncClient(port, {})
    # Each participant comes from an address of their own (documentation prefix, never
    # reached: it is only a header); the bench trusts one more proxy hop to read it.
    client.extra_headers = f"X-Forwarded-For: 2001:db8::{n:x}\r\n"
    await asyncio.sleep(max(0.0, arrive_at - time.time()))
    query = urlencode(
        {"PROLIFIC_PID": f"{n:024x}", "STUDY_ID": PROLIFIC_STUDY, "SESSION_ID": f"s{n:023x}"}
    )
    try:
        status, _ = await _timed(
            record, "entry", client.send("GET", f"/crowd/s/{link_key}/?{query}")
        )
        if status != 302 or "/consent/" not in client.location:
            record.error(f"entry {status}")
            return record
        consent_path = _same_origin_path(client.location)
        record.session_id = int(consent_path.strip("/").split("/")[-2])
        status, page = await _timed(record, "consent page", client.send("GET", consent_path))
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        if status != 200 or token is None:
            record.error(f"consent page {status}")
            return record
        form = urlencode({"csrfmiddlewaretoken": token.group(1).decode(), "answer": "agree"})
        status, _ = await _timed(
            record,
            "consent answer",
            client.send("POST", consent_path, form.encode(), "application/x-www-form-urlencoded"),
        )
        if status != 302 or "/work/" not in client.location:
            record.error(f"consent answer {status}")
            return record
        status, _ = await _timed(
            record, "workspace", client.send("GET", _same_origin_path(client.location))
        )
        if status != 200:
            record.error(f"workspace {status}")
            return record
        next_path = f"/api/projects/{project_id}/assignments/next/"
        status, data = await _timed(record, "first next", client.post_json(next_path))
        work_until = time.time() + args.crowd_work_seconds
        while True:
            if status != 200:
                record.error(f"next {status}")
                return record
            lease = json.loads(data)
            if "id" not in lease:
                record.error("next: no item left")
                return record
            client.close()
            await asyncio.sleep(rng.uniform(*args.think))
            body = submit_body(lease, rng)
            status, data = await _timed(
                record,
                "submit",
                client.post_json(f"/api/assignments/{lease['id']}/submit/", body),
            )
            if status == 201:
                record.acknowledged.append(json.loads(data)["annotation_id"])
            else:
                record.error(f"submit {status}")
            if time.time() >= work_until:
                return record
            status, data = await _timed(record, "next", client.post_json(next_path))
    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
        record.error(f"{type(exc).__name__}")
        return record
    finally:
        client.close()


async def run_crowd(port: int, project_id: int, link_key: str, args) -> list[CrowdRecord]:
    """--crowd-annotators arrivals spread evenly (in a shuffled order of ids) over
    --crowd-arrival-seconds."""
    start = time.time() + 1
    spacing = args.crowd_arrival_seconds / max(1, args.crowd_annotators)
    return await asyncio.gather(
        *(
            crowd_annotator(port, project_id, link_key, n, start + n * spacing, args)
            for n in range(args.crowd_annotators)
        )
    )


def crowd_outcome(records: list[CrowdRecord], project_id: int) -> dict:
    """What the database holds for the crowd: stored and duplicated submits, and how the
    workers were bound to variants."""
    from django.db.models import Count

    from annotate.models import Annotation, WorkerVariantBinding
    from crowd.models import CrowdSession

    acknowledged = [a for r in records for a in r.acknowledged]
    stored = Annotation.objects.filter(pk__in=acknowledged).count()
    sessions = [r.session_id for r in records if r.session_id is not None]
    workers = CrowdSession.objects.filter(pk__in=sessions).values_list("worker_id", flat=True)
    per_variant = list(
        WorkerVariantBinding.objects.filter(project_id=project_id, worker_id__in=workers)
        .values("variant")
        .annotate(n=Count("worker"))
        .values_list("n", flat=True)
    )
    # A duplicate: a second stored annotation of the same item by the same worker.
    theirs = Annotation.objects.filter(assignment__worker_id__in=workers)
    pairs = theirs.values("assignment__worker_id", "assignment__item_id").distinct().count()
    return {
        "acknowledged": len(acknowledged),
        "lost": len(set(acknowledged)) - stored,
        "duplicates": theirs.count() - pairs + len(acknowledged) - len(set(acknowledged)),
        "bound": sum(per_variant),
        "per_variant": per_variant,
    }


def print_crowd(records: list[CrowdRecord], outcome: dict, args, elapsed: float) -> None:
    errors: dict[str, int] = {}
    for r in records:
        for k, v in r.errors.items():
            errors[k] = errors.get(k, 0) + v
    print(
        f"crowd: {args.crowd_annotators} Prolific participants arriving over "
        f"{args.crowd_arrival_seconds} s through a study link, each then working "
        f"{args.crowd_work_seconds} s with {args.think[0]:g}-{args.think[1]:g} s of thought "
        f"before each submit ({elapsed:.0f} s in all)"
    )
    print(f"  {'request':<15} {'count':>6} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    for kind in CROWD_KINDS:
        values = [x for r in records for x in r.latencies[kind]]
        print(
            f"  {kind:<15} {len(values):>6} {percentile(values, 0.5):>7.0f} "
            f"{percentile(values, 0.95):>7.0f} {percentile(values, 0.99):>7.0f} "
            f"{percentile(values, 1.0):>7.0f}"
        )
    per_variant = outcome["per_variant"]
    spread = f"{min(per_variant)}-{max(per_variant)}" if per_variant else "-"
    print(
        f"  errors {sum(errors.values())} {errors or ''}; acknowledged submits "
        f"{outcome['acknowledged']}, lost {outcome['lost']}, duplicates {outcome['duplicates']}; "
        f"bound to a variant {outcome['bound']} of {args.crowd_annotators} "
        f"({len(per_variant)} variants, {spread} workers each)"
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
    parser.add_argument(
        "--clients", type=int, nargs="*", default=[20, 50], help="none: no such phase"
    )
    parser.add_argument(
        "--crowd",
        action="store_true",
        help=(
            "then a crowd launch: participants arriving through a study link "
            "(docs/benchmarks.md#load)"
        ),
    )
    parser.add_argument("--crowd-annotators", type=int, default=2000)
    parser.add_argument("--crowd-arrival-seconds", type=float, default=60)
    parser.add_argument("--crowd-work-seconds", type=float, default=180)
    parser.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=[15, 60],
        metavar=("MIN", "MAX"),
        help="seconds a crowd participant spends on an item before submitting it",
    )
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
    if args.crowd and (args.crowd_annotators < 1 or not 0 <= args.think[0] <= args.think[1]):
        parser.error("--crowd-annotators must be at least 1 and --think MIN <= MAX, both >= 0")
    speed_before = reference_loop_ms()
    users = sum(args.clients)
    project_id = setup_database(args.items, users)
    link_key = setup_crowd_link(project_id) if args.crowd else None
    if args.crowd:
        # Participants arrive from addresses of their own, which nginx passes on in
        # X-Forwarded-For after the one the bench client claims: trust that claim (as a
        # load balancer in front of nginx would make it), so the entry's per-address limit
        # sees 2,000 addresses, not one.
        os.environ["CROWD_TRUSTED_PROXIES"] = "1" if args.direct else "2"
    app_port = free_port()
    server = start_server(app_port, args.workers, args.threads)
    proxy = None
    port = app_port
    if not args.direct:
        port = free_port()
        proxy_dir = Path(tempfile.mkdtemp(prefix="rw-load-nginx-"))
        try:
            proxy = start_nginx(Path(args.nginx), proxy_dir, port, app_port)
        except (OSError, RuntimeError):
            os.killpg(server.pid, signal.SIGTERM)  # not left serving with nobody to stop it
            raise
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
        if args.crowd:
            crowd_started = time.time()
            records = asyncio.run(run_crowd(port, project_id, link_key, args))
            crowd_ended = time.time()
            print_crowd(
                records, crowd_outcome(records, project_id), args, crowd_ended - crowd_started
            )
            time.sleep(2 * sampler.interval)  # a reading after the phase's end
            used = sampler.window(crowd_started, crowd_ended)
            arrivals = sum(1 for r in records if r.latencies["first next"])
            print(
                "  CPU s over the crowd phase: "
                + ", ".join(f"{kind} {used.get(kind, 0.0):.1f}" for kind in [*CPU_KINDS, "other"])
                + f"; the application's (gunicorn + postgres + celery + nginx) "
                f"{sum(used.get(k, 0.0) for k in ('gunicorn', 'postgres', 'celery', 'nginx')):.1f} s "
                f"for {arrivals} arrivals and "
                f"{sum(len(r.latencies['submit']) for r in records)} submits"
            )
            print(f"  machine load (uptime): {os.getloadavg()} at the end of the crowd phase")
        if not all_sent:
            return
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
