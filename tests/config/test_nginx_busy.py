"""When arrivals outrun gunicorn, the stack's nginx answers the excess at once with 503 and
Retry-After (a page that reloads itself, or JSON for the API), instead of queueing them
until connections overflow and are reset (a crowd launch, bench/load.py --crowd).

Run with nginx from config/nginx/default.conf.template, the file docker-compose.yml
mounts, in front of a stand-in upstream that holds every request until released.
"""

import http.client
import http.server
import os
import re
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from bench.common import NGINX_TEMPLATE, free_port, start_nginx
from tests.conftest import skip_or_fail

NGINX = Path(os.environ.get("RW_NGINX", "/usr/sbin/nginx"))
IN_FLIGHT = int(re.search(r"limit_conn workbench_in_flight (\d+);", NGINX_TEMPLATE.read_text())[1])


class _Held(http.server.BaseHTTPRequestHandler):
    """Answers /healthz at once (nginx's start-up check) and holds everything else until
    the server's `release` event is set."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path != "/healthz":
            self.server.arrived.release()
            self.server.release.wait(timeout=30)
        body = b"done"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def stack(tmp_path):
    if not NGINX.exists():
        skip_or_fail(f"needs nginx at {NGINX} (Debian package nginx-light)")
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Held)
    upstream.daemon_threads = True
    upstream.release = threading.Event()
    upstream.arrived = threading.Semaphore(0)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = free_port()
    nginx = start_nginx(NGINX, tmp_path, port, upstream.server_address[1])
    try:
        yield port, upstream
    finally:
        upstream.release.set()
        os.killpg(nginx.pid, signal.SIGTERM)
        nginx.wait(timeout=20)
        upstream.shutdown()


def _hold(port: int, path: str) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return client


def _get(port: int, path: str) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Accept": "text/html"})
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


def test_requests_beyond_what_gunicorn_holds_are_told_to_retry_not_dropped(stack):
    port, upstream = stack
    held = [_hold(port, f"/crowd/s/key/?n={n}") for n in range(IN_FLIGHT)]
    for _ in held:  # every held request has reached the upstream
        assert upstream.arrived.acquire(timeout=20)

    page = _get(port, "/crowd/s/key/?n=late")
    api = _get(port, "/api/projects/1/assignments/next/")

    assert page.status == 503
    assert int(page.getheader("Retry-After")) > 0
    assert page.getheader("Content-Type").startswith("text/html")
    assert b'http-equiv="refresh"' in page.body
    assert api.status == 503
    assert int(api.getheader("Retry-After")) > 0
    assert api.getheader("Content-Type") == "application/json"
    assert b'"code": "busy"' in api.body

    upstream.release.set()
    for client in held:
        assert client.recv(64).startswith(b"HTTP/1.1 200")
        client.close()
    deadline = time.monotonic() + 10
    while (answer := _get(port, "/crowd/s/key/?n=after")).status == 503:
        assert time.monotonic() < deadline, "nginx kept refusing after the requests ended"
    assert answer.status == 200
