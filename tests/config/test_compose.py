"""docker-compose.yml, Dockerfile and .dockerignore, checked without a Docker engine.

The compose file is validated against the Compose Specification's JSON schema, the copy
that check-jsonschema ships (`--builtin-schema vendor.compose-spec`, no network), and
then read for what the schema cannot know: where secrets come from, restart policies,
volumes, and what the image leaves out.
"""

import subprocess
import sys
from pathlib import Path

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
