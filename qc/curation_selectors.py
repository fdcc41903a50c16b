"""What curation reads: an item's annotations side by side as token sets, its curated gold,
the curation queue and its progress. The rules themselves are in qc/curation_rules.py.

An item's tokens are numbered across its documents in order (curation_rules explains);
`ItemTokens` converts between those numbers and (docid, token index).
"""

from __future__ import annotations

import operator
from collections import defaultdict
from dataclasses import dataclass, field
from functools import reduce
from itertools import combinations_with_replacement

from django.db.models import Exists, F, FloatField, OuterRef, Q, QuerySet
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Coalesce, NullIf

from annotate.models import (
    Annotation,
    AssignmentStatus,
    Item,
    ItemDocument,
    Project,
    RationaleSpan,
)
from annotate.serializers import item_for_annotator
from config.exceptions import ApplicationError, NotFoundError
from qc.curation_rules import (
    HAND,
    GoldAgreement,
    annotation_tokens,
    pairwise_agreement,
    token_shares,
)
from qc.curation_staleness import curated_stale, item_curated_stale
from qc.item_list_selectors import item_list_count
from qc.models import CuratedAnnotation, CuratedSpan, CurationRequest, FlagKind, QualityFlag
from qc.services.item_summaries import variant_pair_key

QUEUE_ORDERS = ("disagreement", "id")
QUEUE_STATES = ("uncurated", "curated", "stale", "all")
QUEUE_PAGE_SIZE = 50
QUEUE_PAGE_SIZE_MAX = 200
# The variant filter's ids at most: the order under it adds up every pair of them.
QUEUE_VARIANTS_MAX = 20


@dataclass(frozen=True)
class ItemTokens:
    """An item's documents in order with the number of their first token."""

    docids: list[str]
    offsets: dict[str, int]
    lengths: dict[str, int]

    @property
    def n_tokens(self) -> int:
        return sum(self.lengths.values())

    def code(self, docid: str, index: int) -> int:
        return self.offsets[docid] + index

    def codes(self, docid: str, start: int, end: int) -> range:
        return range(self.offsets[docid] + start, self.offsets[docid] + end)

    def spans(self, codes) -> list[tuple[str, int, int]]:
        """Token numbers as sorted (docid, start, end) runs, one document at a time."""
        runs: list[tuple[str, int, int]] = []
        for docid in self.docids:
            first, last = self.offsets[docid], self.offsets[docid] + self.lengths[docid]
            inside = sorted(c - first for c in codes if first <= c < last)
            for index in inside:
                if runs and runs[-1][0] == docid and runs[-1][2] == index:
                    runs[-1] = (docid, runs[-1][1], index + 1)
                else:
                    runs.append((docid, index, index + 1))
        return runs


def item_tokens_of(item_ids) -> dict[int, ItemTokens]:
    """Each item's token numbering: one query."""
    rows = (
        ItemDocument.objects.filter(item_id__in=list(item_ids))
        .order_by("item_id", "position")
        .values_list("item_id", "document__docid", "document__token_count")
    )
    found: dict[int, ItemTokens] = {}
    for item_id, docid, count in rows:
        tokens = found.setdefault(item_id, ItemTokens([], {}, {}))
        tokens.offsets[docid] = tokens.n_tokens
        tokens.lengths[docid] = count
        tokens.docids.append(docid)
    return found


def current_annotations(project: Project) -> QuerySet[Annotation]:
    """The annotations curation weighs: submitted, the newest round of each (a round sent
    back for revision is superseded by its revision), of items not deleted."""
    return Annotation.objects.filter(
        ~Exists(Annotation.objects.filter(revision_of=OuterRef("pk"))),
        assignment__item__project=project,
        assignment__item__deleted_at__isnull=True,
        assignment__status=AssignmentStatus.SUBMITTED,
    )


@dataclass
class AnnotationTokens:
    id: int
    item_id: int
    worker_id: int
    worker_name: str
    variant_id: int
    variant_name: str
    round: int
    label: str | None
    time_spent_ms: int
    submitted_at: object
    # Each rationale set's token numbers, in set order.
    sets: list[frozenset[int]] = field(default_factory=list)


def annotations_as_tokens(
    annotations: QuerySet[Annotation], tokens: dict[int, ItemTokens]
) -> dict[int, list[AnnotationTokens]]:
    """Each item's annotations (of `annotations`) with their sets as token numbers, oldest
    first: two queries."""
    rows = list(
        annotations.order_by("pk").values_list(
            "pk",
            "assignment__item_id",
            "assignment__worker_id",
            "assignment__worker__username",
            "assignment__variant_id",
            "assignment__variant__name",
            "assignment__round",
            "label",
            "time_spent_ms",
            "assignment__submitted_at",
        )
    )
    found = {row[0]: AnnotationTokens(*row) for row in rows}
    sets: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    spans = RationaleSpan.objects.filter(rationale_set__annotation_id__in=list(found)).values_list(
        "rationale_set__annotation_id",
        "rationale_set__position",
        "document__docid",
        "start_token",
        "end_token",
    )
    for annotation_id, position, docid, start, end in spans:
        numbering = tokens.get(found[annotation_id].item_id)
        chosen = sets[annotation_id][position]
        if numbering is not None and docid in numbering.offsets:
            chosen.update(numbering.codes(docid, start, end))
    by_item: dict[int, list[AnnotationTokens]] = defaultdict(list)
    for annotation_id, annotation in found.items():
        by_position = sets.get(annotation_id, {})
        annotation.sets = [frozenset(by_position[p]) for p in sorted(by_position)]
        by_item[annotation.item_id].append(annotation)
    return by_item


def curated_sets_as_tokens(curated_ids, tokens: dict[int, ItemTokens]) -> dict[int, list]:
    """Each curated annotation's gold sets as token numbers, in order: one query."""
    rows = CuratedSpan.objects.filter(curated_set__curated_id__in=list(curated_ids)).values_list(
        "curated_set__curated_id",
        "curated_set__curated__item_id",
        "curated_set__position",
        "document__docid",
        "start_token",
        "end_token",
    )
    sets: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for curated_id, item_id, position, docid, start, end in rows:
        sets[curated_id][position].update(tokens[item_id].codes(docid, start, end))
    return {
        curated_id: [frozenset(by_position[p]) for p in sorted(by_position)]
        for curated_id, by_position in sets.items()
    }


def _token_lists(codes: frozenset[int], numbering: ItemTokens) -> dict[str, list[int]]:
    """Token numbers as {docid: [token index, ...]}, the review page's shape."""
    found: dict[str, list[int]] = {}
    for docid, start, end in numbering.spans(codes):
        found.setdefault(docid, []).extend(range(start, end))
    return found


def _sets_out(sets, numbering: ItemTokens) -> list[dict]:
    return [
        {"position": position, "tokens": _token_lists(codes, numbering)}
        for position, codes in enumerate(sets)
    ]


def curation_item_get(*, project: Project, item_id: int) -> Item:
    item = (
        Item.objects.select_related("project")
        .prefetch_related("item_documents__document")
        .filter(project=project, pk=item_id, deleted_at__isnull=True)
        .first()
    )
    if item is None:
        raise NotFoundError("item not found in this project")
    return item


def curated_out(curated: CuratedAnnotation | None, sets, numbering: ItemTokens) -> dict | None:
    if curated is None:
        return None
    return {
        "version": curated.version,
        "rule": curated.rule,
        "by_hand": curated.rule == HAND,
        "curator": None
        if curated.curator_id is None
        else {"id": curated.curator_id, "username": curated.curator.username},
        "curated_at": curated.curated_at,
        "confirmed_at": curated.confirmed_at,
        "stale": item_curated_stale(curated.item_id),
        "label": curated.label,
        "answer": curated.answer,
        "sources": sorted(curated.sources.values_list("pk", flat=True)),
        "sets": _sets_out(sets, numbering),
    }


def curation_state(*, project: Project, item_id: int) -> dict:
    """Everything the curation page shows of one item: its texts, every current annotation
    as token sets side by side, each token's share of annotators, the item's agreement and
    its curated gold (null before any)."""
    item = curation_item_get(project=project, item_id=item_id)
    numbering = item_tokens_of([item.pk]).get(item.pk, ItemTokens([], {}, {}))
    annotations = annotations_as_tokens(
        current_annotations(project).filter(assignment__item=item), {item.pk: numbering}
    ).get(item.pk, [])
    flags: dict[int, list[str]] = defaultdict(list)
    for annotation_id, kind in QualityFlag.objects.filter(
        annotation_id__in=[a.id for a in annotations]
    ).values_list("annotation_id", "kind"):
        flags[annotation_id].append(kind)
    sets = [a.sets for a in annotations]
    kappa, f1 = pairwise_agreement(sets, numbering.n_tokens)
    curated = CuratedAnnotation.objects.select_related("curator").filter(item=item).first()
    gold = curated_sets_as_tokens([curated.pk], {item.pk: numbering}) if curated else {}
    shown = item_for_annotator(item)
    offset = 0
    for document in shown["documents"]:
        document["first_token"] = offset
        offset += len(document["tokens"])
    return {
        "item": {"id": item.pk, **shown, "marked_gold": item.marked_gold},
        "labels": project.labels,
        "language": project.language,
        "n_tokens": numbering.n_tokens,
        "annotations": [
            {
                "id": a.id,
                "annotator": {"id": a.worker_id, "username": a.worker_name},
                "variant": {"id": a.variant_id, "name": a.variant_name},
                "round": a.round,
                "label": a.label,
                "time_spent_ms": a.time_spent_ms,
                "submitted_at": a.submitted_at,
                "flags": sorted(flags.get(a.id, [])),
                "sets": _sets_out(a.sets, numbering),
            }
            for a in annotations
        ],
        "shares": token_shares(sets, numbering.n_tokens),
        "agreement": {"kappa": kappa, "f1": f1},
        "curated": curated_out(curated, gold.get(curated.pk, []) if curated else [], numbering),
        "queued": CurationRequest.objects.filter(item=item).exists(),
    }


# ---------------------------------------------------------------- the queue


@dataclass(frozen=True)
class QueueFilter:
    order: str = "disagreement"
    state: str = "uncurated"
    variants: tuple[int, ...] = ()
    flags: tuple[str, ...] = ()
    queued: bool = False


def _numbers(raw: str, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in raw.split(",") if part.strip())
    except ValueError:
        raise ApplicationError(f"{name}: a comma-separated list of ids, got {raw!r}") from None


def queue_filter_from(params) -> QueueFilter:
    """The queue's query parameters checked; unknown ones and bad values name themselves."""
    known = {"order", "state", "variant", "flag", "queued", "page", "page_size"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ApplicationError(f"{unknown[0]}: not a filter of the curation queue")
    order = params.get("order", "disagreement")
    if order not in QUEUE_ORDERS:
        raise ApplicationError(f"order: {order!r} is not one of {', '.join(QUEUE_ORDERS)}")
    state = params.get("state", "uncurated")
    if state not in QUEUE_STATES:
        raise ApplicationError(f"state: {state!r} is not one of {', '.join(QUEUE_STATES)}")
    flags = tuple(f for f in params.get("flag", "").split(",") if f)
    bad = [f for f in flags if f not in {*FlagKind.values, "any"}]
    if bad:
        raise ApplicationError(f"flag: {bad[0]!r} is not a kind of quality flag")
    variants = _numbers(params.get("variant", ""), "variant")
    if len(set(variants)) > QUEUE_VARIANTS_MAX:
        raise ApplicationError(f"variant: at most {QUEUE_VARIANTS_MAX} ids")
    queued_given = params.get("queued", "false")
    if queued_given not in ("true", "false"):
        raise ApplicationError("queued: true or false")
    return QueueFilter(
        order=order,
        state=state,
        variants=variants,
        flags=flags,
        queued=queued_given == "true",
    )


def page_from(params) -> tuple[int, int]:
    try:
        page = int(params.get("page", 1))
        size = int(params.get("page_size", QUEUE_PAGE_SIZE))
    except ValueError:
        raise ApplicationError("page, page_size: whole numbers") from None
    if page < 1:
        raise ApplicationError("page: 1 or more")
    if not 1 <= size <= QUEUE_PAGE_SIZE_MAX:
        raise ApplicationError(f"page_size: from 1 to {QUEUE_PAGE_SIZE_MAX}")
    return page, size


def _queue_annotations(project: Project, chosen: QueueFilter) -> QuerySet[Annotation]:
    annotations = current_annotations(project)
    if chosen.variants:
        annotations = annotations.filter(assignment__variant_id__in=chosen.variants)
    return annotations


def queue_items(*, project: Project, chosen: QueueFilter) -> QuerySet[Item]:
    """The items the queue's filter matches, in no order. The project is named on the
    items and on their summaries, whose indexes lead with it (the disagreement order is
    theirs), as the data manager's list does."""
    annotations = _queue_annotations(project, chosen)
    items = Item.objects.filter(
        project=project,
        summary__project=project,
        deleted_at__isnull=True,
        pk__in=annotations.values("assignment__item_id"),
    )
    if chosen.flags:
        flagged = QualityFlag.objects.filter(annotation__in=annotations)
        if "any" not in chosen.flags:
            flagged = flagged.filter(kind__in=chosen.flags)
        items = items.filter(pk__in=flagged.values("annotation__assignment__item_id"))
    if chosen.queued:
        items = items.filter(curation_request__isnull=False)
    if chosen.state == "uncurated":
        items = items.filter(curated_annotation__isnull=True)
    elif chosen.state == "curated":
        items = items.filter(curated_annotation__isnull=False)
    elif chosen.state == "stale":
        items = items.filter(curated_stale())
    return items


def queue_ordered(items: QuerySet[Item], chosen: QueueFilter) -> QuerySet[Item]:
    """Most disagreement first: the lowest kappa (undefined kappa after every defined
    one), then the lowest F1 (undefined last), ties by id. Or by id.

    The agreement is the one the rows show: among the item's annotations, or, under a
    variant filter, among the annotations of the chosen variants alone (an item whose
    variants disagree with each other is no reason to curate one variant's annotations).
    The first is the summary's, in one index (qc_summary_disagreement); the second adds up
    the summary's sums by pair of variants, and the filtered items are sorted by it."""
    if chosen.order != "disagreement":
        return items.order_by("pk")
    if not chosen.variants:
        return items.order_by(
            F("summary__kappa").asc(nulls_last=True), F("summary__f1").asc(nulls_last=True), "pk"
        )
    return items.annotate(
        variants_kappa=_among_variants(chosen.variants, "kappa_sum", "kappa_pairs"),
        variants_f1=_among_variants(chosen.variants, "f1_sum", "pairs"),
    ).order_by(
        F("variants_kappa").asc(nulls_last=True), F("variants_f1").asc(nulls_last=True), "pk"
    )


def _among_variants(variants, total: str, count: str):
    """The mean (`total` over `count`, of ItemSummary.variant_pairs) over every pair of
    annotations whose variants are both among `variants`; null without such a pair."""
    keys = [
        variant_pair_key(first, second)
        for first, second in combinations_with_replacement(sorted(set(variants)), 2)
    ]

    def summed(name: str):
        parts = [
            Coalesce(
                Cast(
                    KeyTextTransform(name, KeyTransform(key, F("summary__variant_pairs"))),
                    FloatField(),
                ),
                0.0,
            )
            for key in keys
        ]
        return reduce(operator.add, parts)

    return summed(total) / NullIf(summed(count), 0.0)


def curation_queue(*, project: Project, chosen: QueueFilter, page: int, page_size: int) -> dict:
    """One page of the items to curate with their agreement, and the progress counts. The
    database sorts and pages (the summaries must be fresh: item_summaries_refresh first);
    a large count is estimated and says so, as the data manager's is (item_list_count)."""
    items = queue_ordered(queue_items(project=project, chosen=chosen), chosen)
    start = (page - 1) * page_size
    shown = list(items.values_list("pk", flat=True)[start : start + page_size + 1])
    has_next = len(shown) > page_size
    shown = shown[:page_size]
    if page == 1 and not has_next:
        count, estimated = len(shown), False
    else:
        count, estimated = item_list_count(items, project=project)
    numbering = item_tokens_of(shown)
    by_item = annotations_as_tokens(
        _queue_annotations(project, chosen).filter(assignment__item_id__in=shown), numbering
    )
    agreement = {
        item_id: pairwise_agreement(
            [a.sets for a in by_item.get(item_id, [])], numbering[item_id].n_tokens
        )
        for item_id in shown
    }
    rows = {
        row["pk"]: row
        for row in Item.objects.filter(pk__in=shown).values(
            "pk",
            "annotation_id",
            "split",
            "label",
            "curated_annotation__rule",
            "curation_request__pk",
        )
    }
    stale = set(
        Item.objects.filter(pk__in=shown).filter(curated_stale()).values_list("pk", flat=True)
    )
    flags: dict[int, set[str]] = defaultdict(set)
    for item_id, kind in QualityFlag.objects.filter(
        annotation__in=_queue_annotations(project, chosen).filter(assignment__item_id__in=shown)
    ).values_list("annotation__assignment__item_id", "kind"):
        flags[item_id].add(kind)
    results = [
        {
            "id": pk,
            "annotation_id": rows[pk]["annotation_id"],
            "split": rows[pk]["split"],
            "label": rows[pk]["label"],
            "annotations": len(by_item.get(pk, [])),
            "variants": sorted({a.variant_name for a in by_item.get(pk, [])}),
            "kappa": agreement[pk][0],
            "f1": agreement[pk][1],
            "flags": sorted(flags.get(pk, set())),
            "curated_rule": rows[pk]["curated_annotation__rule"],
            "curated_stale": pk in stale,
            "queued": rows[pk]["curation_request__pk"] is not None,
        }
        for pk in shown
    ]
    return {
        "count": count,
        "count_is_estimate": estimated,
        "results": results,
        "progress": curation_progress(project=project),
    }


def curation_progress(*, project: Project) -> dict:
    """How far curation is: items with annotations, curated by hand and by rule, left;
    and of the items put into a curation pass, how many are curated."""
    with_annotations = Item.objects.filter(
        project=project,
        deleted_at__isnull=True,
        pk__in=current_annotations(project).values("assignment__item_id"),
    )
    curated = CuratedAnnotation.objects.filter(item__project=project, item__deleted_at__isnull=True)
    by_hand = curated.filter(rule=HAND).count()
    by_rule = curated.exclude(rule=HAND).count()
    queued = CurationRequest.objects.filter(item__project=project, item__deleted_at__isnull=True)
    total = with_annotations.count()
    return {
        "items": total,
        "curated_by_hand": by_hand,
        "curated_by_rule": by_rule,
        "left": with_annotations.filter(curated_annotation__isnull=True).count(),
        "stale": with_annotations.filter(curated_stale()).count(),
        "queued": queued.count(),
        "queued_left": queued.filter(Q(item__curated_annotation__isnull=True)).count(),
    }


# ---------------------------------------------------------------- figures against the gold


def curated_gold_agreement(*, project: Project) -> dict | None:
    """Each annotator's and each variant's token F1 and kappa against the curated gold, over
    the curated items' current annotations (the ones the curators adjudicated); None when
    the project has no curated item yet."""
    curated = dict(
        CuratedAnnotation.objects.filter(
            item__project=project, item__deleted_at__isnull=True
        ).values_list("pk", "item_id")
    )
    if not curated:
        return None
    rules = dict(CuratedAnnotation.objects.filter(pk__in=list(curated)).values_list("pk", "rule"))
    numbering = item_tokens_of(curated.values())
    gold_sets = curated_sets_as_tokens(curated, numbering)
    by_item = annotations_as_tokens(
        current_annotations(project).filter(assignment__item_id__in=list(curated.values())),
        numbering,
    )
    tally = GoldAgreement()
    for curated_id, item_id in sorted(curated.items(), key=lambda pair: pair[1]):
        gold = frozenset().union(*gold_sets.get(curated_id, []))
        tally.add_item(
            [
                (a.worker_name, a.variant_name, annotation_tokens(a.sets))
                for a in by_item.get(item_id, [])
            ],
            gold,
            numbering[item_id].n_tokens,
        )
    return {
        "items": len(curated),
        "curated_by_hand": sum(rule == HAND for rule in rules.values()),
        "curated_by_rule": sum(rule != HAND for rule in rules.values()),
        "measure": "each current annotation's token F1 and Cohen's kappa against the curated "
        "gold (the union of its sets), mean per annotator and per variant",
        **tally.summary(),
    }
