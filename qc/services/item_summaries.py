"""The data manager's per-item summaries (qc.models.ItemSummary): kept up to date from the
side of the reader, never from the annotators' hot path.

`item_summaries_refresh(project=...)` recomputes the items with activity since the
project's last refresh. Activity is found by id in the tables it writes (new items,
assignments, annotations, reviews, verdicts, flags: each id above the watermark) and by
time for leases, which end without a row of their own (a lease whose expiry passed since
the last refresh). Ids are handed out before a transaction commits, so a row can appear
below an id already seen; the watermark therefore never moves past a row younger than
COMMIT_GRACE, and those rows are read again by the next refresh. A skipped lease changes
no row the watermark sees: its item is recomputed when the lease would have run out.

It runs (a) before the item list answers, so a page is exact when loaded and costs a
handful of index lookups when nothing changed, (b) from Celery beat for every project,
which also writes the summaries of items that have none (an import that committed late),
and (c) for named items, synchronously, from the services that change an item outside
the hot path (bulk actions, review verdicts).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from datetime import timedelta

from django.contrib.postgres.aggregates import StringAgg
from django.contrib.postgres.search import SearchVector
from django.db import connection, transaction
from django.db.models import OuterRef, Subquery, TextField, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    DocumentRole,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    RationaleSpan,
)
from annotate.task_types import text_names_shown
from qc.item_status import ChainState, ItemState, item_status
from qc.models import (
    ItemSummary,
    ItemSummaryWatermark,
    QualityFlag,
    Review,
    ReviewVerdict,
    SetScore,
)
from qc.review_rules import COMPACTNESS, COMPREHENSIVENESS, SCALES, SUFFICIENCY
from rationale_metrics.agreement import (
    mean_pairwise_f1,
    mean_pairwise_kappa,
    pairwise_sums_by_group,
)

COMMIT_GRACE = timedelta(seconds=15)
BATCH_SIZE = 500
PREVIEW_WORDS = 12
PREVIEW_MAX_CHARS = 120
# The text search configuration: no stemming, so that it works for every language the
# projects have (English and Chinese) and finds what was typed.
SEARCH_CONFIG = "simple"

SUMMARY_FIELDS = [
    "project",
    "status",
    "submitted",
    "variants",
    "annotators",
    "kappa",
    "f1",
    "variant_pairs",
    "open_flags",
    "flag_kinds",
    "review_score",
    "majority_label",
    "last_activity",
]


def item_summaries_refresh(*, project: Project, item_ids: Iterable[int] | None = None) -> int:
    """Bring the summaries of `item_ids` (or of every item with activity since the last
    refresh) up to date. Returns how many items were recomputed."""
    if item_ids is not None:
        ids = sorted(set(item_ids))
        with transaction.atomic():
            for batch in _batches(ids):
                _summaries_write(project, batch)
        return len(ids)
    with transaction.atomic():
        # One refresh of a project at a time: a second waits, then finds nothing new.
        watermark, _ = ItemSummaryWatermark.objects.select_for_update().get_or_create(
            project=project
        )
        now = timezone.now()
        changed = _items_changed_since(project, watermark, now)
        for batch in _batches(sorted(changed)):
            _summaries_write(project, batch)
        watermark.refreshed_at = now
        watermark.save()
    return len(changed)


def item_summaries_complete(*, project: Project) -> int:
    """Write the summaries of the project's items that have none (beat's sweep: an item
    committed after a later one was seen escapes the watermark), and again those written
    before they held the agreement by pair of variants."""
    missing = list(
        Item.objects.filter(project=project, summary__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    missing += ItemSummary.objects.filter(
        project=project, variant_pairs__isnull=True, item__deleted_at__isnull=True
    ).values_list("item_id", flat=True)
    missing.sort()
    for batch in _batches(missing):
        with transaction.atomic():
            _summaries_write(project, batch)
    return len(missing)


def item_summaries_refresh_projects() -> int:
    """Every project that is not deleted: its summaries refreshed and completed. Returns
    how many items were written."""
    written = 0
    for project in Project.objects.filter(deleted_at__isnull=True).order_by("pk"):
        written += item_summaries_refresh(project=project)
        written += item_summaries_complete(project=project)
    return written


def _batches(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), BATCH_SIZE):
        yield ids[start : start + BATCH_SIZE]


# ---------------------------------------------------------------- what changed


def _items_changed_since(project: Project, watermark: ItemSummaryWatermark, now) -> set[int]:
    settled = now - COMMIT_GRACE
    sources = (
        ("item_id", Item.objects.filter(project=project), "pk"),
        ("assignment_id", Assignment.objects.filter(item__project=project), "item_id"),
        (
            "annotation_id",
            _annotations_of(project),
            "assignment__item_id",
        ),
        ("review_id", Review.objects.filter(annotation__in=_annotations_of(project)), None),
        ("verdict_id", ReviewVerdict.objects.filter(annotation__in=_annotations_of(project)), None),
        ("flag_id", QualityFlag.objects.filter(annotation__in=_annotations_of(project)), None),
    )
    changed: set[int] = set()
    for mark, rows, item_path in sources:
        seen = getattr(watermark, mark)
        item_path = item_path or "annotation__assignment__item_id"
        fresh = list(
            rows.filter(pk__gt=seen).order_by("pk").values_list("pk", item_path, "created_at")
        )
        changed.update(item_id for _, item_id, _ in fresh)
        young = [pk for pk, _, created_at in fresh if created_at >= settled]
        setattr(
            watermark, mark, (min(young) - 1) if young else max((r[0] for r in fresh), default=seen)
        )
    if watermark.refreshed_at is not None:
        ran_out = Assignment.objects.filter(
            item__project=project,
            status__in=[
                AssignmentStatus.LEASED,
                AssignmentStatus.EXPIRED,
                AssignmentStatus.SKIPPED,
            ],
            lease_expires_at__gt=watermark.refreshed_at - COMMIT_GRACE,
            lease_expires_at__lte=now,
        )
        changed.update(ran_out.values_list("item_id", flat=True))
    return changed


def _annotations_of(project: Project):
    return Annotation.objects.filter(assignment__item__project=project)


# ---------------------------------------------------------------- computing a batch


def _summaries_write(project: Project, item_ids: list[int]) -> None:
    now = timezone.now()
    items = {
        row["pk"]: row
        for row in Item.objects.filter(project=project, pk__in=item_ids).values(
            "pk", "excluded", "marked_gold", "pinned_variant_id"
        )
    }
    if not items:
        return
    variants = {
        row["pk"]: row
        for row in InstructionVariant.objects.filter(project=project).values("pk", "name", "active")
    }
    assignments = list(
        Assignment.objects.filter(item_id__in=items)
        .order_by("pk")
        .values(
            "pk",
            "item_id",
            "worker_id",
            "worker__username",
            "variant_id",
            "round",
            "status",
            "lease_expires_at",
            "created_at",
            "submitted_at",
            "annotation__pk",
            "annotation__label",
            "annotation__revision_of_id",
        )
    )
    annotations = [a for a in assignments if a["annotation__pk"] is not None]
    revised = {a["annotation__revision_of_id"] for a in annotations}
    newest = [a for a in annotations if a["annotation__pk"] not in revised]
    newest_ids = [a["annotation__pk"] for a in newest]
    all_annotation_ids = [a["annotation__pk"] for a in annotations]

    verdicts = dict(
        ReviewVerdict.objects.filter(annotation_id__in=all_annotation_ids).values_list(
            "annotation_id", "outcome"
        )
    )
    verdict_times = ReviewVerdict.objects.filter(annotation_id__in=all_annotation_ids).values_list(
        "annotation__assignment__item_id", "created_at"
    )
    reviews = list(
        Review.objects.filter(annotation_id__in=all_annotation_ids).values_list(
            "pk",
            "annotation_id",
            "annotation__assignment__item_id",
            "comprehensiveness",
            "created_at",
        )
    )
    set_scores: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for review_id, sufficiency, compactness in SetScore.objects.filter(
        review_id__in=[r[0] for r in reviews]
    ).values_list("review_id", "sufficiency", "compactness"):
        set_scores[review_id].append((sufficiency, compactness))
    flags = list(
        QualityFlag.objects.filter(annotation_id__in=newest_ids).values_list(
            "annotation__assignment__item_id", "kind", "created_at"
        )
    )
    tokens, sizes = _newest_tokens(items, newest_ids)

    by_item: dict[int, list[dict]] = defaultdict(list)
    for a in assignments:
        by_item[a["item_id"]].append(a)
    newest_by_item: dict[int, list[dict]] = defaultdict(list)
    for a in newest:
        newest_by_item[a["item_id"]].append(a)
    reviewed = {r[1] for r in reviews}
    review_scores: dict[int, list[float]] = defaultdict(list)
    activity: dict[int, list] = defaultdict(list)
    for review_id, _, item_id, comprehensiveness, created_at in reviews:
        review_scores[item_id].append(review_score(comprehensiveness, set_scores[review_id]))
        activity[item_id].append(created_at)
    for item_id, created_at in verdict_times:
        activity[item_id].append(created_at)
    flag_kinds: dict[int, list[str]] = defaultdict(list)
    for item_id, kind, created_at in flags:
        flag_kinds[item_id].append(kind)
        activity[item_id].append(created_at)

    rows = []
    for item_id, item in items.items():
        work = by_item[item_id]
        item_newest = newest_by_item[item_id]
        pinned = item["pinned_variant_id"]
        variant_rows = _variant_counts(work, variants, project.annotators_per_item, pinned)
        chains = tuple(
            ChainState(
                verdict=verdicts.get(a["annotation__pk"]),
                reviewed=a["annotation__pk"] in reviewed,
            )
            for a in item_newest
        )
        open_leases = sum(
            1
            for a in work
            if a["status"] == AssignmentStatus.LEASED
            and (a["round"] > 1 or a["lease_expires_at"] > now)
        )
        status = item_status(
            ItemState(
                excluded=item["excluded"],
                marked_gold=item["marked_gold"],
                chains=chains,
                submitted_per_variant=tuple(
                    v["submitted"]
                    for v in variant_rows
                    if (v["id"] == pinned if pinned else variants[v["id"]]["active"])
                ),
                quota=project.annotators_per_item,
                open_leases=open_leases,
            )
        )
        token_sets = [tokens.get(a["annotation__pk"], set()) for a in item_newest]
        kappa = f1 = None
        if len(token_sets) >= 2:
            kappa, _ = mean_pairwise_kappa(token_sets, sizes.get(item_id, 0))
            f1 = mean_pairwise_f1(token_sets)
        pair_sums = pairwise_sums_by_group(
            token_sets, [a["variant_id"] for a in item_newest], sizes.get(item_id, 0)
        )
        times = activity[item_id] + [a["created_at"] for a in work]
        times += [a["submitted_at"] for a in work if a["submitted_at"]]
        scores = review_scores[item_id]
        rows.append(
            ItemSummary(
                item_id=item_id,
                project=project,
                status=status,
                submitted=sum(v["submitted"] for v in variant_rows),
                variants=variant_rows,
                annotators=_annotators(item_newest),
                kappa=kappa,
                f1=f1,
                variant_pairs={
                    variant_pair_key(*pair): asdict(sums) for pair, sums in pair_sums.items()
                },
                open_flags=len(flag_kinds[item_id]),
                flag_kinds=sorted(set(flag_kinds[item_id])),
                review_score=sum(scores) / len(scores) if scores else None,
                majority_label=majority_label(a["annotation__label"] for a in item_newest),
                last_activity=max(times, default=None),
            )
        )
    existing = set(ItemSummary.objects.filter(item_id__in=items).values_list("item_id", flat=True))
    ItemSummary.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["item"],
        update_fields=[*SUMMARY_FIELDS, "refreshed_at"],
    )
    new_ids = [item_id for item_id in items if item_id not in existing]
    if new_ids:
        _texts_write(project, new_ids)


def variant_pair_key(first: int, second: int) -> str:
    """A pair of variants as ItemSummary.variant_pairs names it, the smaller id first."""
    return f"{min(first, second)}-{max(first, second)}"


def review_score(comprehensiveness: int, sets: list[tuple[int, int]]) -> float:
    """One review as one number from 0 (lowest on every scale) to 1 (highest): the mean of
    its scores, each scaled to its own range (comprehensiveness, and each set's
    sufficiency and compactness), so that no scale weighs more for being longer."""

    def scaled(value: int, name: str) -> float:
        low, high = SCALES[name]
        return (value - low) / (high - low)

    parts = [scaled(comprehensiveness, COMPREHENSIVENESS)]
    for sufficiency, compactness in sets:
        parts += [scaled(sufficiency, SUFFICIENCY), scaled(compactness, COMPACTNESS)]
    return sum(parts) / len(parts)


def majority_label(labels: Iterable[str | None]) -> str | None:
    """The label most annotators gave (ties: the first in alphabetical order); None when
    nobody gave one."""
    counts = Counter(label for label in labels if label)
    if not counts:
        return None
    return min(counts, key=lambda label: (-counts[label], label))


def _variant_counts(
    work: list[dict], variants: dict[int, dict], quota: int, pinned: int | None
) -> list[dict]:
    """Submitted chains per variant (a first-round annotation and its revisions count
    once), for every variant the item is offered under (the active ones, or the one it is
    pinned to) and every variant it has work under."""
    submitted = Counter(
        a["variant_id"]
        for a in work
        if a["annotation__pk"] and a["annotation__revision_of_id"] is None
    )
    worked = {a["variant_id"] for a in work}
    return [
        {"id": pk, "name": variant["name"], "submitted": submitted[pk], "quota": quota}
        for pk, variant in sorted(variants.items())
        if (pk == pinned if pinned else variant["active"]) or pk in worked
    ]


def _annotators(newest: list[dict]) -> list[dict]:
    return sorted(
        ({"id": a["worker_id"], "username": a["worker__username"]} for a in newest),
        key=lambda row: row["username"],
    )


def _newest_tokens(
    items: dict[int, dict], annotation_ids: list[int]
) -> tuple[dict[int, set[int]], dict[int, int]]:
    """Each annotation's highlighted tokens as positions in its item's texts laid end to
    end (document by document, in order), and each item's token count."""
    offsets: dict[tuple[int, int], int] = {}
    sizes: dict[int, int] = defaultdict(int)
    for item_id, document_id, token_count in (
        ItemDocument.objects.filter(item_id__in=items)
        .order_by("item_id", "position")
        .values_list("item_id", "document_id", "document__token_count")
    ):
        offsets[(item_id, document_id)] = sizes[item_id]
        sizes[item_id] += token_count
    tokens: dict[int, set[int]] = defaultdict(set)
    for annotation_id, item_id, document_id, start, end in RationaleSpan.objects.filter(
        rationale_set__annotation_id__in=annotation_ids
    ).values_list(
        "rationale_set__annotation_id",
        "rationale_set__annotation__assignment__item_id",
        "document_id",
        "start_token",
        "end_token",
    ):
        base = offsets.get((item_id, document_id), 0)
        tokens[annotation_id].update(range(base + start, base + end))
    return tokens, sizes


def text_preview(text: str) -> str:
    words = text.split()
    preview = " ".join(words[:PREVIEW_WORDS])
    cut = len(words) > PREVIEW_WORDS or len(preview) > PREVIEW_MAX_CHARS
    return preview[:PREVIEW_MAX_CHARS] + ("…" if cut else "")


def _texts_write(project: Project, item_ids: list[int]) -> None:
    """The first words of each text, and the search vector: written once per item, as
    the texts and the query never change."""
    names = text_names_shown(project.task_type, project.text_names)
    texts: dict[int, list[dict]] = defaultdict(list)
    for item_id, docid, text in (
        ItemDocument.objects.filter(item_id__in=item_ids, role=DocumentRole.TEXT)
        .order_by("item_id", "position")
        .values_list("item_id", "document__docid", "document__text")
    ):
        position = len(texts[item_id])
        name = names[position] if position < len(names) else docid
        texts[item_id].append({"name": name, "preview": text_preview(text)})
    summaries = ItemSummary.objects.filter(item_id__in=item_ids)
    ItemSummary.objects.bulk_update(
        [ItemSummary(item_id=item_id, texts=texts.get(item_id, [])) for item_id in item_ids],
        ["texts"],
    )
    if connection.vendor == "postgresql":
        documents = (
            ItemDocument.objects.filter(item_id=OuterRef("item_id"))
            .values("item_id")
            .annotate(text=StringAgg("document__text", " ", order_by="position"))
            .values("text")
        )
        query = Item.objects.filter(pk=OuterRef("item_id")).values("query")
        summaries.update(
            search_vector=SearchVector(
                Coalesce(Subquery(documents), Value(""), output_field=TextField()),
                Coalesce(Subquery(query), Value(""), output_field=TextField()),
                config=SEARCH_CONFIG,
            )
        )
