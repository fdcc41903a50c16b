"""The data manager's first page, per filter, sort and search, at 10k, 100k and 1M items
(PostgreSQL).

    python bench/data_manager.py [--sizes 10000 100000 1000000] [--repeat 5]
    python bench/data_manager.py --smoke      # tiny sizes: that it runs, not its figures
    python bench/data_manager.py --keep       # measure again on the database left by a run

Builds a throwaway database with one project per size (all in the same tables, as a
server holds many projects): one short text per item, three submitted annotations an item
under three variants by 30 annotators, flags on one annotation in twenty, and each
item's summary with spread-out figures. The rows are made with INSERT ... SELECT over
generate_series, each copying a seed row made through the ORM (the ORM's bulk_create
took minutes for a million items; product code never does this). The summaries'
watermark is set past every row, as after a refresh. Building 1M items took half an hour
when COMMIT still checked every row's foreign keys: with --keep, a size whose project the
database already holds is measured as it is (after migrating it), and only missing sizes
are built.

Then, for each query, the server time of GET /api/projects/{id}/items/?... through
Django's test client in this process (no network): the median of --repeat requests, each
with its summary refresh (nothing new: seven index lookups), the page, its count (exact
up to 10,000 matches, estimated above) and its serialization. The issue's targets: 200 ms
for a filter or sort, 500 ms for search, at 1M items. Last, for each filter, the count a
large list shows (estimated from a sample of the project's items) against the true count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import recreate_database, reference_loop_ms

DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_dm"
)
WORDS = ["film", "plot", "actor", "scene", "dog", "cat", "river", "music", "story", "ending"]
ANNOTATORS = 30
# The summaries' flag kinds, as open_flags has them (one item in seven, one kind each).
FLAG_KINDS_SQL = (
    "CASE WHEN i.id % 7 <> 0 THEN '[]'::jsonb WHEN i.id % 14 = 0 THEN '[\"empty\"]'::jsonb "
    "ELSE '[\"too_fast\"]'::jsonb END"
)


def _clone(cursor, model, seed_pk: int, source: str, overrides: dict[str, str], where="TRUE"):
    """INSERT copies of the seed row, one per row of `source` (SQL over `g` and others)
    that passes `where`, with `overrides` (column -> SQL expression) and every other
    column as the seed's. Numbers are written into the statement (no parameters), so that
    SQL's % is itself."""
    table = model._meta.db_table
    pk = model._meta.pk.column
    columns = [
        f.column
        for f in model._meta.concrete_fields
        if not (f.primary_key and f.column not in overrides)
    ]
    select = [overrides.get(c, f"s.{c}") for c in columns]
    cursor.execute(
        f"INSERT INTO {table} ({', '.join(columns)}) "
        f"SELECT {', '.join(select)} FROM {table} s, {source} "
        f"WHERE s.{pk} = {int(seed_pk)} AND ({where})"
    )


def build(size: int):
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotate.models import (
        Annotation,
        Assignment,
        AssignmentStatus,
        Document,
        InstructionVariant,
        Item,
        ItemDocument,
        Project,
        ProjectMembership,
        Role,
    )
    from qc.models import ItemSummary, ItemSummaryWatermark, QualityFlag

    user_model = get_user_model()
    with transaction.atomic():
        project = Project.objects.create(name=f"dm-{size}", labels=["neg", "pos"])
        admin = user_model.objects.create(username=f"dm-admin-{size}")
        ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
        variants = [
            InstructionVariant.objects.create(project=project, name=f"v{n}", text="Highlight.")
            for n in range(3)
        ]
        workers = user_model.objects.bulk_create(
            user_model(username=f"dm-{size}-w{n}") for n in range(ANNOTATORS)
        )
        ProjectMembership.objects.bulk_create(
            ProjectMembership(project=project, user=w, role=Role.ANNOTATOR) for w in workers
        )
        text = " ".join(WORDS * 2)
        offsets = [[i * 6, i * 6 + 4] for i in range(20)]
        document = Document.objects.create(
            project=project,
            docid="d0",
            text=text,
            tokens=offsets,
            sentences=[[0, 20]],
            token_count=20,
            text_sha256="0",
            tokenizer="bench",
        )
        item = Item.objects.create(
            project=project, annotation_id="i0", label="pos", split="train", query="question 0"
        )
        ItemDocument.objects.create(item=item, document=document, position=0)
        now = timezone.now()
        assignment = Assignment.objects.create(
            item=item,
            worker=workers[0],
            variant=variants[0],
            slot=0,
            status=AssignmentStatus.SUBMITTED,
            lease_expires_at=now,
            submitted_at=now,
        )
        annotation = Annotation.objects.create(assignment=assignment)
        flag = QualityFlag.objects.create(annotation=annotation, kind="too_fast")
        ItemSummary.objects.create(
            item=item,
            project=project,
            status="complete",
            variants=[{"id": v.pk, "name": v.name, "submitted": 1, "quota": 3} for v in variants],
            texts=[{"name": "d0", "preview": text}],
        )
        word = "(ARRAY[{}])[1 + (({{}}) % {})]".format(
            ", ".join(f"'{w}'" for w in WORDS), len(WORDS)
        )
        with connection.cursor() as cursor:
            # The copies are consistent by construction: without this, PostgreSQL queued a
            # check of every foreign key of every row (Django's are deferred) and ran them
            # all at COMMIT, most of the half hour a million items took. For this
            # transaction only, and only the bench's throwaway database.
            cursor.execute("SET LOCAL session_replication_role = replica")
            _clone(
                cursor,
                Document,
                document.pk,
                f"generate_series(1, {size - 1}) g",
                {
                    "docid": "'d' || g",
                    "text": " || ' ' || ".join(
                        word.format(f"g * {k} + g / 7") for k in (1, 3, 7, 11)
                    )
                    + " || ' film plot story'",
                    "text_sha256": "g::text",
                },
            )
            _clone(
                cursor,
                Item,
                item.pk,
                f"generate_series(1, {size - 1}) g",
                {
                    "annotation_id": "'i' || g",
                    "label": "CASE WHEN g % 3 = 0 THEN 'neg' ELSE 'pos' END",
                    "split": "(ARRAY['train', 'val', 'test'])[1 + g % 3]",
                    "query": "'question ' || g || ' about ' || " + word.format("g / 3"),
                },
            )
            # Fresh rows have no planner statistics: without them the joins below were
            # nested loops over whole tables (minutes at 100k items).
            cursor.execute("ANALYZE annotate_item")
            cursor.execute("ANALYZE annotate_document")
            cursor.execute(
                "INSERT INTO annotate_itemdocument (item_id, document_id, position, role) "
                "SELECT i.id, d.id, 0, 'text' FROM annotate_item i JOIN annotate_document d "
                "ON d.project_id = i.project_id AND d.docid = 'd' || substr(i.annotation_id, 2) "
                "WHERE i.project_id = %s AND i.id <> %s",
                [project.pk, item.pk],
            )
            # One item in fifty is a perturbed copy of the item before it.
            cursor.execute(
                "UPDATE annotate_item c SET perturbation_of_id = c.id - 1, "
                "perturbation_types = '[\"negation\"]' "
                "WHERE c.project_id = %s AND c.id %% 50 = 0 AND c.id - 1 > %s",
                [project.pk, item.pk],
            )
            worker_ids = "(ARRAY[{}]::bigint[])".format(", ".join(str(w.pk) for w in workers))
            variant_ids = "(ARRAY[{}]::bigint[])".format(", ".join(str(v.pk) for v in variants))
            _clone(
                cursor,
                Assignment,
                assignment.pk,
                "annotate_item i, generate_series(0, 2) k",
                {
                    "item_id": "i.id",
                    "worker_id": f"{worker_ids}[1 + ((i.id * 3 + k) % {ANNOTATORS})]",
                    "variant_id": f"{variant_ids}[1 + k]",
                },
                where=f"i.project_id = {project.pk} AND i.id <> {item.pk}",
            )
            cursor.execute("ANALYZE annotate_itemdocument")
            cursor.execute("ANALYZE annotate_assignment")
            cursor.execute(
                "INSERT INTO annotate_annotation (assignment_id, client_uuid, label, time_spent_ms, "
                "created_at) SELECT a.id, gen_random_uuid(), NULL, 1000, a.created_at "
                "FROM annotate_assignment a JOIN annotate_item i ON i.id = a.item_id "
                "WHERE i.project_id = %s AND a.id <> %s",
                [project.pk, assignment.pk],
            )
            cursor.execute("ANALYZE annotate_annotation")
            _clone(
                cursor,
                QualityFlag,
                flag.pk,
                "annotate_annotation n JOIN annotate_assignment a ON a.id = n.assignment_id "
                "JOIN annotate_item i ON i.id = a.item_id",
                {
                    "annotation_id": "n.id",
                    "kind": "CASE WHEN n.id % 40 = 0 THEN 'empty' ELSE 'too_fast' END",
                },
                where=f"i.project_id = {project.pk} AND n.id % 20 = 0 AND n.id <> {annotation.pk}",
            )
            statuses = "(ARRAY['waiting', 'in_progress', 'complete', 'in_review', 'revising', 'accepted', 'discarded', 'gold', 'excluded'])"
            _clone(
                cursor,
                ItemSummary,
                item.pk,
                "annotate_item i",
                {
                    "item_id": "i.id",
                    "status": f"{statuses}[1 + (hashint4(i.id::int) & 1023) % 9]",
                    "submitted": "(hashint4(i.id::int + 1) & 3)",
                    "kappa": "(hashint4(i.id::int + 2) & 65535) / 65535.0 * 2 - 1",
                    "f1": "(hashint4(i.id::int + 3) & 65535) / 65535.0",
                    "open_flags": "CASE WHEN i.id % 7 = 0 THEN 1 ELSE 0 END",
                    "flag_kinds": FLAG_KINDS_SQL,
                    "review_score": "CASE WHEN i.id % 3 = 0 THEN NULL "
                    "ELSE (hashint4(i.id::int + 4) & 65535) / 65535.0 END",
                    "majority_label": "i.label",
                    "last_activity": "now() - (hashint4(i.id::int + 5) & 65535) * interval '1 minute'",
                    "search_vector": "to_tsvector('simple', coalesce(i.query, '') || ' ' || "
                    "(SELECT d.text FROM annotate_itemdocument x JOIN annotate_document d "
                    "ON d.id = x.document_id WHERE x.item_id = i.id LIMIT 1))",
                },
                where=f"i.project_id = {project.pk} AND i.id <> {item.pk}",
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    marks = {
        "item_id": Item.objects.order_by("-pk").values_list("pk", flat=True).first(),
        "assignment_id": Assignment.objects.order_by("-pk").values_list("pk", flat=True).first(),
        "annotation_id": Annotation.objects.order_by("-pk").values_list("pk", flat=True).first(),
        "flag_id": QualityFlag.objects.order_by("-pk").values_list("pk", flat=True).first(),
    }
    ItemSummaryWatermark.objects.update_or_create(
        project=project, defaults={"refreshed_at": timezone.now(), **marks}
    )
    for other in ItemSummaryWatermark.objects.exclude(project=project):
        for name, value in marks.items():
            setattr(other, name, value)
        other.save()
    return project, admin, variants, workers


def built(size: int):
    """The project of `size` items an earlier run left, or None."""
    from django.contrib.auth import get_user_model

    from annotate.models import InstructionVariant, Project

    project = Project.objects.filter(name=f"dm-{size}").first()
    if project is None:
        return None
    user_model = get_user_model()
    admin = user_model.objects.get(username=f"dm-admin-{size}")
    variants = list(InstructionVariant.objects.filter(project=project).order_by("name"))
    workers = [user_model.objects.get(username=f"dm-{size}-w{n}") for n in range(ANNOTATORS)]
    return project, admin, variants, workers


def queries(variants, workers) -> list[tuple[str, dict]]:
    from django.utils import timezone

    from qc.filters import ORDERING_FIELDS

    day_ago = (timezone.now() - timezone.timedelta(days=1)).isoformat()
    found = [
        ("first page (by id)", {}),
        ("status=complete", {"status": "complete"}),
        ("status=waiting,revising", {"status": "waiting,revising"}),
        ("split=test", {"split": "test"}),
        ("label=neg", {"label": "neg"}),
        ("majority_label=neg", {"majority_label": "neg"}),
        ("variant", {"variant": variants[1].pk}),
        ("annotator", {"annotator": workers[5].pk}),
        ("flag=any", {"flag": "any"}),
        ("flag=none", {"flag": "none"}),
        ("flag=empty", {"flag": "empty"}),
        ("perturbation=perturbed", {"perturbation": "perturbed"}),
        ("perturbation=original", {"perturbation": "original"}),
        ("perturbation_type=negation", {"perturbation_type": "negation"}),
        ("kappa_min=0.9", {"kappa_min": 0.9}),
        ("f1_max=0.1", {"f1_max": 0.1}),
        ("review_score_min=0.95", {"review_score_min": 0.95}),
        ("submitted_min=3", {"submitted_min": 3}),
        ("last_activity_after", {"last_activity_after": day_ago}),
    ]
    for column in ORDERING_FIELDS:
        found.append((f"ordering={column}", {"ordering": column}))
        found.append((f"ordering=-{column}", {"ordering": f"-{column}"}))
    found += [
        ("search: dog", {"search": "dog"}),
        ("search: river music", {"search": "river music"}),
        ("search: question 4321", {"search": "question 4321"}),
        ("search + status + sort", {"search": "cat", "status": "complete", "ordering": "-kappa"}),
    ]
    return found


def measure(project, admin, query: dict, repeat: int) -> tuple[float, int, bool]:
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(admin)
    url = f"/api/projects/{project.pk}/items/"
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url, query)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:300]
    body = response.json()
    return statistics.median(times), body["count"], body["count_is_estimate"]


def estimate_and_truth(project, query: dict) -> tuple[int, int]:
    """The sample's estimate of the list's count (what a page says above 15,000) and the
    true count."""
    from django.http import QueryDict

    from qc.filters import ItemListFilter
    from qc.item_list_selectors import item_list_estimate, item_list_items

    data = QueryDict(mutable=True)
    data.update({name: str(value) for name, value in query.items()})
    filters = ItemListFilter(data=data, queryset=item_list_items(project=project))
    assert filters.is_valid(), filters.errors
    items = filters.qs
    return item_list_estimate(items, project=project), items.count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    parser.add_argument(
        "--keep", action="store_true", help="reuse the sizes an earlier run built, build the rest"
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.repeat = [300, 600], 1
    if not args.keep:
        recreate_database(DATABASE_URL)
    os.environ["DATABASE_URL"] = DATABASE_URL
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    if args.keep:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
    import logging

    # One line per request and per sign-in would bury the table.
    for name in ("rationale_workbench.requests", "axes"):
        logging.getLogger(name).setLevel(logging.WARNING)
    results: dict[str, dict[int, tuple[float, int, bool]]] = {}
    counts: dict[str, dict[int, tuple[int, int]]] = {}
    speed_before = reference_loop_ms()
    for size in args.sizes:
        started = time.perf_counter()
        kept = built(size) if args.keep else None
        if kept is None:
            project, admin, variants, workers = build(size)
            print(f"built {size:,} items in {time.perf_counter() - started:.0f} s", flush=True)
        else:
            project, admin, variants, workers = kept
            print(f"kept the {size:,} items an earlier run built", flush=True)
        for name, query in queries(variants, workers):
            measure(project, admin, query, 1)  # warm the caches and the plan
            results.setdefault(name, {})[size] = measure(project, admin, query, args.repeat)
            if "ordering" not in query or len(query) > 1:
                counts.setdefault(name, {})[size] = estimate_and_truth(project, query)
    header = "".join(f"{f'{size:,} items':>24}" for size in args.sizes)
    print(f"\nfirst page, server ms (median of {args.repeat}); matches (~ estimated)")
    print(f"{'query':32}{header}")
    for name, by_size in results.items():
        cells = ""
        for size in args.sizes:
            ms, count, estimate = by_size[size]
            cells += f"{ms:>10.1f} ms {('~' if estimate else '') + f'{count:,}':>10}"
        print(f"{name:32}{cells}")
    print("\nestimated count (item_list_estimate) / true count, and their ratio")
    print(f"{'query':32}{header}")
    for name, by_size in counts.items():
        cells = ""
        for size in args.sizes:
            estimate, truth = by_size[size]
            ratio = f"{estimate / truth:.2f}" if truth else "-"
            cells += f"{f'{estimate:,} / {truth:,}':>18} {ratio:>5}"
        print(f"{name:32}{cells}")
    print(
        f"\nmachine speed: a fixed Python loop took {reference_loop_ms():.0f} ms after the "
        f"measurements ({speed_before:.0f} ms before them; lower is faster); load average "
        + " ".join(f"{load:.1f}" for load in os.getloadavg())
    )


if __name__ == "__main__":
    main()
