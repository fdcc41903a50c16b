"""The documentation's screenshots, taken by the browser walk-through
(tests/e2e/test_walkthrough_a11y.py) on the demo's data, so they never go stale:
`make docs-screenshots` runs the walk with DOCS_SCREENSHOTS set to docs/images/, and each
page named below is saved there as the reader's screen shows it (the viewport, not the
whole page). Without the variable the walk writes nothing here."""

from __future__ import annotations

import os
from pathlib import Path

# A page of the walk ("role/page", as the walk names it) and its file in docs/images/.
DOCS_SCREENSHOTS = {
    "annotator/workspace": "workspace.png",
    "reviewer/review": "review.png",
    "admin/overview": "overview.png",
    "admin/instructions": "instructions.png",
    "admin/quality": "quality.png",
    "admin/agreement": "agreement.png",
    "admin/results": "results.png",
}


def docs_screenshot(page, key: str) -> None:
    """Save the page's viewport for the documentation when the walk is asked to."""
    folder = os.environ.get("DOCS_SCREENSHOTS", "")
    if folder and key in DOCS_SCREENSHOTS:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / DOCS_SCREENSHOTS[key]))
