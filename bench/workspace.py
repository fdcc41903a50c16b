"""Annotator workspace latency in headless Chromium: a 5,000-token document vs a 100-token one.

    python bench/workspace.py [--tokens 5000] [--toggles 40]

Starts the dev server on a throwaway SQLite database, opens the workspace as an annotator
and prints, for each document size: time to first render (navigation start to the
workspace being ready) and the time to toggle a token (mousedown to the next painted
frame), median and p95, with the ratio to the small document measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOGGLE_JS = """async (indexes) => {
  const nodes = document.querySelectorAll('.document .tok');
  const times = [];
  const handlers = [];
  for (const i of indexes) {
    const t0 = performance.now();
    nodes[i].dispatchEvent(new MouseEvent('mousedown', {bubbles: true, button: 0}));
    document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
    handlers.push(performance.now() - t0);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    times.push(performance.now() - t0);
  }
  return [times, handlers];
}"""


def setup_data(sizes: list[int]) -> dict[int, int]:
    import django

    django.setup()
    from django.core.management import call_command

    from annotate.models import Document, Item, ItemDocument, Project, ProjectMembership
    from annotate.services import variant_create
    from annotate.tokenization import tokenize_text
    from tests.factories import UserFactory

    call_command("migrate", verbosity=0)
    user = UserFactory(username="bench", password="bench-pass")
    projects = {}
    rng = random.Random(1)
    for size in sizes:
        words = [
            rng.choice(["good", "bad", "film", "plot", "acting", "the", "a", "."])
            for _ in range(size)
        ]
        text = " ".join(words)
        tokens = tokenize_text(text, language="en")
        project = Project.objects.create(
            name=f"bench {size}", labels=["pos"], annotators_per_item=1
        )
        doc = Document.objects.create(
            project=project,
            docid="d",
            text=text,
            tokens=tokens.token_offsets,
            sentences=tokens.sentence_ranges,
            token_count=len(tokens.token_offsets),
            text_sha256="x",
            tokenizer="bench",
        )
        item = Item.objects.create(project=project, annotation_id="i", label="pos")
        ItemDocument.objects.create(item=item, document=doc, position=0)
        variant_create(project=project, name="plain", text="Highlight.")
        ProjectMembership.objects.create(project=project, user=user, role="annotator")
        projects[size] = project.pk
    return projects


def measure(base: str, project_id: int, toggles: int) -> tuple[float, list[float], int]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", "bench")
        page.fill("input[name=password]", "bench-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        renders = []
        for _ in range(3):
            page.goto(f"{base}/projects/{project_id}/annotate/")
            page.wait_for_selector("#workspace[data-ready=true]", timeout=60_000)
            renders.append(
                page.evaluate("performance.getEntriesByName('workspace-ready')[0].startTime")
            )
        n = page.locator(".document .tok").count()
        indexes = random.Random(2).sample(range(n), min(toggles, n))
        times, handlers = page.evaluate(TOGGLE_JS, indexes)
        browser.close()
    return statistics.median(renders), times, handlers, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=5000)
    parser.add_argument("--toggles", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
        }
        os.environ.update(env)
        projects = setup_data([100, args.tokens])
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(3)
            base = f"http://127.0.0.1:{port}"
            results = {size: measure(base, pid, args.toggles) for size, pid in projects.items()}
        finally:
            server.terminate()
    small = results[100]
    print(
        "toggle = mousedown to the second animation frame (two frames, ~33 ms at 60 Hz, is the floor);"
    )
    print("handler = the synchronous JavaScript work of the toggle.")
    print(
        f"{'tokens':>7} {'first render ms':>16} {'render ratio':>13} {'toggle p50 ms':>14} {'toggle p95 ms':>14} "
        f"{'handler p50 ms':>15} {'handler p95 ms':>15}"
    )
    for _size, (render, times, handlers, n) in results.items():
        times, handlers = sorted(times), sorted(handlers)
        p95 = times[int(0.95 * (len(times) - 1))]
        h95 = handlers[int(0.95 * (len(handlers) - 1))]
        print(
            f"{n:>7} {render:>16.0f} {render / small[0]:>12.1f}x {statistics.median(times):>14.1f} {p95:>14.1f} "
            f"{statistics.median(handlers):>15.2f} {h95:>15.2f}"
        )


if __name__ == "__main__":
    main()
