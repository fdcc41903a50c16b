"""Export benchmark: items with three annotations each, in PostgreSQL, exported by majority vote.

    python bench/export.py [--sizes 20000 100000] [--database-url postgres://...]

Each size runs in a fresh child process on a fresh database: it bulk-creates the data,
then times `export_build` + datasheet + zip, and prints items/s and the child's peak RSS,
so the two sizes show whether memory grows with the number of items.
Targets: under 60 s for 100,000 items; under 300 MB RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import recreate_database, run_child

TOKENS = 40


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

    project = Project.objects.create(
        name="bench export", labels=["neg", "pos"], annotators_per_item=3
    )
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


def child(n_items: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.core.management import call_command

    from exports.params import ExportParams
    from exports.services import export_build, export_write_datasheet
    from rationale_metrics.eraser_writer import ZipSink

    call_command("migrate", verbosity=0)
    t0 = time.perf_counter()
    project = populate(n_items)
    # Fresh bulk-loaded tables have no planner statistics until autovacuum analyzes them;
    # a production database has them, so the benchmark gathers them explicitly.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    setup = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        params = ExportParams(aggregation="majority")
        sink = ZipSink(Path(tmp) / "ds.zip", "ds", Path(tmp) / "scratch")
        stats = export_build(project=project, params=params, sink=sink)
        export_write_datasheet(project=project, params=params, stats=stats, sink=sink)
        sink.close()
        seconds = time.perf_counter() - start
        size = (Path(tmp) / "ds.zip").stat().st_size
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "items": n_items,
                "setup_s": setup,
                "export_s": seconds,
                "peak_rss_mb": peak,
                "zip_mb": size / 1e6,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000])
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_export"
        ),
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(
        f"{'items':>8} {'setup s':>8} {'export s':>9} {'items/s':>9} {'peak RSS MB':>12} {'zip MB':>7}"
    )
    for size in args.sizes:
        recreate_database(args.database_url)
        env = {**os.environ, "DATABASE_URL": args.database_url, "DJANGO_DEBUG": "false"}
        r = run_child(__file__, str(size), env=env)
        print(
            f"{r['items']:>8} {r['setup_s']:>8.1f} {r['export_s']:>9.1f} {r['items'] / r['export_s']:>9.0f} "
            f"{r['peak_rss_mb']:>12.0f} {r['zip_mb']:>7.1f}"
        )


if __name__ == "__main__":
    main()
