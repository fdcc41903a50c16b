"""Curation writes: a curated annotation saved by hand, a batch curated by an auto-merge rule,
items put into a curation pass. Each writes its audit event in the same transaction, and none
touches an annotator's own annotation.

Two curators on one item: a save names the version it started from (0 for an item not yet
curated). The item's row is locked first, so saves of one item run one after the other, and
a save whose version is no longer current is refused with the current one (409): the curator
reloads and sees the other's work instead of overwriting it.
"""

from __future__ import annotations

from collections import Counter

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotate.models import Item, ItemDocument, Project, TaskType
from config.exceptions import ApplicationError, ConflictError, NotFoundError
from qc.curation_rules import HAND, AutoMergeRule, auto_merge
from qc.curation_selectors import (
    ItemTokens,
    annotations_as_tokens,
    current_annotations,
    item_tokens_of,
)
from qc.models import (
    AuditAction,
    AuditEvent,
    CuratedAnnotation,
    CuratedSet,
    CuratedSpan,
    CurationRequest,
)
from rationale_metrics.span_rules import RationaleSetsProblem, SpanRow, rationale_sets_check

# An auto-merge takes at most this many items in one request (the data manager narrows a
# larger selection first).
AUTO_MERGE_MAX_ITEMS = 20_000


def _documents_of(item_ids) -> dict[tuple[int, str], int]:
    """(item id, docid) -> document id, for the items' documents."""
    return {
        (item_id, docid): document_id
        for item_id, docid, document_id in ItemDocument.objects.filter(
            item_id__in=list(item_ids)
        ).values_list("item_id", "document__docid", "document_id")
    }


def _gold_sets_write(gold: list[tuple[CuratedAnnotation, list[list[SpanRow]]]]) -> None:
    """Each curated annotation's gold sets and their spans, in order: three inserts for any
    number of curated annotations."""
    documents = _documents_of({curated.item_id for curated, _ in gold})
    set_rows = CuratedSet.objects.bulk_create(
        CuratedSet(curated=curated, position=position)
        for curated, sets in gold
        for position in range(len(sets))
    )
    numbered = iter(set_rows)
    CuratedSpan.objects.bulk_create(
        CuratedSpan(
            curated_set=set_row,
            document_id=documents[(curated.item_id, docid)],
            start_token=start,
            end_token=end,
            position=position,
        )
        for curated, sets in gold
        for spans, set_row in zip(sets, numbered)  # noqa: B905 - numbered runs on across items
        for position, (docid, start, end) in enumerate(spans)
    )


def _sets_as_json(sets: list[list[SpanRow]]) -> list[list[list]]:
    return [[[docid, start, end] for docid, start, end in spans] for spans in sets]


def curated_sets_check(raw_sets, item: Item) -> list[list[SpanRow]]:
    """The gold sets as sorted span rows, checked as an annotator's submission is (spans
    inside the item's documents, no overlap within a set); empty sets left out."""
    counts = {link.document.docid: link.document.token_count for link in item.item_documents.all()}
    try:
        return rationale_sets_check(raw_sets, token_counts=counts, min_highlight=None)
    except RationaleSetsProblem as problem:
        raise ApplicationError(str(problem).replace("rationale_sets", "sets", 1)) from None


def curated_label_check(project: Project, item: Item, label: str | None) -> None:
    """A gold label names one of the project's labels (a multiple-choice item's: one of its
    own options); None keeps the item's own label."""
    if label is None:
        return
    allowed = (
        [str(o) for o in item.options]
        if project.task_type == TaskType.MULTIPLE_CHOICE
        else list(project.labels or [])
    )
    if allowed and label not in allowed:
        raise ApplicationError(f"label: {label!r} is not one of {', '.join(allowed)}")


def curated_answer_check(project: Project, answer) -> None:
    """A gold answer belongs to reading comprehension only: {"none": true}, or the answer's
    text (with, optionally, where it stands: document, start_char, end_char)."""
    if answer is None:
        return
    if project.task_type != TaskType.READING_COMPREHENSION:
        raise ApplicationError("answer: only a reading-comprehension item has a gold answer")
    if not isinstance(answer, dict):
        raise ApplicationError('answer: {"text": ...} or {"none": true}')
    if answer == {"none": True}:
        return
    text = answer.get("text")
    unknown = set(answer) - {"text", "document", "start_char", "end_char"}
    places = [answer.get(k) for k in ("document", "start_char", "end_char")]
    if (
        not isinstance(text, str)
        or not text.strip()
        or unknown
        or any(p is not None and (type(p) is not int or p < 0) for p in places)
    ):
        raise ApplicationError(
            'answer: {"text": the answer as the passage words it} (document, start_char and '
            'end_char optional, whole numbers) or {"none": true}'
        )


@transaction.atomic
def curated_annotation_save(
    *,
    project: Project,
    item_id: int,
    curator,
    sets,
    version: int,
    label: str | None = None,
    answer=None,
    sources: list[int] | None = None,
) -> CuratedAnnotation:
    """Store the item's gold sets (spans as the submit API takes them), label and answer,
    curated by hand, from `sources` (the item's current annotations; all of them when None).
    `version` is the version the curator started from: 0 when the item had none."""
    item = (
        Item.objects.select_for_update(of=("self",))
        .filter(project=project, pk=item_id, deleted_at__isnull=True)
        .first()
    )
    if item is None:
        raise NotFoundError("item not found in this project")
    item = Item.objects.prefetch_related("item_documents__document").get(pk=item.pk)
    existing = CuratedAnnotation.objects.select_related("curator").filter(item=item).first()
    current = existing.version if existing else 0
    if version != current:
        who = existing.curator.username if existing and existing.curator else "a rule"
        raise ConflictError(
            f"version: this item was curated again (version {current}, by {who}) since you "
            f"opened it at version {version}; reload to see it before saving",
            extra={"version": current},
        )
    rows = curated_sets_check(sets, item)
    curated_label_check(project, item, label)
    curated_answer_check(project, answer)
    candidates = set(
        current_annotations(project).filter(assignment__item=item).values_list("pk", flat=True)
    )
    chosen = candidates if sources is None else set(sources)
    if not chosen <= candidates:
        raise ApplicationError(
            f"sources: {sorted(chosen - candidates)} are not current annotations of this item"
        )
    now = timezone.now()
    if existing is None:
        curated = CuratedAnnotation.objects.create(
            item=item, curator=curator, curated_at=now, rule=HAND, label=label, answer=answer
        )
    else:
        curated = existing
        curated.sets.all().delete()
        curated.curator, curated.curated_at, curated.rule = curator, now, HAND
        curated.label, curated.answer, curated.version = label, answer, current + 1
        curated.confirmed_at, curated.confirmed_by = None, None
        curated.save()
    curated.sources.set(chosen)
    _gold_sets_write([(curated, rows)])
    AuditEvent.objects.create(
        project=project,
        actor=curator,
        action=AuditAction.CURATE,
        reason=f"curated item {item.annotation_id} by hand",
        details={
            "item": item.pk,
            "rule": HAND,
            "version": curated.version,
            "sets": _sets_as_json(rows),
            "label": label,
            "answer": answer,
            "sources": sorted(chosen),
        },
    )
    return curated


@transaction.atomic
def curated_annotation_confirm(
    *, project: Project, item_id: int, curator, version: int
) -> CuratedAnnotation:
    """Confirm the item's curated gold as it is, once its annotations changed after it was
    curated (it is no longer stale until another annotation comes). `version` is the one
    the curator looked at: a gold saved again since then is refused (409), as a save is."""
    item = (
        Item.objects.select_for_update(of=("self",))
        .filter(project=project, pk=item_id, deleted_at__isnull=True)
        .first()
    )
    if item is None:
        raise NotFoundError("item not found in this project")
    curated = CuratedAnnotation.objects.select_related("curator").filter(item=item).first()
    if curated is None:
        raise ConflictError("this item has no curated gold to confirm; curate it first")
    if version != curated.version:
        who = curated.curator.username if curated.curator else "a rule"
        raise ConflictError(
            f"version: this item was curated again (version {curated.version}, by {who}) "
            f"since you opened it at version {version}; reload to see it before confirming",
            extra={"version": curated.version},
        )
    curated.confirmed_at, curated.confirmed_by = timezone.now(), curator
    curated.save(update_fields=["confirmed_at", "confirmed_by"])
    AuditEvent.objects.create(
        project=project,
        actor=curator,
        action=AuditAction.CURATE,
        reason=f"confirmed the curated gold of item {item.annotation_id} after its "
        "annotations changed",
        details={"item": item.pk, "confirmed": True, "version": curated.version},
    )
    return curated


def _merge_candidates(project: Project, items: QuerySet[Item] | list[int]) -> list[int]:
    chosen = Item.objects.filter(project=project, deleted_at__isnull=True)
    if isinstance(items, QuerySet):
        chosen = chosen.filter(pk__in=items.values("pk"))
    else:
        chosen = chosen.filter(pk__in=list(items))
    ids = list(chosen.order_by("pk").values_list("pk", flat=True)[: AUTO_MERGE_MAX_ITEMS + 1])
    if len(ids) > AUTO_MERGE_MAX_ITEMS:
        raise ApplicationError(
            f"ids: an auto-merge takes at most {AUTO_MERGE_MAX_ITEMS} items at once; narrow "
            "the selection"
        )
    return ids


@transaction.atomic
def curation_auto_merge(
    *,
    project: Project,
    curator,
    items: QuerySet[Item] | list[int],
    rule: AutoMergeRule,
    chosen_by: dict | None = None,
) -> dict:
    """Curate every chosen item whose annotators agree by `rule` with the rule's gold sets,
    marked with the rule's name. Items already curated (by hand or by rule) are left as
    they are. Returns how many were chosen, merged and skipped, with the reasons counted."""
    ids = _merge_candidates(project, items)
    # The items locked in id order (a save by hand locks its one item the same way): a
    # curator saving one of them waits for this batch, then finds its version changed.
    list(
        Item.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk").values("pk")
    )
    curated_already = set(
        CuratedAnnotation.objects.filter(item_id__in=ids).values_list("item_id", flat=True)
    )
    open_ids = [pk for pk in ids if pk not in curated_already]
    numbering = item_tokens_of(open_ids)
    by_item = annotations_as_tokens(
        current_annotations(project).filter(assignment__item_id__in=open_ids), numbering
    )
    skipped: Counter[str] = Counter({"already curated": len(curated_already)})
    merged: list[tuple[int, list, list[int]]] = []
    for pk in open_ids:
        annotations = by_item.get(pk, [])
        tokens = numbering.get(pk, ItemTokens([], {}, {}))
        outcome = auto_merge([a.sets for a in annotations], tokens.n_tokens, rule)
        if outcome.sets is None:
            skipped[outcome.skipped or "skipped"] += 1
            continue
        sets = [tokens.spans(codes) for codes in outcome.sets]
        merged.append((pk, sets, [a.id for a in annotations]))
    now = timezone.now()
    rows = CuratedAnnotation.objects.bulk_create(
        CuratedAnnotation(item_id=pk, curator=curator, curated_at=now, rule=rule.name)
        for pk, _, _ in merged
    )
    _gold_sets_write([(curated, sets) for curated, (_, sets, _) in zip(rows, merged, strict=True)])
    through = CuratedAnnotation.sources.through
    through.objects.bulk_create(
        through(curatedannotation_id=curated.pk, annotation_id=annotation_id)
        for curated, (_, _, sources) in zip(rows, merged, strict=True)
        for annotation_id in sources
    )
    report = {
        "rule": rule.name,
        "matched": len(ids),
        "merged": len(merged),
        "skipped": sum(n for n in skipped.values()),
        "skipped_because": {reason: n for reason, n in sorted(skipped.items()) if n},
    }
    AuditEvent.objects.create(
        project=project,
        actor=curator,
        action=AuditAction.CURATE,
        reason=f"curated {len(merged)} item(s) by rule {rule.name}",
        details={**report, "chosen_by": chosen_by or {"ids": ids}},
    )
    return report


def curation_start(
    project: Project, items: QuerySet[Item] | list[int], acting_user, args: dict
) -> int:
    """The data manager's bulk action "curation_start": put the items into the curation
    pass (the queue's "in a pass" view). Returns how many were not in it yet. The bulk
    endpoint writes the action's audit row."""
    chosen = Item.objects.filter(project=project, deleted_at__isnull=True)
    chosen = chosen.filter(
        pk__in=items.values("pk") if isinstance(items, QuerySet) else list(items)
    )
    ids = list(chosen.values_list("pk", flat=True))
    before = CurationRequest.objects.filter(item_id__in=ids).count()
    CurationRequest.objects.bulk_create(
        (CurationRequest(item_id=pk, requested_by=acting_user) for pk in ids),
        ignore_conflicts=True,
    )
    return CurationRequest.objects.filter(item_id__in=ids).count() - before
