"""Slow clients and clients that drop mid-request do not block others.

gunicorn (gthread) gives each request a thread until the request is complete, so the
production stack puts nginx in front (config/nginx/default.conf.template, the file
docker-compose.yml mounts): nginx reads whole requests and passes gunicorn only complete
ones. Here gunicorn has two threads and ten clients stall in front of it.
"""

import http.client
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from bench.common import free_port, start_gunicorn, wait_until_answers
from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
NGINX = Path(os.environ.get("RW_NGINX", "/usr/sbin/nginx"))
TEMPLATE = ROOT / "config" / "nginx" / "default.conf.template"


@pytest.fixture
def stack(tmp_path):
    if not NGINX.exists():
        skip_or_fail(f"needs nginx at {NGINX} (Debian package nginx-light)")
    app_port, proxy_port = free_port(), free_port()
    database = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "slow-client-test-" + "k" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": os.environ.get("DATABASE_URL", f"sqlite:///{database['NAME']}"),
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "2",
        "LOG_LEVEL": "WARNING",
        "REQUEST_LOG_LEVEL": "WARNING",
    }
    gunicorn = start_gunicorn(env, app_port, ready_path="/healthz")
    server_block = (
        TEMPLATE.read_text()
        .replace("${NGINX_PORT}", f"127.0.0.1:{proxy_port}")
        .replace("${NGINX_UPSTREAM}", f"127.0.0.1:{app_port}")
    )
    (tmp_path / "server.conf").write_text(server_block)
    temp = {name: tmp_path / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for folder in temp.values():
        folder.mkdir()
    (tmp_path / "nginx.conf").write_text(
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"pid {tmp_path / 'nginx.pid'};\nerror_log {tmp_path / 'error.log'} warn;\n"
        + "events { worker_connections 256; }\nhttp {\n  access_log off;\n"
        + f"  client_body_temp_path {temp['body']};\n  proxy_temp_path {temp['proxy']};\n"
        + f"  fastcgi_temp_path {temp['fastcgi']};\n  uwsgi_temp_path {temp['uwsgi']};\n"
        + f"  scgi_temp_path {temp['scgi']};\n  include {tmp_path / 'server.conf'};\n}}\n"
    )
    nginx = subprocess.Popen(
        [str(NGINX), "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_answers(proxy_port, "/healthz", nginx)
        yield {"app": app_port, "proxy": proxy_port}
    finally:
        for process in (nginx, gunicorn):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
        shutil.rmtree(tmp_path, ignore_errors=True)


def _stall(port: int, request: bytes) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(request)
    return client


PARTIAL_HEADERS = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
PARTIAL_BODY = (
    b"POST /api/projects/1/assignments/next/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
)


def _healthz(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/healthz")
    response = conn.getresponse()
    response.read()
    return response.status


def test_slow_clients_behind_the_proxy_do_not_block_others(stack):
    stalled = [_stall(stack["proxy"], PARTIAL_HEADERS) for _ in range(6)]
    stalled += [_stall(stack["proxy"], PARTIAL_BODY) for _ in range(4)]

    answers = [_healthz(stack["proxy"]) for _ in range(5)]

    assert answers == [200] * 5, "ten stalled clients held gunicorn's two threads"
    for client in stalled:
        client.close()


def test_clients_that_drop_mid_request_free_their_thread(stack):
    for _ in range(6):  # three times gunicorn's threads, straight to gunicorn
        _stall(stack["app"], PARTIAL_BODY).close()
        _stall(stack["proxy"], PARTIAL_BODY).close()

    assert [_healthz(stack["app"]) for _ in range(3)] == [200] * 3
    assert [_healthz(stack["proxy"]) for _ in range(3)] == [200] * 3
