"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
MIGRATION_APPS = ("annotate", "qc", "crowd", "exports", "frontend")
TEMPLATE_PREFIX = "rw_template_"


def _admin_connection(url: str):
    import psycopg2

    parsed = urlparse(url)
    admin = psycopg2.connect(
        host=parsed.hostname,
        port=parsed.port or 5432,
        user=parsed.username or "postgres",
        password=parsed.password,
        dbname="postgres",
    )
    admin.autocommit = True
    return admin


def recreate_database(url: str) -> None:
    """Drop the PostgreSQL database named in `url` (a throwaway bench database) and create it
    again as a copy of the migrated template: its `migrate` then has nothing left to do."""
    template = migrated_template(url)
    admin = _admin_connection(url)
    with admin.cursor() as cur:
        name = urlparse(url).path.lstrip("/")
        cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cur.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    admin.close()


def migrations_digest() -> str:
    """What the migrated schema depends on: the project's migrations and the pinned
    versions of Django and the apps whose migrations it runs too."""
    import hashlib

    digest = hashlib.sha256((ROOT / "requirements" / "constraints.txt").read_bytes())
    for app in MIGRATION_APPS:
        for path in sorted((ROOT / app / "migrations").glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def migrated_template(url: str) -> str:
    """The name of a PostgreSQL database, on the server of `url`, holding every migration of
    this checkout and nothing else, made once (migrate costs seconds; copying a database a
    tenth of one). Databases copied from it are migrated as they are created.

    Made under an advisory lock (concurrent test processes and benches wait for the one that
    makes it), migrated under a temporary name and renamed when complete, so a half-migrated
    template is never copied. Templates of other migration sets are dropped."""
    import os
    import subprocess
    import sys

    name = TEMPLATE_PREFIX + migrations_digest()
    admin = _admin_connection(url)
    try:
        with admin.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(hashtext('rationale-workbench template'))")
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if cur.fetchone() is None:
                building = f"{name}_building"
                cur.execute(f'DROP DATABASE IF EXISTS "{building}"')
                cur.execute(f'CREATE DATABASE "{building}"')
                parsed = urlparse(url)
                env = {
                    **os.environ,
                    "DATABASE_URL": parsed._replace(path=f"/{building}", query="").geturl(),
                    "DJANGO_SETTINGS_MODULE": "config.settings.test",
                }
                subprocess.run(
                    [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                    cwd=ROOT,
                    env=env,
                    check=True,
                )
                cur.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
    finally:
        admin.close()
    return name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_child(script: str, *args: str, env: dict | None = None) -> dict:
    """Run `script --child ARGS` in a fresh process (so its peak RSS is its own) and
    return the JSON object its last line of output prints."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run(
        [sys.executable, script, "--child", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def wait_until_answers(port: int, path: str, process=None, attempts: int = 150) -> None:
    """Poll http://127.0.0.1:port/path until it answers 200; fail if `process` exits."""
    import http.client
    import time

    for _ in range(attempts):
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the process serving port {port} exited with {process.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"nothing answered 200 on port {port}{path}")


def start_gunicorn(env: dict, port: int, *, ready_path: str = "/readyz"):
    """gunicorn with config/gunicorn.conf.py on 127.0.0.1:port, in its own process group
    (stop it with os.killpg), once `ready_path` answers."""
    import subprocess
    import sys
    from pathlib import Path

    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "-c",
            "config/gunicorn.conf.py",
        ],
        cwd=Path(__file__).resolve().parents[1],
        env={**env, "GUNICORN_BIND": f"127.0.0.1:{port}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_answers(port, ready_path, server)
    except RuntimeError:
        import os
        import signal

        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        raise
    return server


NGINX_TEMPLATE = Path(__file__).resolve().parents[1] / "config" / "nginx" / "default.conf.template"


def upload_limit_bytes() -> str:
    """The upload limit as the settings read it (config/settings/base.py), for nginx."""
    import os

    return os.environ.get("IMPORT_MAX_UPLOAD_BYTES", str(1024 * 1024 * 1024))


def start_nginx(
    nginx: Path, workdir: Path, port: int, upstream_port: int, *, trust_forwarded_proto=False
):
    """nginx from config/nginx/default.conf.template (the file docker-compose.yml mounts)
    on 127.0.0.1:port in front of 127.0.0.1:upstream_port, in its own process group
    (stop it with os.killpg), once /healthz answers through it. `trust_forwarded_proto`
    is the template's NGINX_TRUST_FORWARDED_PROTO (a TLS proxy in front)."""
    import os
    import subprocess

    server_block = (
        NGINX_TEMPLATE.read_text()
        .replace("${NGINX_PORT}", f"127.0.0.1:{port}")
        .replace("${NGINX_UPSTREAM}", f"127.0.0.1:{upstream_port}")
        .replace("${NGINX_TRUST_FORWARDED_PROTO}", "true" if trust_forwarded_proto else "false")
        .replace("${IMPORT_MAX_UPLOAD_BYTES}", upload_limit_bytes())
    )
    (workdir / "server.conf").write_text(server_block)
    temp = {name: workdir / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for folder in temp.values():
        folder.mkdir(exist_ok=True)
    (workdir / "nginx.conf").write_text(
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"pid {workdir / 'nginx.pid'};\nerror_log {workdir / 'error.log'} warn;\n"
        + "events { worker_connections 1024; }\nhttp {\n  access_log off;\n"
        + f"  client_body_temp_path {temp['body']};\n  proxy_temp_path {temp['proxy']};\n"
        + f"  fastcgi_temp_path {temp['fastcgi']};\n  uwsgi_temp_path {temp['uwsgi']};\n"
        + f"  scgi_temp_path {temp['scgi']};\n  include {workdir / 'server.conf'};\n}}\n"
    )
    process = subprocess.Popen(
        [str(nginx), "-p", str(workdir), "-c", str(workdir / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_answers(port, "/healthz", process)
    except RuntimeError:
        import signal

        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        raise
    return process


class ProcessCpuSampler:
    """CPU seconds spent by each kind of process on this machine over a time window.

    A thread reads every process's user + system time from /proc a few times a second
    and keeps each pid's latest reading with its time, so a process that exits inside the
    window (a client pool) still counts up to its last reading. `kinds` maps a label to a
    predicate on (comm, cmdline); the first that matches names the process."""

    def __init__(self, kinds: dict, interval: float = 0.25):
        import os
        import threading

        self.kinds = kinds
        self.interval = interval
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.samples: list[tuple[float, dict[int, float]]] = []
        self.kind_of: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ProcessCpuSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _kind(self, pid: int) -> str:
        kind = self.kind_of.get(pid)
        if kind is None:
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                return "other"
            kind = next(
                (label for label, test in self.kinds.items() if test(comm, cmdline)), "other"
            )
            self.kind_of[pid] = kind
        return kind

    def _read(self) -> dict[int, float]:
        import os

        seconds = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            seconds[int(entry)] = (int(fields[11]) + int(fields[12])) / self.ticks
        return seconds

    def _run(self) -> None:
        import time

        while not self._stop.is_set():
            now = time.time()
            reading = self._read()
            for pid in reading:
                self._kind(pid)
            self.samples.append((now, reading))
            self._stop.wait(self.interval)

    def _latest_before(self, moment: float) -> dict[int, float]:
        latest: dict[int, float] = {}
        for at, reading in self.samples:
            if at > moment:
                break
            latest.update(reading)
        return latest

    def window(self, start: float, end: float) -> dict[str, float]:
        """CPU seconds per kind between `start` and `end` (Unix times)."""
        before, after = self._latest_before(start), self._latest_before(end)
        totals: dict[str, float] = {}
        for pid, used in after.items():
            kind = self.kind_of.get(pid, "other")
            totals[kind] = totals.get(kind, 0.0) + used - before.get(pid, 0.0)
        return totals


def reference_loop_ms(iterations: int = 3_000_000) -> float:
    """CPU milliseconds a fixed pure-Python loop takes right now: how fast this machine
    is at the moment. On the shared 2-core machines here the same loop has taken from
    0.9x to 1.9x its fastest time within an hour, so a benchmark prints it beside its
    figures."""
    import time

    start = time.process_time()
    total = 0
    for i in range(iterations):
        total += i
    return (time.process_time() - start) * 1000
