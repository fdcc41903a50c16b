"""Fault scenarios against the production stack on loopback. Not part of CI.

    python bench/faults.py [--outage-seconds 5]

1. Database outage: annotator clients loop next/submit while PostgreSQL is stopped for a
   few seconds (pg_ctlcluster, so run it as root on a machine whose database you may stop).
   Prints, second by second, the status codes answered; then checks that every submit
   acknowledged before, during or after the outage is stored exactly once.
2. Worker killed: a large import is sent to a real Celery worker, which is SIGKILLed
   during the write; prints what the job and the database show afterwards.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
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
    start_server,
    stored_annotations,
)

BROKER = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/10")


def pg_cluster(action: str) -> None:
    version = sorted(os.listdir("/etc/postgresql"))[-1]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action], check=True
    )


def outage(port: int, project_id: int, seconds: int) -> None:
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
    print(f"  t={time.time() - start:.0f}s: stopping PostgreSQL")
    pg_cluster("stop")
    time.sleep(seconds)
    print(f"  t={time.time() - start:.0f}s: starting PostgreSQL")
    pg_cluster("start")
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
        print("2. a Celery worker killed during an import")
        killed_worker(port, project_id, env)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
