"""The documentation site: it builds strictly, its generated reference pages are current, it
documents every setting the code reads, and the app serves it at /docs/ under the site's
Content Security Policy (docs/development.md#the-documentation-site)."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

from frontend.docs_site import inline_script_hashes
from frontend.management.commands.docs_reference import reference_pages

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"
# Read from the environment by the settings, the gunicorn configuration and the embedded
# worker: each must be in the settings reference.
SETTING_READ = re.compile(
    r"""(?:env\.\w+|os\.environ\.get|os\.environ\[|env\.setdefault)\(?\s*["']([A-Z][A-Z0-9_]+)["']"""
)
# Read by the test settings only, or by pytest-xdist: not settings of the site.
NOT_SETTINGS = {"CACHE_URL_PER_TEST_WORKER", "PYTEST_XDIST_WORKER"}


def test_the_site_builds_strictly_with_no_warning(tmp_path):
    """--strict turns every warning (a broken link or anchor, a page left out of the
    navigation) into a failure."""
    built = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "api" / "index.html").is_file()


def test_the_generated_reference_pages_are_current():
    stale = [
        path.relative_to(ROOT).as_posix()
        for path, text in reference_pages().items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]
    assert stale == [], (
        f"{stale} differ from what the code declares: run python manage.py docs_reference"
    )


def test_the_generated_pages_list_every_command_and_operation():
    pages = {path.name: text for path, text in reference_pages().items()}
    for command in ("create_project", "import_eraser", "export_eraser", "docs_reference"):
        assert f"### `{command}`" in pages["commands.md"]
    for command in ("score", "validate", "explain", "fine-grained", "agreement"):
        assert f"### `rationale-metrics {command}`" in pages["commands.md"]
    assert "`--aggregation`" in pages["commands.md"]
    assert "### `POST /api/projects/{project_id}/imports/`" in pages["api.md"]


def test_every_setting_the_code_reads_is_in_the_settings_reference():
    read = set()
    for source in [*(ROOT / "config").rglob("*.py")]:
        read |= set(SETTING_READ.findall(source.read_text(encoding="utf-8")))
    documented = (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    missing = sorted(name for name in read - NOT_SETTINGS if f"`{name}`" not in documented)
    assert read, "no setting found: the pattern no longer matches how settings are read"
    assert missing == [], (
        f"read from the environment but not in docs/reference/settings.md: {missing}"
    )


def _expression(script: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"


def test_inline_script_hashes_name_each_inline_script_once_and_no_script_file():
    html = (
        b'<script>var a=1;</script><script src="x.js"></script>'
        b"<script >b()</script><script>var a=1;</script>"
    )

    assert inline_script_hashes(html) == [_expression(b"var a=1;"), _expression(b"b()")]


@pytest.fixture
def built_site(tmp_path):
    site = tmp_path / "site"
    (site / "guides").mkdir(parents=True)
    (site / "index.html").write_text(
        "<html><script>var palette=1;</script><p>Home</p></html>", encoding="utf-8"
    )
    (site / "guides" / "index.html").write_text("<html><p>Guides</p></html>", encoding="utf-8")
    (site / "search.json").write_text('{"docs": []}', encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    with override_settings(DOCS_SITE_DIR=site):
        yield site


def test_the_app_serves_the_built_site_with_its_inline_scripts_allowed(client, built_site):
    page = client.get("/docs/")

    assert page.status_code == 200
    assert b"Home" in page.content
    policy = page["Content-Security-Policy"]
    script_src = next(part for part in policy.split(";") if part.strip().startswith("script-src"))
    assert inline_script_hashes(page.content)[0] in script_src
    assert "'unsafe-inline'" not in policy
    assert client.get("/docs/guides/").content == b"<html><p>Guides</p></html>"
    assert client.get("/docs/search.json").status_code == 200


def test_the_site_answers_a_folder_without_its_slash_with_a_redirect(client, built_site):
    answer = client.get("/docs/guides")

    assert answer.status_code == 302
    assert answer["Location"] == "/docs/guides/"


@pytest.mark.parametrize(
    "path", ["/docs/../secret.txt", "/docs/%2e%2e/secret.txt", "/docs/nowhere/"]
)
def test_nothing_outside_the_built_site_or_missing_from_it_is_served(client, built_site, path):
    answer = client.get(path)

    assert answer.status_code == 404
    assert b"outside" not in answer.content


def test_an_unbuilt_site_says_how_to_build_it(client, tmp_path):
    with override_settings(DOCS_SITE_DIR=tmp_path / "not-built"):
        front = client.get("/docs/")
        deeper = client.get("/docs/guides/")

    assert front.status_code == 200
    assert b"make docs" in front.content
    assert deeper.status_code == 404


def test_writes_to_the_site_are_refused(client, built_site):
    assert client.post("/docs/").status_code == 405
