"""The stack's nginx tells Django how the browser reached the site (X-Forwarded-Proto).

Run with nginx from config/nginx/default.conf.template, the file docker-compose.yml
mounts, in front of a stand-in upstream that echoes the header it was given.
"""

import http.client
import http.server
import os
import signal
import threading
from pathlib import Path

import pytest

from bench.common import free_port, start_nginx
from tests.conftest import skip_or_fail

NGINX = Path(os.environ.get("RW_NGINX", "/usr/sbin/nginx"))


class _EchoProto(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = (self.headers.get("X-Forwarded-Proto") or "-").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def upstream():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _EchoProto)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
def proxy(upstream, tmp_path):
    if not NGINX.exists():
        skip_or_fail(f"needs nginx at {NGINX} (Debian package nginx-light)")
    started = []

    def start(*, trust: bool) -> int:
        port = free_port()
        workdir = tmp_path / f"nginx-{len(started)}"
        workdir.mkdir()
        started.append(start_nginx(NGINX, workdir, port, upstream, trust_forwarded_proto=trust))
        return port

    yield start
    for process in started:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def _proto_seen(port: int, **headers: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/", headers=headers)
    return conn.getresponse().read().decode()


def test_by_default_nginx_says_the_scheme_it_was_reached_by_whatever_the_client_claims(proxy):
    port = proxy(trust=False)

    assert _proto_seen(port) == "http"
    assert _proto_seen(port, **{"X-Forwarded-Proto": "https"}) == "http"


def test_behind_a_tls_proxy_nginx_passes_its_forwarded_proto_on(proxy):
    """A proxy in front terminates TLS and reaches nginx over HTTP: without passing its
    header on, Django would see every request as plain HTTP and redirect it forever."""
    port = proxy(trust=True)

    assert _proto_seen(port, **{"X-Forwarded-Proto": "https"}) == "https"
    assert _proto_seen(port, **{"X-Forwarded-Proto": "http"}) == "http"
    assert _proto_seen(port, **{"X-Forwarded-Proto": "gopher"}) == "http"
    assert _proto_seen(port) == "http"
