"""Server time of every page at demo size, and the agreement page's render time in Chromium.

    python bench/pages.py [--loads 5] [--variants 7] [--workers 30] [--agreement-items 40]

Builds a throwaway PostgreSQL database (BENCH_DATABASE_URL, default rw_bench_pages) with the
demo's data (`make run`'s demo_setup, demo_quality, demo_crowd, demo_fine_grained), serves it
with gunicorn (config/gunicorn.conf.py, two sync workers, DEBUG off) and opens each role's
pages in headless Chromium, `--loads` times each. Prints per page:

- server ms: the page's own HTML, from the request sent to the first byte of the answer
  (loopback, so this is the server's time), the median over the loads;
- slowest API ms: the same for the slowest of the API requests the page's scripts make
  while it loads, with its path, the median over the loads;

and the largest of both against the goal of 300 ms. Then a project with `--variants`
instruction variants x `--workers` workers per variant (tests/qc/agreement_data.py) gets an
agreement report, and the agreement page is loaded `--loads` times: the render time is from
navigation start to the later of the heat map and tables drawn and every chart drawn (the
page's performance marks), median against the goal of 1 s.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port, recreate_database, start_gunicorn

DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_pages"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAGE_GOAL_MS = 300
RENDER_GOAL_MS = 1000
PASSWORD_STAFF = "demo-staff-pass"
AGREEMENT_PROJECT = "Bench: agreement page"

# What a page's script sets once it has drawn what it loads.
READY = {
    "members": "#accounts-panel[data-ready=true]",
    "users": "#accounts-panel[data-ready=true]",
    "review": "#review[data-ready=true]",
    "workspace": "#workspace[data-ready=true]",
    "agreement": "#agreement[data-ready=true]",
}
RENDER_MS = """() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
  const at = (name) => performance.getEntriesByName(name)[0].startTime;
  resolve(Math.max(at('agreement-tables-drawn'), at('agreement-charts-drawn')));
})))"""


def build_data(variants: int, workers: int, agreement_items: int) -> dict:
    """The demo's data, a staff account and the agreement project; the ids the pages need."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotate.models import Perturbation, Project, Role
    from annotate.services import membership_add
    from qc.agreement import agreement_report_refresh
    from tests.qc.agreement_data import agreement_project

    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as quiet:
        for command in ("demo_setup", "demo_quality", "demo_crowd", "demo_fine_grained"):
            call_command(command, force=True, stdout=quiet)
    users = get_user_model().objects
    users.create_user("demo-staff", password=PASSWORD_STAFF, is_staff=True)
    agreement = agreement_project(
        name=AGREEMENT_PROJECT, items=agreement_items, variants=variants, annotators=workers
    )
    membership_add(project=agreement, user=users.get(username="demo-admin"), role=Role.ADMIN)
    agreement_report_refresh(project_id=agreement.pk)
    # Planner statistics, as autovacuum would gather them within a minute of these bulk
    # inserts: without them the project list's progress counts took 0.6-1.4 s, not 0.05 s.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    demo = Project.objects.get(name="Demo: film review sentiment")
    fine = Project.objects.get(name="Demo: fine-grained sentiment (English)")
    original = Perturbation.objects.filter(original__project=fine).order_by("pk").first()
    return {
        "demo": demo.pk,
        "qualification": Project.objects.get(name="Demo: qualification test").pk,
        "fine": fine.pk,
        "original": original.original_id,
        "agreement": agreement.pk,
    }


def role_pages(ids: dict) -> dict[str, tuple[str | None, dict[str, str]]]:
    """Each role's account and the pages it opens (as in tests/e2e/test_walkthrough_a11y.py)."""
    p = f"/projects/{ids['demo']}/"
    f = f"/projects/{ids['fine']}/"
    admin = {
        "home": "/",
        "overview": p,
        **{
            name: f"{p}{name}/"
            for name in (
                "data",
                "instructions",
                "workers",
                "members",
                "quality",
                "pipeline",
                "review",
                "agreement",
                "results",
                "datasheet",
                "perturbations",
                "settings",
            )
        },
        "perturb-check": f"{p}perturbations/check/",
        "users": "/users/",
        "password": "/accounts/password/",
        "quality-test": f"/projects/{ids['qualification']}/quality/",
        "perturb-author": f"{f}perturbations/originals/{ids['original']}/",
    }
    return {
        "admin": ("demo-admin", admin),
        "researcher": (
            "demo-researcher",
            {k: admin[k] for k in ("home", "overview", "agreement", "results", "datasheet")},
        ),
        "reviewer": ("demo-reviewer", {k: admin[k] for k in ("home", "overview", "review")}),
        "annotator": (
            "demo-annotator",
            {"home": "/", "overview": p, "workspace": f"{p}annotate/"},
        ),
        "author": (
            "demo-author",
            {
                "home": "/",
                "perturbations": f"{f}perturbations/",
                "perturb-author": admin["perturb-author"],
            },
        ),
        "checker": (
            "demo-checker",
            {"home": "/", "perturb-check": f"{f}perturbations/check/"},
        ),
        "staff": ("demo-staff", {"home": "/", "users": "/users/"}),
        "anonymous": (None, {"login": "/accounts/login/"}),
    }


def server_ms(request) -> float:
    timing = request.timing
    return timing["responseStart"] - timing["requestStart"]


def sign_in(page, base: str, username: str) -> None:
    from annotate.management.commands.demo_setup import demo_password

    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", demo_password(username))
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def measure_pages(browser, base: str, ids: dict, loads: int) -> list[tuple]:
    rows = []
    for role, (username, pages) in role_pages(ids).items():
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(60_000)
        if username:
            sign_in(page, base, username)
        for name, path in pages.items():
            html, api = [], []
            for _ in range(loads + 1):  # the first load warms the caches and is not counted
                calls = []
                listener = lambda response, calls=calls: (  # noqa: E731
                    calls.append(response) if "/api/" in response.url else None
                )
                page.on("response", listener)
                response = page.goto(f"{base}{path}")
                if response.status != 200:
                    raise RuntimeError(f"{role} {path} answered {response.status}")
                if name in READY:
                    page.wait_for_selector(READY[name])
                page.wait_for_load_state("networkidle")
                page.remove_listener("response", listener)
                html.append(server_ms(response.request))
                slowest = max(
                    ((server_ms(c.request), c.url.split(base, 1)[-1]) for c in calls),
                    default=(0.0, ""),
                )
                api.append(slowest)
            html, api = html[1:], api[1:]
            slow_ms = statistics.median(ms for ms, _ in api)
            slow_path = max(api)[1]
            rows.append((role, name, statistics.median(html), slow_ms, slow_path))
        context.close()
    return rows


def measure_agreement_render(browser, base: str, project_id: int, loads: int) -> list[float]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    sign_in(page, base, "demo-admin")
    times = []
    for _ in range(loads + 1):
        page.goto(f"{base}/projects/{project_id}/agreement/")
        page.wait_for_selector("#agreement[data-ready=true]")
        page.wait_for_selector("#agreement-charts .chart-grid[data-ready=true]")
        times.append(page.evaluate(RENDER_MS))
    cells = page.locator("#matrix td").count()
    workers = page.locator("#worker-table tbody tr").count()
    charts = page.locator("#agreement-charts canvas").count()
    context.close()
    print(f"agreement page: {cells} heat map cells, {workers} worker rows, {charts} charts")
    return times[1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5, help="timed loads of each page")
    parser.add_argument("--variants", type=int, default=7)
    parser.add_argument("--workers", type=int, default=30, help="workers per variant")
    parser.add_argument("--agreement-items", type=int, default=40)
    parser.add_argument("--database-url", default=DATABASE_URL)
    args = parser.parse_args()

    recreate_database(args.database_url)
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": args.database_url,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DJANGO_STATIC_ROOT": f"{tmp}/static",
            "DJANGO_MEDIA_ROOT": f"{tmp}/media",
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "GUNICORN_WORKERS": "2",
        }
        os.environ.update(env)
        ids = build_data(args.variants, args.workers, args.agreement_items)
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        port = free_port()
        server = start_gunicorn(env, port)
        base = f"http://127.0.0.1:{port}"
        try:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
                )
                rows = measure_pages(browser, base, ids, args.loads)
                renders = measure_agreement_render(browser, base, ids["agreement"], args.loads)
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait()

    print(f"\nServer time per page at demo size, median of {args.loads} loads (ms)")
    print(f"{'role':11} {'page':16} {'server ms':>10} {'slowest API ms':>15}  slowest API request")
    for role, name, html_ms, api_ms, api_path in rows:
        print(f"{role:11} {name:16} {html_ms:>10.1f} {api_ms:>15.1f}  {api_path}")
    worst_html = max(rows, key=lambda r: r[2])
    worst_api = max(rows, key=lambda r: r[3])
    print(
        f"max page (HTML): {worst_html[2]:.1f} ms ({worst_html[0]} {worst_html[1]}); "
        f"max API request of a page: {worst_api[3]:.1f} ms ({worst_api[4]}); "
        f"goal < {PAGE_GOAL_MS} ms: "
        f"{'met' if max(worst_html[2], worst_api[3]) < PAGE_GOAL_MS else 'NOT met'}"
    )
    render = statistics.median(renders)
    print(
        f"\nAgreement page render, {args.variants} variants x {args.workers} workers per variant, "
        f"{args.agreement_items} items: median {render:.0f} ms of {len(renders)} loads "
        f"(min {min(renders):.0f}, max {max(renders):.0f}); goal < {RENDER_GOAL_MS} ms: "
        f"{'met' if render < RENDER_GOAL_MS else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
