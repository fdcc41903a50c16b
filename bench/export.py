"""Export benchmark: items with three annotations each, in PostgreSQL, exported by majority vote.

    python bench/export.py [--sizes 20000 100000] [--layouts docs docs.jsonl benchmark]
                           [--repeat 3] [--database-url postgres://...]

Each size gets a fresh database, filled by a child process of its own. Then, for each
layout, alternating and `--repeat` times (the machine is shared, so a median of several
runs is printed, with the range):
- the export step alone: a fresh process that has loaded Django times the build of the
  zip with its datasheet and reports its peak RSS (and its RSS before the step);
- the whole command: `manage.py export_eraser PROJECT OUT.zip --layout L` under
  `/usr/bin/time -v`, start-up included: wall time and peak RSS.
The last lines give the growth of peak RSS from the smallest size to the largest.
Targets (docs/benchmarks.md#export): under 60 s and at most 250 MB for 100,000 items, and at most
10 MB of growth from 20,000 to 100,000 items.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import recreate_database, run_child

TOKENS = 40
PROJECT = "bench export"


def populate(n_items: int):
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotate.models import (
        Annotation,
        Assignment,
        Document,
        InstructionVariant,
        Item,
        ItemDocument,
        Project,
        RationaleSet,
        RationaleSpan,
    )

    project = Project.objects.create(name=PROJECT, labels=["neg", "pos"], annotators_per_item=3)
    variant = InstructionVariant.objects.create(
        project=project, name="v", text="Highlight.", frozen_at=timezone.now()
    )
    workers = [get_user_model().objects.create(username=f"w{i}") for i in range(3)]
    words = [f"w{i}" for i in range(TOKENS)]
    text = " ".join(words)
    offsets, pos = [], 0
    for w in words:
        offsets.append((pos, pos + len(w)))
        pos += len(w) + 1
    tokens = np.array(offsets)
    sentences = np.array([[0, TOKENS]])
    rng = np.random.default_rng(0)
    lease = timezone.now() + timedelta(days=1)
    batch = 5000
    for start in range(0, n_items, batch):
        n = min(batch, n_items - start)
        docs = Document.objects.bulk_create(
            [
                Document(
                    project=project,
                    docid=f"d{start + i}",
                    text=text,
                    tokens=tokens,
                    sentences=sentences,
                    token_count=TOKENS,
                    text_sha256="x",
                    tokenizer="bench",
                )
                for i in range(n)
            ]
        )
        items = Item.objects.bulk_create(
            [
                Item(
                    project=project,
                    annotation_id=f"i{start + i}",
                    label="pos",
                    split=("train", "val", "test")[i % 3],
                )
                for i in range(n)
            ]
        )
        ItemDocument.objects.bulk_create(
            [
                ItemDocument(item=it, document=d, position=0)
                for it, d in zip(items, docs, strict=True)
            ]
        )
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    item=it,
                    worker=w,
                    variant=variant,
                    slot=k,
                    status="submitted",
                    lease_expires_at=lease,
                )
                for it in items
                for k, w in enumerate(workers)
            ]
        )
        annotations = Annotation.objects.bulk_create(
            [
                Annotation(assignment=a, time_spent_ms=int(rng.integers(1000, 60000)))
                for a in assignments
            ]
        )
        sets = RationaleSet.objects.bulk_create(
            [RationaleSet(annotation=a, position=0) for a in annotations]
        )
        item_doc = {it.pk: d.pk for it, d in zip(items, docs, strict=True)}
        spans = []
        for rset, a in zip(sets, assignments, strict=True):
            begin = int(rng.integers(0, TOKENS - 6))
            spans.append(
                RationaleSpan(
                    rationale_set=rset,
                    document_id=item_doc[a.item_id],
                    start_token=begin,
                    end_token=begin + int(rng.integers(1, 6)),
                    position=0,
                )
            )
        RationaleSpan.objects.bulk_create(spans)
    return project


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()


def child_populate(n_items: int) -> None:
    _django()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    t0 = time.perf_counter()
    populate(n_items)
    # Fresh bulk-loaded tables have no planner statistics until autovacuum analyzes them;
    # a production database has them, so the benchmark gathers them explicitly.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(json.dumps({"items": n_items, "setup_s": time.perf_counter() - t0}))


def child_step(layout: str) -> None:
    """The export step alone, in a process that has loaded Django and nothing else."""
    _django()
    from annotate.models import Project
    from exports.params import ExportParams
    from exports.services import export_build, export_write_datasheet
    from rationale_metrics.eraser_writer import ZipSink

    project = Project.objects.get(name=PROJECT)
    before = _rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        params = ExportParams(aggregation="majority", layout=layout)
        sink = ZipSink(Path(tmp) / "ds.zip", "ds")
        stats = export_build(project=project, params=params, sink=sink, scratch=Path(tmp))
        export_write_datasheet(project=project, params=params, stats=stats, sink=sink)
        sink.close()
        seconds = time.perf_counter() - start
        size = (Path(tmp) / "ds.zip").stat().st_size
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "export_s": seconds,
                "peak_rss_mb": peak,
                "rss_before_mb": before,
                "zip_mb": size / 1e6,
            }
        )
    )


def whole_command(layout: str, env: dict) -> dict:
    """`manage.py export_eraser` as a user runs it, measured by /usr/bin/time -v."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ds.zip"
        done = subprocess.run(
            [
                "/usr/bin/time",
                "-v",
                sys.executable,
                "manage.py",
                "export_eraser",
                PROJECT,
                str(out),
                "--layout",
                layout,
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    report = done.stderr
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", report).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", report).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    return {"command_s": seconds, "command_peak_rss_mb": peak_kb / 1024}


def _median(runs: list[dict], key: str) -> tuple[float, float, float]:
    values = [r[key] for r in runs]
    return statistics.median(values), min(values), max(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000])
    parser.add_argument(
        "--layouts", nargs="+", default=["docs", "docs.jsonl"], help="also: benchmark"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement")
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_export"
        ),
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, value = args.child
        child_populate(int(value)) if kind == "populate" else child_step(value)
        return
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "DJANGO_DEBUG": "false",
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
    }
    print(
        f"{'items':>8} {'layout':>10} {'step s':>14} {'step peak MB':>17} {'(before)':>8} "
        f"{'command s':>14} {'command peak MB':>17} {'zip MB':>7}",
        flush=True,
    )
    peaks: dict[str, dict[int, tuple[float, float]]] = {}
    for size in args.sizes:
        recreate_database(args.database_url)
        setup = run_child(__file__, "populate", str(size), env=env)
        print(f"{size:>8} filled in {setup['setup_s']:.0f} s", flush=True)
        runs: dict[str, list[dict]] = {layout: [] for layout in args.layouts}
        for _ in range(args.repeat):
            for layout in args.layouts:
                step = run_child(__file__, "step", layout, env=env)
                runs[layout].append({**step, **whole_command(layout, env)})
        for layout in args.layouts:
            r = runs[layout]
            step_s, step_lo, step_hi = _median(r, "export_s")
            peak, peak_lo, peak_hi = _median(r, "peak_rss_mb")
            cmd_s, cmd_lo, cmd_hi = _median(r, "command_s")
            cmd_peak, cmd_peak_lo, cmd_peak_hi = _median(r, "command_peak_rss_mb")
            before = statistics.median(x["rss_before_mb"] for x in r)
            zip_mb = statistics.median(x["zip_mb"] for x in r)
            peaks.setdefault(layout, {})[size] = (peak, cmd_peak)
            print(
                f"{size:>8} {layout:>10} {step_s:>5.1f} ({step_lo:.1f}-{step_hi:.1f}) "
                f"{peak:>6.0f} ({peak_lo:.0f}-{peak_hi:.0f}) {before:>8.0f} "
                f"{cmd_s:>5.1f} ({cmd_lo:.1f}-{cmd_hi:.1f}) "
                f"{cmd_peak:>6.0f} ({cmd_peak_lo:.0f}-{cmd_peak_hi:.0f}) {zip_mb:>7.1f}",
                flush=True,
            )
    if len(args.sizes) > 1:
        small, large = min(args.sizes), max(args.sizes)
        for layout, by_size in peaks.items():
            step = by_size[large][0] - by_size[small][0]
            command = by_size[large][1] - by_size[small][1]
            print(
                f"peak RSS growth {small} -> {large} items, {layout}: export step "
                f"{step:+.1f} MB, whole command {command:+.1f} MB"
            )


if __name__ == "__main__":
    main()
