"""The command examples of README.md and of the documentation's pages, run as written, in
order (the README, then the pages in the site's navigation order, mkdocs.yml), in one shell,
on a fresh database.

Every fenced shell block in those pages carries a marker comment on the line above it:
`<!-- readme-test: run -->` (run here), `<!-- readme-test: run, with the server -->` (run
here against a dev server this test starts, on a free port in place of 127.0.0.1:8000) or
`<!-- readme-test: skip, REASON -->`. A block without one fails the test, so no new example
escapes it.

The shell starts in a copy of the repository's layout made of links (the code, `.venv`, and
`../shared` beside it when it exists), so the files the examples write land in a temporary
folder. The database is a new SQLite file (the README's default), and no broker is set, so
the server runs an import within its request.
"""

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml

from bench.common import free_port, wait_until_answers
from tests.conftest import SHARED_REFERENCE, skip_or_fail

ROOT = Path(__file__).resolve().parents[1]
SHARED = SHARED_REFERENCE.parents[1]
BLOCK = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```\n", re.M | re.S)
MARKER = re.compile(r"<!-- readme-test: (?P<how>[^>]*?) -->\n$")
SHELL_LANGUAGES = {"", "sh", "bash", "console", "shell"}
# Written by the examples or by running the code; never linked into the copy.
LEFT_OUT = {".git", "db.sqlite3", "media", ".run", "test-artifacts", "node_modules"}


def documented_pages() -> list[Path]:
    """README.md, then every page of the documentation site in its navigation's order."""

    def walk(entries):
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            if isinstance(value, list):
                yield from walk(value)
            else:
                yield ROOT / "docs" / value

    navigation = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    return [ROOT / "README.md", *walk(navigation)]


def readme_blocks(text: str) -> list[tuple[str, str, int]]:
    """(marker, body, line) for every fenced shell block; the marker is '' when missing."""
    blocks = []
    for match in BLOCK.finditer(text):
        if match["lang"] not in SHELL_LANGUAGES:
            continue
        before = text[: match.start()]
        marker = MARKER.search(before)
        line = before.count("\n") + 1
        blocks.append((marker["how"] if marker else "", match["body"], line))
    return blocks


def page_blocks() -> list[tuple[str, str, str]]:
    """(marker, body, "page:line") of every shell block of every documented page, in order."""
    return [
        (how, body, f"{page.relative_to(ROOT)}:{line}")
        for page in documented_pages()
        for how, body, line in readme_blocks(page.read_text())
    ]


def test_every_shell_block_says_whether_it_runs_here():
    blocks = page_blocks()
    assert any(where.startswith("README.md") for _, _, where in blocks), (
        "no shell example found in README.md"
    )
    unmarked = [where for how, _, where in blocks if not how]
    assert unmarked == [], (
        f"{unmarked}: a shell block needs <!-- readme-test: run --> or "
        "<!-- readme-test: skip, REASON --> on the line above it"
    )
    for how, _, where in blocks:
        assert how in {"run", "run, with the server"} or how.startswith("skip, "), (
            f"{where}: unknown marker {how!r}"
        )


def _sandbox(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    repository = workspace / "repository"
    repository.mkdir(parents=True)
    for entry in ROOT.iterdir():
        if entry.name not in LEFT_OUT:
            (repository / entry.name).symlink_to(entry)
    if SHARED.is_dir():
        (workspace / "shared").symlink_to(SHARED)
    return repository


def _environment(repository: Path, tmp_path: Path) -> dict:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "CELERY_", "CACHE_", "DATABASE_", "VIRTUAL_ENV"))
    }
    environment.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'readme.sqlite3'}",
        DJANGO_MEDIA_ROOT=str(tmp_path / "media"),
        # The virtualenv's own bin is not on the PATH: the README's activation must put it there.
        PATH=os.pathsep.join(
            part
            for part in environment.get("PATH", "").split(os.pathsep)
            if Path(part).resolve() != Path(sys.executable).parent.resolve()
        ),
    )
    return environment


def test_the_readme_commands_work_as_written_on_a_fresh_database(tmp_path):
    if not shutil.which("curl"):
        skip_or_fail("needs curl for the README's API example")
    blocks = [(how, body, where) for how, body, where in page_blocks() if how.startswith("run")]
    repository = _sandbox(tmp_path)
    environment = _environment(repository, tmp_path)
    port = free_port()

    script, not_run = ["set -eo pipefail"], []
    for how, body, where in blocks:
        if "../shared" in body and not SHARED.is_dir():
            not_run.append(where)
            continue
        if how == "run, with the server":
            body = body.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        script += [f"echo '>>> {where}' >&2", body]

    server_log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=repository,
        env=environment,
        stdout=server_log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until_answers(port, "/healthz", server)
        done = subprocess.run(
            ["bash", "-c", "\n".join(script)],
            cwd=repository,
            env=environment,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, (
            f"a documented command failed (the last '>>>' line names its page and line):\n"
            f"{done.stderr[-4000:]}\n{done.stdout[-2000:]}\n"
            f"server: {(tmp_path / 'server.log').read_text()[-2000:]}"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
        server_log.close()

    with sqlite3.connect(tmp_path / "readme.sqlite3") as database:
        items = dict(
            database.execute(
                "SELECT p.name, COUNT(i.id) FROM annotate_project p "
                "LEFT JOIN annotate_item i ON i.project_id = p.id GROUP BY p.name"
            ).fetchall()
        )
    if SHARED.is_dir():
        # The movies slice: 200 val, 50 train and 50 test instances.
        assert items["My project"] == 300
        assert items["Movies via the API"] == 300
    assert items["Sentiment benchmark"] > 0
    ran = "\n".join(part for part in script if not part.startswith("echo '>>>"))
    for written in re.findall(r"--(?:score_file|results) (\S+)", ran):
        assert (repository / written).stat().st_size > 0, f"{written} was not written"
    if not_run:
        skip_or_fail(
            f"the blocks at {not_run} read ../shared, which is not at {SHARED}: "
            "every other block ran and passed"
        )
