"""Annotator workspace latency in headless Chromium: each kind of change at 100, 5,000 and 50,000 tokens.

    python bench/workspace.py [--tokens 5000 50000] [--changes 200] [--paragraph-tokens 120]

Starts the dev server on a throwaway SQLite database, opens the workspace as an annotator
and prints, for each document size: time to first render (navigation start to the
workspace being ready), and for each kind of change (a click, a drag step, Shift+Arrow, a new
set, undo, redo) the time from the input to the frame that shows it, median and p95, with the
p95's difference from the 100-token document's, all measured in the same run; and the sum of
Chromium's layout-shift entries over the whole session (0 when nothing moved). The text has a
paragraph every 120 tokens, as long documents do; `--paragraph-tokens 0` makes it one paragraph.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
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
KINDS = ("click", "drag step", "shift+arrow", "new set", "undo", "redo")
# Every change is timed from just before its input event to the second animation frame
# after it: the first frame is the one the change is painted in. Untimed steps (scrolling a
# token into view, the click before an undo) wait for their frames too, so that no work of
# theirs is left for the timed change.
CHANGES_JS = """async ({changes, seed}) => {
  const ws = window.rationaleWorkspace;
  const nodes = ws.tokenNodes[0];
  let state = seed;
  const random = (n) => { state = (state * 1103515245 + 12345) % 2147483648; return state % n; };
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const centre = (node) => { const b = node.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; };
  const pointer = (type, target, [x, y]) => target.dispatchEvent(new PointerEvent(type,
    {bubbles: true, button: 0, pointerType: "mouse", isPrimary: true, clientX: x, clientY: y}));
  const key = (k, shiftKey = false) => document.body.dispatchEvent(new KeyboardEvent("keydown", {key: k, shiftKey, bubbles: true}));
  const settle = () => new Promise((r) => setTimeout(r, 60)).then(frames);
  // A scroll's newly shown lines are painted before the change is timed.
  const show = async (i) => { nodes[i].scrollIntoView({block: "center"}); await frames(); await settle(); };
  const times = {};
  const timed = async (kind, action) => {
    const t0 = performance.now();
    action();
    await frames();
    (times[kind] ||= []).push(performance.now() - t0);
  };
  const click = (i) => { pointer("pointerdown", nodes[i], centre(nodes[i])); pointer("pointerup", document, centre(nodes[i])); };
  const last = nodes.length - 1;
  for (let n = 0; n < changes; n += 1) {
    const i = random(nodes.length);
    await show(i);
    await timed("click", () => click(i));
  }
  for (let n = 0; n < changes; n += 10) {
    const i = random(Math.max(1, nodes.length - 12));
    await show(i);
    pointer("pointerdown", nodes[i], centre(nodes[i]));
    await settle();
    for (let step = 1; step <= 10; step += 1) {
      const at = centre(nodes[i + step]);
      await timed("drag step", () => pointer("pointermove", document, at));
    }
    pointer("pointerup", document, centre(nodes[i + 10]));
    await frames();
  }
  for (let n = 0; n < changes; n += 10) {
    const i = random(Math.max(1, nodes.length - 12));
    ws.moveCursor({doc: 0, token: i});
    await show(i);
    for (let step = 0; step < 10; step += 1) await timed("shift+arrow", () => key("ArrowRight", true));
  }
  for (let n = 0; n < changes; n += 1) {
    const i = random(last + 1);
    await show(i);
    click(i);
    await settle();
    await timed("new set", () => key("n"));
    key("z");  // the set goes again: the legend stays as long at every size
    await frames();
  }
  for (let n = 0; n < changes; n += 1) {
    const i = random(last + 1);
    await show(i);
    click(i);
    await settle();
    await timed("undo", () => key("z"));
    await timed("redo", () => key("y"));
  }
  return times;
}"""
LAYOUT_SHIFT_JS = """() => {
  window.layoutShiftSum = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.layoutShiftSum += entry.value;
  }).observe({type: "layout-shift", buffered: false});
}"""


def setup_data(sizes: list[int], paragraph_tokens: int) -> dict[int, int]:
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
        if paragraph_tokens:
            # Paragraphs as a long article has them, a blank line apart.
            text = "\n\n".join(
                " ".join(words[k : k + paragraph_tokens]) for k in range(0, size, paragraph_tokens)
            )
        else:
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


def measure(
    base: str, project_id: int, changes: int
) -> tuple[float, dict[str, list[float]], float, int]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", "bench")
        page.fill("input[name=password]", "bench-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        renders = []
        for _ in range(3):
            page.goto(f"{base}/projects/{project_id}/annotate/")
            page.wait_for_selector("#workspace[data-ready=true]", timeout=120_000)
            renders.append(
                page.evaluate("performance.getEntriesByName('workspace-ready')[0].startTime")
            )
        page.evaluate(LAYOUT_SHIFT_JS)
        n = page.locator(".document .tok").count()
        times = page.evaluate(CHANGES_JS, {"changes": changes, "seed": 2})
        page.wait_for_timeout(800)  # the autosave's status line comes after the last change
        shift = page.evaluate("window.layoutShiftSum")
        browser.close()
    return statistics.median(renders), times, shift, n


def wait_for_port(port: int, timeout: float = 120.0) -> None:
    """The dev server takes longer than a few seconds to start on a busy machine."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.25)
    raise SystemExit(f"the dev server did not start on port {port}")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tokens", type=int, nargs="+", default=[5000, 50000], help="sizes besides 100"
    )
    parser.add_argument(
        "--changes", "--toggles", type=int, default=200, help="changes of each kind"
    )
    parser.add_argument(
        "--paragraph-tokens",
        type=int,
        default=120,
        help="paragraphs of this many tokens, a blank line apart (0: the whole text one paragraph)",
    )
    args = parser.parse_args()
    sizes = [100, *[size for size in args.tokens if size != 100]]
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
        }
        os.environ.update(env)
        projects = setup_data(sizes, args.paragraph_tokens)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port)
            base = f"http://127.0.0.1:{port}"
            results = {size: measure(base, pid, args.changes) for size, pid in projects.items()}
        finally:
            server.terminate()
    small_render, small_times, _, _ = results[100]
    print(
        "Each change is timed from its input event to the second animation frame after it "
        "(two frames, ~33 ms at 60 Hz, is the floor);"
    )
    print(
        "+p95 is the p95's difference from the 100-token document's in this run; "
        f"{args.changes} changes of each kind; load average {os.getloadavg()[0]:.2f}."
    )
    print(f"{'tokens':>7} {'kind':<12} {'p50 ms':>8} {'p95 ms':>8} {'+p95 ms':>8}")
    for _size, (render, times, shift, n) in results.items():
        print(f"{n:>7} {'first render':<12} {render:>8.0f} {'':>8} {render / small_render:>7.1f}x")
        for kind in KINDS:
            values = times[kind]
            print(
                f"{n:>7} {kind:<12} {statistics.median(values):>8.1f} {p95(values):>8.1f} "
                f"{p95(values) - p95(small_times[kind]):>+8.1f}"
            )
        print(f"{n:>7} {'layout shift':<12} {shift:>8.3f}")


if __name__ == "__main__":
    main()
