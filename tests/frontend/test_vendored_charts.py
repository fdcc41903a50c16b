"""The chart library is served from our static files, the version package.json pins, with
its licence beside it; no page loads a script from another site."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "frontend" / "static" / "frontend" / "vendor" / "chartjs"


def test_the_vendored_chart_library_is_the_pinned_version_with_its_licence():
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["chart.js"]
    header = (VENDOR / "chart.umd.min.js").read_text()[:300]
    assert f"Chart.js v{pinned}" in header
    assert "MIT License" in (VENDOR / "LICENSE.md").read_text()


def test_no_template_loads_a_script_from_elsewhere():
    for template in (ROOT / "frontend" / "templates").rglob("*.html"):
        for source in re.findall(r"<script[^>]*\bsrc=\"([^\"]+)\"", template.read_text()):
            assert source.startswith(("{% static", "{% url")), (template.name, source)
