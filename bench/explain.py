"""Query plans of the hot path on a project of 100,000 items (PostgreSQL).

    python bench/explain.py [--items 100000]

Builds a throwaway database with one project: --items items of ~100 words, the seven
preset variants (so 7 x items fill rows), three quarters of the items already annotated
under three variants, and workers with leases. Then prints EXPLAIN ANALYZE for every
query "next item" and "submit" issue, with the time each took next to the same query on
a 2,000-item project built the same way, and flags any sequential scan of a big table.
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
    return project, workers[45], variants[0]


def hot_queries(project, worker, variant):
    """The querysets of next and submit, as the services build them."""
    from django.db.models import Exists, OuterRef, Q
    from django.utils import timezone

    from annotate.models import (
        LIVE_ASSIGNMENT,
        Annotation,
        Assignment,
        AssignmentStatus,
        ItemDocument,
        ItemVariantFill,
        ProjectMembership,
        WorkerVariantBinding,
    )
    from qc.models import ProjectWorker

    mine = Assignment.objects.filter(item=OuterRef("item_id"), worker=worker)
    some_item = Assignment.objects.filter(item__project=project).values_list("item_id", flat=True)[
        0
    ]
    own_assignment = Assignment.objects.filter(worker=worker).values_list("pk", flat=True)[0]
    return {
        "roles and project": ProjectMembership.objects.filter(
            project_id=project.pk, user=worker
        ).select_related("project"),
        "qualification gate": ProjectWorker.objects.filter(project=project, worker=worker).values(
            "status", "reason", "worker__worker_profile__status"
        ),
        "variant binding": WorkerVariantBinding.objects.filter(
            project=project, worker=worker
        ).select_related("variant"),
        "expiry sweep": Assignment.objects.filter(
            item__project=project,
            status=AssignmentStatus.LEASED,
            round=1,
            lease_expires_at__lt=timezone.now(),
        ).values_list("pk", "item_id", "variant_id"),
        "current lease": Assignment.objects.filter(
            Q(lease_expires_at__gte=timezone.now()) | Q(round__gt=1),
            item__project=project,
            worker=worker,
            status=AssignmentStatus.LEASED,
        ).order_by("created_at")[:1],
        "next fill row": ItemVariantFill.objects.filter(
            variant=variant, live__lt=project.annotators_per_item, item__held_out=False
        )
        .exclude(Exists(mine))
        .order_by("-live", "item_id")[:1],
        "free slot": Assignment.objects.filter(
            LIVE_ASSIGNMENT, item_id=some_item, variant=variant, round=1
        ).values_list("slot", flat=True),
        "item documents": ItemDocument.objects.filter(item_id=some_item).select_related(
            "document", "item"
        ),
        "submit: own assignment": Assignment.objects.select_related(
            "item__project", "variant"
        ).filter(pk=own_assignment, worker=worker),
        "retry lookup": Annotation.objects.filter(
            client_uuid="00000000-0000-0000-0000-000000000000"
        ),
    }


BIG_TABLES = (
    "annotate_item",
    "annotate_assignment",
    "annotate_itemvariantfill",
    "annotate_document",
)


def plan_summary(queryset) -> tuple[float, str, bool]:
    plan = queryset.explain(analyze=True)
    ms = float(re.search(r"Execution Time: ([\d.]+) ms", plan).group(1))
    nodes = [
        line.strip().split("  (")[0].lstrip("-> ").strip()
        for line in plan.splitlines()
        if "(cost=" in line
    ]
    seq = any(f"Seq Scan on {t} " in plan or plan.count(f"Seq Scan on {t}\n") for t in BIG_TABLES)
    return ms, "; ".join(nodes[:4]), seq


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
    small = hot_queries(*build(2_000, "small"))
    large = hot_queries(*build(args.items, "large"))
    print(
        f"{'query':24} {'2,000 items':>12} {f'{args.items:,} items':>14}  plan at {args.items:,} items"
    )
    for name in large:
        small_ms, _, _ = plan_summary(small[name])
        large_ms, nodes, seq = plan_summary(large[name])
        flag = "  SEQUENTIAL SCAN OF A BIG TABLE" if seq else ""
        print(f"{name:24} {small_ms:>9.3f} ms {large_ms:>11.3f} ms  {nodes}{flag}")


if __name__ == "__main__":
    main()
