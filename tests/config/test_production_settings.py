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


def _login_page(**env):
    return production_probe(
        [
            {"path": "/accounts/login/", "headers": {"HTTP_HOST": PUBLIC_HOST}},
            {
                "path": "/accounts/login/",
                "headers": {"HTTP_HOST": PUBLIC_HOST, "HTTP_X_FORWARDED_PROTO": "https"},
            },
        ],
        **env,
    )["answers"]


def test_https_by_default_plain_http_is_redirected_to_https():
    over_http, _ = _login_page()

    assert over_http["status"] == 301
    assert over_http["headers"]["Location"] == f"https://{PUBLIC_HOST}/accounts/login/"


def test_behind_a_tls_proxy_the_forwarded_proto_is_trusted_and_hsts_sent():
    _, over_https = _login_page()

    assert over_https["status"] == 200
    assert over_https["headers"]["Strict-Transport-Security"] == "max-age=31536000"
    assert over_https["cookies"]["csrftoken"] == {"secure": True}


def test_hsts_lifetime_and_subdomains_are_the_operators_choice():
    _, over_https = _login_page(DJANGO_HSTS_SECONDS="600", DJANGO_HSTS_INCLUDE_SUBDOMAINS="true")

    assert over_https["headers"]["Strict-Transport-Security"] == "max-age=600; includeSubDomains"


def test_the_plain_http_trial_switch_serves_http_with_cookies_a_browser_sends_back():
    """With Secure cookies over plain HTTP the browser keeps the CSRF cookie to itself, so
    the login form is refused; DJANGO_HTTPS=false is the documented switch for a trial."""
    over_http, _ = _login_page(DJANGO_HTTPS="false")

    assert over_http["status"] == 200
    assert over_http["cookies"]["csrftoken"] == {"secure": False}
    assert "Strict-Transport-Security" not in over_http["headers"]


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_urls_are_not_redirected_to_https(path):
    answer = production_probe([{"path": path, "headers": {"HTTP_HOST": PUBLIC_HOST}}])["answers"][0]

    assert answer["status"] == 200


def test_the_deployment_checklist_passes_but_for_the_operators_hsts_choices():
    """`manage.py check --deploy` with the production settings: only HSTS for subdomains
    and preloading are left to the operator (they bind every subdomain, for years)."""
    import subprocess
    import sys

    from tests.config.production_probe import production_environment

    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        env=production_environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert set(re.findall(r"\(security\.(W\d+)\)", done.stdout + done.stderr)) == {"W005", "W021"}


def test_production_sends_the_content_security_policy_the_browser_tests_run_under():
    """The policy is set in the base settings, so the browser tests' server
    (tests/e2e/test_csp_pages.py) sends exactly what production sends."""
    from csp.utils import build_policy

    _, over_https = _login_page()

    sent = csp_directives(over_https["headers"]["Content-Security-Policy"])
    assert sent == csp_directives(build_policy())  # django-csp's order varies by process
    assert sent["script-src"] == "'self'" and sent["style-src"] == "'self'"
    assert sent["frame-ancestors"] == "'none'" and sent["object-src"] == "'none'"


def csp_directives(header: str) -> dict[str, str]:
    return dict(directive.strip().split(" ", 1) for directive in header.split(";"))


def _forwarded_https_from(address: str, **env):
    return production_probe(
        [
            {
                "path": "/accounts/login/",
                "client": {"REMOTE_ADDR": address},
                "headers": {"HTTP_HOST": PUBLIC_HOST, "HTTP_X_FORWARDED_PROTO": "https"},
            }
        ],
        settings=("SECURE_PROXY_SSL_HEADER",),
        **env,
    )


def test_a_direct_request_claiming_https_from_a_non_proxy_address_is_not_secure():
    """Someone reaching gunicorn directly cannot claim HTTPS: the request is redirected to
    HTTPS, as any plain request is, and gets no HSTS."""
    answer = _forwarded_https_from("203.0.113.9")["answers"][0]

    assert answer["status"] == 301
    assert answer["headers"]["Location"] == f"https://{PUBLIC_HOST}/accounts/login/"
    assert "Strict-Transport-Security" not in answer["headers"]


def test_the_named_proxy_s_forwarded_proto_is_believed():
    answer = _forwarded_https_from("10.1.2.3", DJANGO_TRUSTED_PROXIES="10.0.0.0/8")["answers"][0]
    outside = _forwarded_https_from("10.1.2.3", DJANGO_TRUSTED_PROXIES="10.9.9.9")["answers"][0]

    assert answer["status"] == 200
    assert answer["cookies"]["csrftoken"] == {"secure": True}
    assert outside["status"] == 301


def test_with_no_proxy_named_the_header_is_never_read():
    probe = _forwarded_https_from("127.0.0.1", DJANGO_TRUSTED_PROXIES="")

    assert probe["settings"]["SECURE_PROXY_SSL_HEADER"] is None
    assert probe["answers"][0]["status"] == 301


def test_gunicorn_believes_the_same_proxies(monkeypatch):
    import runpy

    from tests.config.production_probe import ROOT

    monkeypatch.setenv("DJANGO_TRUSTED_PROXIES", "10.0.0.0/8")
    conf = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))

    assert conf["forwarded_allow_ips"] == "10.0.0.0/8"
