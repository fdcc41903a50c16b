"""docker-compose.yml, Dockerfile and .dockerignore, checked without a Docker engine.

The compose file is validated against the Compose Specification's JSON schema, the copy
that check-jsonschema ships (`--builtin-schema vendor.compose-spec`, no network), and
then read for what the schema cannot know: where secrets come from, restart policies,
volumes, and what the image leaves out.
"""

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
APP_SERVICES = ("web", "worker", "beat")


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _check_jsonschema(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.compose-spec",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_compose_file_follows_the_compose_specification():
    done = _check_jsonschema(COMPOSE)

    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_catches_a_misspelt_key(tmp_path):
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("healthcheck:", "healthchek:", 1))

    done = _check_jsonschema(broken)

    assert done.returncode != 0 and "healthchek" in done.stdout


def _interpolated(value: str) -> bool:
    """A value taken from the environment (or .env) when compose reads the file."""
    return re.fullmatch(r"\$\{[A-Z_][A-Z0-9_]*(?::?[?-][^}]*)?\}", value) is not None


def test_no_password_or_key_is_written_in_the_compose_file():
    """Secrets come from .env: interpolated where compose needs them (the database's
    password), read by the application from `env_file` otherwise."""
    services = compose()["services"]
    for name, service in services.items():
        for key, value in (service.get("environment") or {}).items():
            value = str(value)
            if re.search(r"PASSWORD|SECRET|TOKEN", key):
                assert _interpolated(value), f"{name}.{key} is written in the file"
            if "://" in value:
                password = urlsplit(value).password
                assert password is None or _interpolated(password), f"{name}.{key}: {value}"
    for name in APP_SERVICES:
        assert services[name]["env_file"] in (".env", [".env"]), name


def test_the_database_password_must_be_set_in_env():
    postgres = compose()["services"]["postgres"]["environment"]

    assert re.fullmatch(r"\$\{POSTGRES_PASSWORD:\?.+\}", postgres["POSTGRES_PASSWORD"])
    example = (ROOT / ".env.example").read_text()
    assert re.search(r"^POSTGRES_PASSWORD=", example, re.MULTILINE)


def test_every_service_restarts_after_a_crash_or_a_reboot():
    for name, service in compose()["services"].items():
        assert service.get("restart") == "unless-stopped", name


def test_the_database_and_the_uploads_live_on_volumes():
    spec = compose()
    services = spec["services"]

    assert "pgdata:/var/lib/postgresql/data" in services["postgres"]["volumes"]
    media = services["web"]["environment"]["DJANGO_MEDIA_ROOT"]
    for name in APP_SERVICES:
        mounts = services[name].get("volumes", [])
        assert any(m.split(":")[:2] == ["media", media] for m in mounts), name
    assert {"pgdata", "media"} <= set(spec["volumes"])


# Paths the image must not hold: secrets, the developer's environment, local data.
LEFT_OUT = [
    ".env",
    ".venv/bin/python",
    ".git/HEAD",
    "node_modules/typescript/package.json",
    "media/imports/upload.zip",
    "db.sqlite3",
    "db.sqlite3-journal",
    "staticfiles/frontend/app.css",
    "annotate/__pycache__/models.cpython-311.pyc",
    ".pytest_cache/v/cache/lastfailed",
    "bench/out/load.json",
]
# Paths the build needs.
KEPT = [
    "manage.py",
    "pyproject.toml",
    "requirements/constraints.txt",
    "config/settings/production.py",
    "config/gunicorn.conf.py",
    "frontend/static/frontend/app.css",
    "frontend/templates/frontend/base.html",
    "annotate/migrations/0001_initial.py",
    "locale/zh_Hans/LC_MESSAGES/django.mo",
    ".env.example",
]


def _dockerignore_excludes(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern decides ('!' re-includes), and a pattern
    matches a path or any folder above it; '**' spans folders, '*' does not."""

    def regex(pattern: str) -> re.Pattern:
        out = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**", i):
                out += ".*"
                i += 2
                if pattern.startswith("/", i):
                    out += "/?"
                    i += 1
            elif pattern[i] == "*":
                out += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                out += "[^/]"
                i += 1
            else:
                out += re.escape(pattern[i])
                i += 1
        return re.compile(out)

    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw.lstrip("!").strip().lstrip("/")
        if pattern.startswith("./"):
            pattern = pattern[2:]
        if any(regex(pattern.rstrip("/")).fullmatch(p) for p in prefixes):
            excluded = not negate
    return excluded


def test_the_image_leaves_out_secrets_the_venv_git_and_local_data():
    ignore = ROOT / ".dockerignore"
    assert ignore.exists(), "COPY . . would put .env, .venv and .git in the image"
    patterns = [
        line.strip()
        for line in ignore.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    assert [p for p in LEFT_OUT if not _dockerignore_excludes(p, patterns)] == []
    assert [p for p in KEPT if _dockerignore_excludes(p, patterns)] == []


@pytest.mark.parametrize(
    ("pattern", "path", "excluded"),
    [
        ("**/__pycache__", "a/b/__pycache__/x.pyc", True),
        ("*.pyc", "a/x.pyc", False),
        ("media", "media/x/y", True),
        ("db.sqlite3*", "db.sqlite3-wal", True),
    ],
)
def test_the_dockerignore_reading_follows_dockers_rules(pattern, path, excluded):
    assert _dockerignore_excludes(path, [pattern]) is excluded


def test_the_image_runs_as_an_unprivileged_user_who_owns_the_media_volume():
    steps = (ROOT / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
    users = [line.split()[1] for line in steps if line.startswith("USER ")]
    assert users and users[-1] not in {"root", "0"}, "the processes would run as root"
    last_user = max(i for i, line in enumerate(steps) if line.startswith("USER "))
    assert not [line for line in steps[last_user:] if line.startswith(("RUN ", "COPY "))], (
        "a step after USER runs or copies as that user; keep them before it"
    )

    media = {
        volume.split(":")[1]
        for service in APP_SERVICES
        for volume in compose()["services"][service].get("volumes", [])
        if volume.startswith("media:")
    }
    assert media, "the app services share no media volume"
    owner = users[-1]
    for folder in media:
        assert any(f"mkdir -p {folder}" in line and f"chown {owner}" in line for line in steps), (
            f"{folder} is not made and given to {owner} in the image"
        )
