"""Query plans of the hot path on a project of 100,000 items (PostgreSQL).

    python bench/explain.py [--items 100000]

Builds a throwaway database with one project: --items items of ~100 words, the seven
preset variants (so 7 x items fill rows), three quarters of the items already annotated
under three variants, and workers with leases. Then prints EXPLAIN ANALYZE for every
statement "next item" and "submit" run (writes rolled back; prepared statements after
they settled on a plan), with the time each took next to the same statement on a
2,000-item project built the same way, the most rows any plan node produced (a scan
that grows with the project shows there), and flags any sequential scan of a big table.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import recreate_database

DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_explain"
)


def build(items: int, name: str):
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from annotate.models import (
        Assignment,
        AssignmentStatus,
        Document,
        InstructionVariant,
        Item,
        ItemDocument,
        Project,
        ProjectMembership,
        WorkerVariantBinding,
    )
    from annotate.services import variant_presets_install
    from annotate.services.assignments import fill_rows_rebuild

    rng = random.Random(3)
    project = Project.objects.create(name=name, labels=["neg", "pos"], annotators_per_item=3)
    text = " ".join(["word"] * 100)
    offsets = [[i * 5, i * 5 + 4] for i in range(100)]
    for start in range(0, items, 10_000):
        n = min(10_000, items - start)
        docs = Document.objects.bulk_create(
            [
                Document(
                    project=project,
                    docid=f"d{start + k}",
                    text=text,
                    tokens=offsets,
                    sentences=[[0, 100]],
                    token_count=100,
                    text_sha256=str(start + k),
                    tokenizer="bench",
                )
                for k in range(n)
            ]
        )
        rows = Item.objects.bulk_create(
            [
                Item(project=project, annotation_id=f"i{start + k}", label="pos", split="train")
                for k in range(n)
            ]
        )
        ItemDocument.objects.bulk_create(
            [ItemDocument(item=i, document=d, position=0) for i, d in zip(rows, docs, strict=True)]
        )
    variant_presets_install(project=project)
    variants = list(InstructionVariant.objects.filter(project=project).order_by("name"))
    workers = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"{name}-w{n}") for n in range(60)]
    )
    ProjectMembership.objects.bulk_create(
        [ProjectMembership(project=project, user=w, role="annotator") for w in workers]
    )
    WorkerVariantBinding.objects.bulk_create(
        [
            WorkerVariantBinding(project=project, worker=w, variant=variants[n % 3], seed=0)
            for n, w in enumerate(workers)
        ]
    )
    item_ids = list(
        Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)
    )
    now = timezone.now()
    done = item_ids[: items * 3 // 4]
    batch = []
    for item_id in done:
        for v in range(3):
            for slot in range(3):
                worker = workers[(v + 3 * rng.randrange(20))]
                batch.append(
                    Assignment(
                        item_id=item_id,
                        worker=worker,
                        variant=variants[v],
                        round=1,
                        slot=slot,
                        status=AssignmentStatus.SUBMITTED,
                        lease_expires_at=now,
                        submitted_at=now,
                    )
                )
        if len(batch) >= 30_000:
            Assignment.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    Assignment.objects.bulk_create(batch, ignore_conflicts=True)
    Assignment.objects.bulk_create(
        [
            Assignment(
                item_id=item_ids[len(done) + n],
                worker=workers[n],
                variant=variants[n % 3],
                slot=0,
                lease_expires_at=now + timedelta(minutes=30),
            )
            for n in range(30)
        ],
        ignore_conflicts=True,
    )
    fill_rows_rebuild(project=project)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return project, workers[45]


def hot_statements(project, worker):
    """What "next item" and "submit" run, with this project's values: the prepared reads,
    the lease and submit statements, and the expiry sweep (every few seconds)."""
    import uuid

    from django.contrib.auth import get_user_model
    from django.db.models import Q
    from django.utils import timezone

    from annotate.models import Assignment, AssignmentStatus
    from annotate.selectors import _PROJECT_WITH_ROLE
    from annotate.services import hot_path_sql
    from annotate.services.assignments import _BOUND_VARIANT
    from config.sessions.backend import SessionStore
    from config.sessions.backend import _statement as session_statement
    from qc.services.qualification import _STANDING

    now = timezone.now()
    users = get_user_model().objects
    free = users.get(username=f"{project.name}-w59")  # no lease yet: "next" leases one
    holder = users.get(username=f"{project.name}-w5")  # holds a lease to submit
    lease = (
        Assignment.objects.filter(worker=holder, status=AssignmentStatus.LEASED)
        .select_related("item")
        .first()
    )
    docid = lease.item.item_documents.first().document.docid
    sweep = Assignment.objects.filter(
        Q(lease_expires_at__lt=now),
        item__project=project,
        status=AssignmentStatus.LEASED,
        round=1,
    ).values_list("pk", "item_id", "variant_id")
    sweep_sql, sweep_params = sweep.query.sql_with_params()
    session = SessionStore()
    session.update(
        {"_auth_user_id": str(worker.pk), "_auth_user_backend": "x", "_auth_user_hash": ""}
    )
    session.create()
    return {
        "session and user": (session_statement(), {"key": session.session_key}),
        "roles and project": (_PROJECT_WITH_ROLE, {"project": project.pk, "user": worker.pk}),
        "qualification gate": (_STANDING, {"project": project.pk, "worker": worker.pk}),
        "variant, 1st visit": (_BOUND_VARIANT, {"project": project.pk, "worker": worker.pk}),
        "lease (next)": (
            hot_path_sql._LEASE_STATEMENT,
            {
                "worker": free.pk,
                "project": project.pk,
                "variant": None,  # the worker's bound variant, read by the statement
                "quota": project.annotators_per_item,
                "now": now,
                "expires": now + timedelta(minutes=30),
            },
        ),
        "submit": (
            hot_path_sql._SUBMIT_STATEMENT,
            {
                "assignment": lease.pk,
                "worker": holder.pk,
                "now": now,
                "highlighted": 4,
                "label": None,
                "set_positions": [0, 0],
                "positions": [0, 1],
                "docids": [docid, docid],
                "starts": [0, 10],
                "ends": [2, 12],
                "n_spans": 2,
                "n_sets": 1,
                "client_uuid": uuid.uuid4(),
                "time_spent_ms": 20_000,
            },
        ),
        "expiry sweep": (sweep_sql, sweep_params),
    }


BIG_TABLES = (
    "annotate_item",
    "annotate_assignment",
    "annotate_itemvariantfill",
    "annotate_document",
)
PREPARED_RUNS_BEFORE_PLAN = 6  # PostgreSQL settles on a prepared statement's plan by then


def plan_summary(statement, values) -> tuple[float, str, bool, int]:
    """Execution time, the top plan nodes, whether a big table is scanned whole, and the
    most rows any node produced. Writes are rolled back."""
    from django.db import connection, transaction

    from config.prepared_sql import PreparedStatement

    with transaction.atomic(), connection.cursor() as cursor:
        if isinstance(statement, PreparedStatement):
            sql, params = statement._statement(connection, cursor, values)
            for _ in range(PREPARED_RUNS_BEFORE_PLAN):
                with transaction.atomic():
                    cursor.execute(sql, params)
                    transaction.set_rollback(True)
        else:
            sql, params = statement, values
        cursor.execute("EXPLAIN (ANALYZE) " + sql, params)
        plan = "\n".join(line for (line,) in cursor.fetchall())
        transaction.set_rollback(True)
    ms = float(re.search(r"Execution Time: ([\d.]+) ms", plan).group(1))
    nodes = [
        line.strip().split("  (")[0].lstrip("-> ").strip()
        for line in plan.splitlines()
        if "(cost=" in line
    ]
    seq = any(f"Seq Scan on {t} " in plan or plan.count(f"Seq Scan on {t}\n") for t in BIG_TABLES)
    most_rows = max((int(n) for n in re.findall(r"actual time=\S+ rows=(\d+)", plan)), default=0)
    return ms, "; ".join(nodes[:3]), seq, most_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    recreate_database(DATABASE_URL)
    os.environ["DATABASE_URL"] = DATABASE_URL
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    small = hot_statements(*build(2_000, "small"))
    large = hot_statements(*build(args.items, "large"))
    print(
        f"{'statement':20} {'2,000 items':>12} {f'{args.items:,} items':>14} {'most rows':>10}"
        f"  plan at {args.items:,} items"
    )
    for name in large:
        small_ms, _, _, _ = plan_summary(*small[name])
        large_ms, nodes, seq, most_rows = plan_summary(*large[name])
        flag = "  SEQUENTIAL SCAN OF A BIG TABLE" if seq else ""
        print(f"{name:20} {small_ms:>9.3f} ms {large_ms:>11.3f} ms {most_rows:>10}  {nodes}{flag}")


if __name__ == "__main__":
    main()
