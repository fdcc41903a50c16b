"""The start-up steps of docker-compose.yml's containers, run here as processes against the
production settings on PostgreSQL (there is no Docker engine here or in CI).

The steps are read from the files the containers run, not copied: the Dockerfile's
collectstatic and the web service's command (migrate, then gunicorn with
config/gunicorn.conf.py). Then every compose health check's request is sent with the Host
header it sends, the first admin is created as README says, and signs in over plain HTTP
with the trial switch (DJANGO_HTTPS=false), as a browser would: cookies kept by a cookie
jar that, like a browser, sends a Secure cookie over HTTPS only.
"""

import http.cookiejar
import os
import re
import shlex
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import yaml

from bench.common import free_port, recreate_database, wait_until_answers
from tests.config.production_probe import production_environment
from tests.config.test_production_settings import compose_health_requests
from tests.conftest import skip_or_fail

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
ADMIN_PASSWORD = "first-admin-Pw-7391"


def _commands(line: str) -> list[list[str]]:
    """`a && b && c` as argument lists, with this virtualenv's Python for `python` and
    for the console scripts (gunicorn), as the image's PATH would give them."""
    commands = []
    for part in line.split("&&"):
        words = shlex.split(part)
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        if words[0] == "python":
            words = [sys.executable, *words[1:]]
        elif words[0] in {"gunicorn", "celery"}:
            words = [sys.executable, "-m", *words]
        commands.append((env, words))
    return commands


def web_start_up() -> list:
    command = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"][
        "command"
    ]
    assert command.startswith('sh -c "') or command.startswith("sh -c "), command
    return _commands(shlex.split(command)[2])


def image_collectstatic() -> tuple[dict, list[str]]:
    dockerfile = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    run = next(line for line in dockerfile.splitlines() if "collectstatic" in line)
    step = next(part for part in run.split("&&") if "collectstatic" in part)
    return _commands(step)[0]


@pytest.fixture
def stack_database():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        skip_or_fail("needs PostgreSQL: set DATABASE_URL=postgres://...")
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/')}_stack"
    stack_url = urlunsplit(parts._replace(path=f"/{name}", query=""))
    recreate_database(stack_url)
    yield stack_url
    import psycopg2

    admin = psycopg2.connect(
        host=parts.hostname,
        port=parts.port or 5432,
        user=parts.username or "postgres",
        password=parts.password,
        dbname="postgres",
    )
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.close()


def _run(command: list[str], env: dict, **extra) -> subprocess.CompletedProcess:
    done = subprocess.run(
        command, env={**env, **extra}, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def _status(port: int, path: str, host: str) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_containers_start_up_steps_give_a_working_site(stack_database, tmp_path):
    port = free_port()
    env = production_environment(
        DATABASE_URL=stack_database,
        # The local trial: http://localhost:8000 in a browser, over plain HTTP.
        DJANGO_ALLOWED_HOSTS="localhost",
        DJANGO_HTTPS="false",
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        DJANGO_MEDIA_ROOT=str(tmp_path / "media"),
        GUNICORN_BIND=f"127.0.0.1:{port}",
        GUNICORN_WORKERS="2",
        LOG_LEVEL="WARNING",
    )
    for name in ("CELERY_BROKER_URL", "CACHE_URL"):
        if os.environ.get(name):
            env[name] = os.environ[name]

    # The image: static files collected at build time.
    build_env, collectstatic = image_collectstatic()
    _run(collectstatic, env, **build_env)
    assert (tmp_path / "static" / "frontend" / "app.css").exists()

    # The web container: migrate, then gunicorn in the foreground.
    *before, (serve_env, serve) = web_start_up()
    assert [words[-2:] for _, words in before] == [["migrate", "--noinput"]]
    for step_env, step in before:
        _run(step, env, **step_env)
    assert "-c" in serve and serve[serve.index("-c") + 1] == "config/gunicorn.conf.py"
    server = subprocess.Popen(
        serve,
        env={**env, **serve_env},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_until_answers(port, "/healthz", server)

        # Each compose health check, with the Host header it sends.
        for service, check in compose_health_requests().items():
            assert _status(port, check["path"], check["host"]) == 200, service

        # The first admin, as the deployment guide says.
        guide = (ROOT / "docs" / "howto" / "deploy.md").read_text()
        assert "DJANGO_SUPERUSER_PASSWORD" in guide
        documented = re.search(r"python manage\.py createsuperuser --noinput[^`\n]*", guide)
        assert documented, "docs/howto/deploy.md shows how to create the first admin"
        create = shlex.split(documented.group(0))
        _run([sys.executable, *create[1:]], env, DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD)
        username = create[create.index("--username") + 1]

        # Signing in over plain HTTP, as a browser at http://localhost would.
        jar = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        base = f"http://localhost:{port}"
        form = browser.open(f"{base}/accounts/login/", timeout=10)
        assert form.headers["Content-Security-Policy"]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.read().decode())
        body = urllib.parse.urlencode(
            {
                "csrfmiddlewaretoken": token.group(1),
                "username": username,
                "password": ADMIN_PASSWORD,
            }
        ).encode()
        home = browser.open(
            urllib.request.Request(  # noqa: S310 - http://localhost, built above
                f"{base}/accounts/login/", data=body, headers={"Referer": f"{base}/"}
            ),
            timeout=10,
        )
        assert home.status == 200 and home.url == f"{base}/"
        assert username in home.read().decode()

        # Static files from the collected folder, through the application (whitenoise).
        assert _status(port, "/static/frontend/app.css", "localhost") == 200
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
