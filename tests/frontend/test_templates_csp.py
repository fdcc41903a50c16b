"""No template holds what the Content Security Policy refuses: inline scripts, <style>
elements, style attributes or inline event handlers. The browser test
(tests/e2e/test_csp_pages.py) sees the pages it opens; this reads every template,
including the error pages no test renders in a browser."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted(
    path
    for app in ("frontend", "crowd", "annotate", "qc", "exports", "config")
    for path in (ROOT / app).glob("templates/**/*.html")
)
# A <script> with a src, or a data block (JSON that is read, never run), is allowed.
INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>")
REFUSED = {
    "inline script": INLINE_SCRIPT,
    "style element": re.compile(r"<style\b"),
    "style attribute": re.compile(r"\sstyle=[\"']"),
    "event handler attribute": re.compile(r"\son[a-z]+=[\"']"),
    "javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
}


def test_there_are_templates_to_read():
    assert len(TEMPLATES) > 20


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_template_holds_nothing_the_policy_refuses(template):
    text = template.read_text()

    assert {kind: rule.findall(text) for kind, rule in REFUSED.items() if rule.search(text)} == {}
