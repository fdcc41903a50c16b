"""Slow clients and clients that drop mid-request do not block others.

A gunicorn worker is busy with a request until the request is complete, so the
production stack puts nginx in front (config/nginx/default.conf.template, the file
docker-compose.yml mounts): nginx reads whole requests and passes gunicorn only complete
ones. Here gunicorn has one synchronous worker, its production worker class, and ten
clients stall in front of it.
"""

import http.client
import os
import shutil
import signal
import socket
from pathlib import Path

import pytest
from django.conf import settings

from bench.common import free_port, start_gunicorn, start_nginx
from tests.config.production_probe import STRONG_KEY
from tests.conftest import skip_or_fail

NGINX = Path(os.environ.get("RW_NGINX", "/usr/sbin/nginx"))


@pytest.fixture
def stack(tmp_path):
    if not NGINX.exists():
        skip_or_fail(f"needs nginx at {NGINX} (Debian package nginx-light)")
    app_port, proxy_port = free_port(), free_port()
    database = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": STRONG_KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": os.environ.get("DATABASE_URL", f"sqlite:///{database['NAME']}"),
        # Production refuses to start without a broker; the embedded one needs no server.
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL") or "filesystem://",
        "CELERY_EMBEDDED_DIR": str(tmp_path / "celery"),
        "GUNICORN_WORKERS": "1",
        "LOG_LEVEL": "WARNING",
        "REQUEST_LOG_LEVEL": "WARNING",
    }
    gunicorn = start_gunicorn(env, app_port, ready_path="/healthz")
    try:
        nginx = start_nginx(NGINX, tmp_path, proxy_port, app_port)
    except RuntimeError:
        os.killpg(gunicorn.pid, signal.SIGTERM)
        raise
    try:
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

    assert answers == [200] * 5, "ten stalled clients held gunicorn's only worker"
    for client in stalled:
        client.close()


def test_clients_that_drop_mid_request_free_the_worker(stack):
    for _ in range(6):  # straight to gunicorn, and through the proxy
        _stall(stack["app"], PARTIAL_BODY).close()
        _stall(stack["proxy"], PARTIAL_BODY).close()

    assert [_healthz(stack["app"]) for _ in range(3)] == [200] * 3
    assert [_healthz(stack["proxy"]) for _ in range(3)] == [200] * 3
