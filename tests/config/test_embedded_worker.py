"""`make run`'s background worker: `manage.py serve` starts the dev server and a Celery
worker on the embedded filesystem broker, jobs run in the background while their progress
shows through the API, and Ctrl-C stops every process it started."""

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from config.embedded_worker import embedded_environment

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "embedded-worker-pw-1"


def test_embedded_environment_keeps_what_the_caller_set(tmp_path):
    env = embedded_environment(run_dir=tmp_path, base={"CACHE_URL": "redis://x/1"})
    assert env["CELERY_BROKER_URL"] == "filesystem://"
    assert env["CELERY_EMBEDDED_DIR"] == str(tmp_path)
    assert env["CACHE_URL"] == "redis://x/1"
    assert embedded_environment(run_dir=tmp_path, base={})["CACHE_URL"].startswith("filecache://")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, *, data: bytes | None = None, content_type: str | None = None):
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")  # noqa: S310
    token = base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - local server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        pytest.fail(f"{url}: {error.code} {error.read()[:2000]!r}")


def _multipart(name: str, filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def _processes_mentioning(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture
def embedded_env(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL", "DATABASE_URL")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        DJANGO_MEDIA_ROOT=str(tmp_path / "media"),
        # Two chunks of items, so the export goes to the worker as a chord.
        EXPORT_CHUNK_ITEMS="150",
    )
    return env


def test_make_run_serves_jobs_in_the_background_with_progress(tmp_path, embedded_env):
    env = embedded_env
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run(
        [*manage, "migrate", "--noinput"], env=env, cwd=ROOT, check=True, capture_output=True
    )
    setup = (
        "from django.contrib.auth import get_user_model\n"
        "from annotate.models import Project, ProjectMembership, Role\n"
        f"user = get_user_model().objects.create_user('admin', password={PASSWORD!r})\n"
        "project = Project.objects.create(name='embedded', labels=['neg', 'pos'])\n"
        "ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)\n"
        "print(project.pk)\n"
    )
    project_id = int(
        subprocess.run(
            [*manage, "shell", "-c", setup],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    run_dir = tmp_path / f"run-{uuid.uuid4().hex[:8]}"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "serve.log", "w")  # noqa: SIM115 - closed at the end
    server = subprocess.Popen(
        [*manage, "serve", f"127.0.0.1:{port}", "--run-dir", str(run_dir), "--noreload"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2)  # noqa: S310
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                time.sleep(0.5)

        lines = b"".join(
            json.dumps({"id": f"t{i}", "text": f"text number {i} is good", "label": "pos"}).encode()
            + b"\n"
            for i in range(300)
        )
        body, content_type = _multipart("file", "texts.jsonl", lines)
        code, job = _request(
            f"{base}/api/projects/{project_id}/imports/", data=body, content_type=content_type
        )
        # The request returned before the job ran: the worker, not the request, does it.
        assert code in (201, 202) and job["status"] == "pending"

        def follow(url: str) -> list[dict]:
            seen = []
            deadline = time.monotonic() + 120
            while not (seen and seen[-1]["final"]):
                assert time.monotonic() < deadline, (seen, (tmp_path / "serve.log").read_text())
                seen.append(_request(url)[1])
                time.sleep(0.2)
            return seen

        seen = follow(f"{base}/api/projects/{project_id}/imports/{job['id']}/progress/")
        assert seen[-1]["status"] == "succeeded", seen[-1]
        assert seen[-1]["done"] == seen[-1]["total"] > 0
        assert {s["status"] for s in seen} <= {"pending", "running", "succeeded"}

        code, export = _request(
            f"{base}/api/projects/{project_id}/exports/",
            data=json.dumps(
                {"selection": "reference", "aggregation": "reference", "splits": "ratios"}
            ).encode(),
            content_type="application/json",
        )
        assert code == 202 and export["status"] == "pending"
        seen = follow(f"{base}/api/projects/{project_id}/exports/{export['id']}/progress/")
        assert seen[-1]["status"] == "succeeded", seen[-1]
        assert seen[-1]["done"] == seen[-1]["total"] == 600  # 300 items and 300 documents
        assert seen[-1]["result_url"].endswith(f"/exports/{export['id']}/download/")
        assert _processes_mentioning(str(run_dir)), "the worker runs with the run folder"
        # Every file of the broker is in the run folder, none where the process started.
        assert (run_dir / "control").is_dir()
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C
        server.wait(timeout=60)
        log.close()
    deadline = time.monotonic() + 10
    while _processes_mentioning(str(run_dir)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_mentioning(str(run_dir)) == []
    assert server.returncode == 0
