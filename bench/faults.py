"""Fault scenarios against the production stack on loopback. Not part of CI.

    python bench/faults.py [--outage-seconds 5]

1. Database outage: annotator clients loop next/submit while PostgreSQL is stopped for a
   few seconds (pg_ctlcluster, so run it as root on a machine whose database you may stop).
   Prints, second by second, the status codes answered; then checks that every submit
   acknowledged before, during or after the outage is stored exactly once.
2. Redis outage: the same clients, with a Celery worker and beat running the quality
   checks, while Redis (the broker and the cache) is stopped for a few seconds. Prints the
   status codes second by second and the Retry-After headers; checks that every
   acknowledged submit is stored once, that signed-in work went on, and that the checks
   caught up (no unchecked submission a minute later).
3. Worker killed: a large import is sent to a real Celery worker, which is SIGKILLed
   during the write; prints what the job and the database show afterwards.

Run it on a machine whose PostgreSQL and Redis nothing else is using at the time.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port
from bench.load import (
    DATABASE_URL,
    Client,
    setup_database,
    start_celery_worker,
    start_server,
    stored_annotations,
)

BROKER = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/10")


def pg_cluster(action: str) -> None:
    version = sorted(os.listdir("/etc/postgresql"))[-1]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action], check=True
    )


def redis_server(action: str) -> None:
    """Stop Redis, or start it again as the machine starts it (it keeps nothing on disk)."""
    if action == "stop":
        subprocess.run(["redis-cli", "-p", "6379", "shutdown", "nosave"], check=False)
        return
    subprocess.run(
        [
            "redis-server",
            "--daemonize",
            "yes",
            "--bind",
            "127.0.0.1",
            "-::1",
            "--port",
            "6379",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            "/var/lib/redis",
            "--logfile",
            "/var/log/redis/ci.log",
        ],
        check=True,
    )
    for _ in range(100):
        if subprocess.run(["redis-cli", "-p", "6379", "ping"], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError("Redis did not come back")


def outage(port: int, project_id: int, seconds: int, service: str = "PostgreSQL") -> dict:
    """Annotator clients loop "next" and "submit" while `service` is stopped for
    `seconds`; returns what the clients saw."""
    stop_start = pg_cluster if service == "PostgreSQL" else redis_server
    codes: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    acknowledged: list[int] = []
    retry_after: set[str] = set()
    stop = time.time() + seconds + 14
    start = time.time()
    lock = threading.Lock()

    def client_loop(n: int) -> None:
        client = Client(port, f"load{n}")
        while time.time() < stop:
            second = int(time.time() - start)
            try:
                status, data = client.post_json(f"/api/projects/{project_id}/assignments/next/")
            except OSError:
                client = reconnect(n)
                continue
            with lock:
                codes[second][status] += 1
            if status == 503:
                retry_after.add(client.last_retry_after)
                time.sleep(0.5)
                continue
            if status != 200 or "id" not in json.loads(data):
                continue
            lease = json.loads(data)
            doc = lease["item"]["documents"][0]
            body = {
                "client_uuid": str(uuid.uuid4()),
                "rationale_sets": [[{"docid": doc["docid"], "start_token": 0, "end_token": 2}]],
            }
            for _attempt in range(20):  # retry the same submission until it is answered
                try:
                    status, data = client.post_json(f"/api/assignments/{lease['id']}/submit/", body)
                except OSError:
                    client = reconnect(n)
                    continue
                with lock:
                    codes[int(time.time() - start)][status] += 1
                if status in (200, 201):
                    with lock:
                        acknowledged.append(json.loads(data)["annotation_id"])
                    break
                time.sleep(0.5)

    def reconnect(n: int) -> Client:
        while True:
            try:
                return Client(port, f"load{n}")
            except Exception:
                time.sleep(0.5)

    before, _ = stored_annotations()
    threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(5)
    print(f"  t={time.time() - start:.0f}s: stopping {service}")
    stop_start("stop")
    time.sleep(seconds)
    print(f"  t={time.time() - start:.0f}s: starting {service}")
    stop_start("start")
    for thread in threads:
        thread.join()
    for second in sorted(codes):
        print(
            f"  second {second:>2}: "
            + ", ".join(f"{code} x{n}" for code, n in sorted(codes[second].items()))
        )
    from django.db import connection

    connection.close()
    after, distinct = stored_annotations()
    unique = len(set(acknowledged))
    print(f"  Retry-After values seen: {sorted(retry_after)}")
    print(
        f"  acknowledged submits: {len(acknowledged)} ({unique} distinct annotations); "
        f"stored: {after - before}; duplicates: {after - distinct}; "
        f"lost: {unique - (after - before)}"
    )
    served = sum(n for second in codes.values() for code, n in second.items() if code in (200, 201))
    return {"acknowledged": unique, "stored": after - before, "served": served, "codes": codes}


def unchecked_submissions() -> int:
    from django.db import connection

    from annotate.models import Annotation

    connection.close()
    return Annotation.objects.filter(submission_check__isnull=True).count()


def redis_outage(port: int, project_id: int, seconds: int) -> None:
    beat_dir = Path(tempfile.mkdtemp(prefix="rw-faults-beat-"))
    worker = start_celery_worker(beat_dir)
    try:
        seen = outage(port, project_id, seconds, service="Redis")
        outage_seconds = {s for s, c in seen["codes"].items() if any(code >= 500 for code in c)}
        print(f"  seconds with a 5xx answer: {sorted(outage_seconds) or 'none'}")
        deadline = time.time() + 60
        while (left := unchecked_submissions()) and time.time() < deadline:
            time.sleep(1)
        print(f"  unchecked submissions {60 - max(0, int(deadline - time.time()))} s later: {left}")
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
        shutil.rmtree(beat_dir, ignore_errors=True)


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
    boundary = uuid.uuid4().hex
    payload = big_jsonl(30000)
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + payload
        + f"\r\n--{boundary}--\r\n".encode()
    )
    _status, data = client.request(
        "POST",
        f"/api/projects/{project_id}/imports/",
        body,
        {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-CSRFToken": client.cookies.get("csrftoken", ""),
            "Referer": "http://127.0.0.1/",
        },
    )
    job_id = json.loads(data)["id"]
    items_before = Item.objects.filter(project_id=project_id).count()
    while True:
        _, data = client.request("GET", f"/api/projects/{project_id}/imports/{job_id}/")
        job = json.loads(data)
        if job["status"] == "running" and job["progress"].get("phase") == "writing":
            break
        time.sleep(0.05)
    print(f"  job {job_id} is writing ({job['progress']}); killing the worker with SIGKILL")
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
    args = parser.parse_args()
    project_id = setup_database(items=300, users=10)
    # The load-bench project is granted to load0 as admin for the import scenario.
    from django.contrib.auth import get_user_model

    from annotate.models import ProjectMembership

    ProjectMembership.objects.get_or_create(
        project_id=project_id, user=get_user_model().objects.get(username="load0"), role="admin"
    )
    os.environ["CELERY_BROKER_URL"] = BROKER
    os.environ["JOB_HEARTBEAT_TIMEOUT_SECONDS"] = "5"
    port = free_port()
    server = start_server(port)
    env = {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "CELERY_BROKER_URL": BROKER,
        "CACHE_URL": "redis://127.0.0.1:6379/11",
        "JOB_HEARTBEAT_TIMEOUT_SECONDS": "5",
        "DJANGO_MEDIA_ROOT": str(ROOT / "media"),
    }
    try:
        print(f"1. database outage of {args.outage_seconds} s under 8 annotator clients")
        outage(port, project_id, args.outage_seconds)
        print(
            f"2. Redis (broker and cache) outage of {args.outage_seconds} s under the same clients"
        )
        redis_outage(port, project_id, args.outage_seconds)
        print("3. a Celery worker killed during an import")
        killed_worker(port, project_id, env)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
