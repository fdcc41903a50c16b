"""The production settings as a server behind the stack's proxy answers with them."""

import re
from pathlib import Path

import pytest
import yaml

from tests.config.production_probe import PUBLIC_HOST, production_probe

ROOT = Path(__file__).resolve().parents[2]


def compose_health_requests() -> dict[str, dict]:
    """Each docker-compose.yml health check that asks the application over HTTP, as the
    request Django receives: its path and the Host header it sends (the URL's host unless
    the command sets one). The proxy's check reaches Django with the same Host, since nginx
    passes $host on."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    found = {}
    for name, service in services.items():
        command = " ".join(service.get("healthcheck", {}).get("test", []))
        url = re.search(r"https?://([^/:'\"\s]+)(?::\d+)?(/[^'\"\s]*)", command)
        if url is None:
            continue
        header = re.search(r"Host['\"]?\s*[:,]\s*['\"]?([^'\"\s,}]+)", command)
        found[name] = {"host": header.group(1) if header else url.group(1), "path": url.group(2)}
    return found


def test_the_stack_health_checks_ask_the_application_over_http():
    assert set(compose_health_requests()) == {"web", "proxy"}


@pytest.mark.parametrize("service", ["web", "proxy"])
def test_each_compose_health_check_passes_under_the_production_hosts_setting(service):
    """The checks call the container by its loopback address, a host the production
    ALLOWED_HOSTS does not list; /healthz and /readyz answer whatever the Host."""
    check = compose_health_requests()[service]

    answer = production_probe(
        [{"path": check["path"], "headers": {"HTTP_HOST": check["host"]}}],
        DJANGO_ALLOWED_HOSTS=PUBLIC_HOST,
    )["answers"][0]

    assert answer["status"] == 200, answer


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_urls_answer_any_host_and_nothing_else_does(path):
    health, page = production_probe(
        [
            {"path": path, "headers": {"HTTP_HOST": "10.1.2.3:8000"}},
            {"path": "/accounts/login/", "headers": {"HTTP_HOST": "10.1.2.3:8000"}},
        ]
    )["answers"]

    assert health["status"] == 200
    assert page["status"] == 400, "every other URL still validates the Host header"
