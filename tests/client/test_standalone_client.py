"""The client installs on its own (client/pyproject.toml): in a fresh virtual environment,
`pip install` of its folder brings `requests` and nothing of the platform, ships its type
information (py.typed), and the installed client talks to a live server there."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from annotate.services.api_tokens import api_token_create
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client_env(tmp_path_factory) -> Path:
    """A virtual environment with only the client installed, from a copy of its folder
    (a build writes into the folder it builds)."""
    where = tmp_path_factory.mktemp("client")
    source = where / "source" / "client"
    shutil.copytree(
        ROOT / "client", source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    )
    env = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    install = subprocess.run(
        [str(env / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", source],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, f"pip install of the client failed:\n{install.stderr}"
    return env


def test_the_client_installs_with_requests_alone_and_its_types(client_env):
    installed = subprocess.run(
        [str(client_env / "bin" / "pip"), "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {row["name"].lower() for row in json.loads(installed.stdout)}
    typed = subprocess.run(
        [
            str(client_env / "bin" / "python"),
            "-c",
            "import pathlib, rationale_workbench as r; "
            "print((pathlib.Path(r.__file__).parent / 'py.typed').exists(), r.__version__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )

    assert {"rationale-workbench-client", "requests"} <= names
    assert not names & {"django", "djangorestframework", "pandas", "datasets", "tqdm", "numpy"}
    assert typed.stdout.split() == ["True", "0.1.0"]


def test_the_installed_client_lists_projects_of_a_live_server(client_env, live_server):
    owner = UserFactory(username="standalone-client")
    token = api_token_create(owner=owner, name="standalone").token
    script = (
        "import sys; from rationale_workbench import Client, ApiError\n"
        "client = Client(sys.argv[1], sys.argv[2])\n"
        "print(client.projects.list())\n"
        "try:\n"
        "    client.projects.get(424242)\n"
        "except ApiError as error:\n"
        "    print(error.status, error.message)\n"
    )

    done = subprocess.run(
        [str(client_env / "bin" / "python"), "-c", script, live_server.url, token],
        capture_output=True,
        text=True,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "404 project not found"]
