"""One item as the data manager's item page shows it: its texts once, every annotation of
every round with who made it, under which variant, its flags and its reviews, and per
token the share of annotators who highlighted it; and the choices the data manager's
filters offer.

It reads quality flags and reviews, so it lives in `qc` (the data manager reads across the
apps, docs/design/architecture.md#apps-and-layering), never in `annotate`.
"""

from __future__ import annotations

from django.db.models import Prefetch

from annotate.models import (
    Annotation,
    AssignmentStatus,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    ProjectMembership,
    Role,
)
from annotate.perturbation_types import available_types
from annotate.selectors import item_task_fields
from config.exceptions import NotFoundError
from qc.curation_selectors import item_curated_stale
from qc.item_list_selectors import item_list_items, item_list_rows
from qc.models import CuratedAnnotation, CuratedSet, CuratedSpan, FlagKind, Review
from rationale_metrics.agreement import token_highlight_shares


def _live_items(project: Project):
    return Item.objects.filter(project=project, deleted_at__isnull=True)


def item_get(*, project: Project, item_id: int) -> Item:
    """The project's item (not deleted), or NotFound."""
    item = _live_items(project).filter(pk=item_id).first()
    if item is None:
        raise NotFoundError("item not found")
    return item


def _item_get(project: Project, item_id: int) -> Item:
    item = (
        _live_items(project)
        .filter(pk=item_id)
        .select_related("project", "perturbation_of")
        .prefetch_related(
            Prefetch(
                "item_documents",
                queryset=ItemDocument.objects.select_related("document").order_by("position"),
            )
        )
        .first()
    )
    if item is None:
        raise NotFoundError("item not found")
    return item


def _annotations_of(item: Item) -> list[Annotation]:
    """The item's submitted annotations, every round, oldest first, with everything the
    page shows of them fetched in a fixed number of queries."""
    return list(
        Annotation.objects.filter(
            assignment__item=item, assignment__status=AssignmentStatus.SUBMITTED
        )
        .select_related("assignment__worker", "assignment__variant", "verdict")
        .prefetch_related(
            "rationale_sets__spans__document",
            "quality_flags",
            Prefetch(
                "reviews",
                queryset=Review.objects.select_related("reviewer").prefetch_related(
                    "set_scores__rationale_set"
                ),
            ),
        )
        .order_by("assignment__worker__username", "assignment__round", "pk")
    )


def _sets_of(annotation: Annotation) -> list[dict]:
    return [
        {
            "position": rset.position,
            "spans": [
                {
                    "docid": span.document.docid,
                    "start_token": span.start_token,
                    "end_token": span.end_token,
                }
                for span in sorted(rset.spans.all(), key=lambda s: s.position)
            ],
        }
        for rset in sorted(annotation.rationale_sets.all(), key=lambda s: s.position)
    ]


def _review_of(annotation: Annotation) -> dict:
    reviews = list(annotation.reviews.all())
    comments = []
    for review in reviews:
        for score in sorted(review.set_scores.all(), key=lambda s: s.rationale_set.position):
            if score.comment:
                comments.append(
                    {
                        "reviewer": review.reviewer.username,
                        "set": score.rationale_set.position,
                        "text": score.comment,
                    }
                )
        if review.comment:
            comments.append(
                {"reviewer": review.reviewer.username, "set": None, "text": review.comment}
            )
    verdict = getattr(annotation, "verdict", None)
    # Sent back from the data manager: the admin's comment stands in for reviews.
    if verdict is not None and verdict.means.get("sent_back_by"):
        comments.append(
            {
                "reviewer": verdict.means["sent_back_by"],
                "set": None,
                "text": verdict.means.get("comment", ""),
            }
        )
    return {
        "scores": [
            {
                "reviewer": review.reviewer.username,
                "comprehensiveness": review.comprehensiveness,
                "sets": [
                    {
                        "position": score.rationale_set.position,
                        "sufficiency": score.sufficiency,
                        "compactness": score.compactness,
                    }
                    for score in sorted(
                        review.set_scores.all(), key=lambda s: s.rationale_set.position
                    )
                ],
            }
            for review in reviews
        ],
        "comments": comments,
        "verdict": verdict.outcome if verdict else None,
    }


def _tokens_by_document(annotation: Annotation) -> dict[str, set[int]]:
    tokens: dict[str, set[int]] = {}
    for rset in annotation.rationale_sets.all():
        for span in rset.spans.all():
            tokens.setdefault(span.document.docid, set()).update(
                range(span.start_token, span.end_token)
            )
    return tokens


def item_token_agreement(
    annotations: list[Annotation], token_counts: dict[str, int]
) -> dict[str, list[float]]:
    """Per document, per token, the share of the item's annotators whose latest round
    highlighted it (any set). An annotation revised in a later round does not count: its
    revision speaks for its annotator."""
    revised = {a.revision_of_id for a in annotations if a.revision_of_id is not None}
    latest = [_tokens_by_document(a) for a in annotations if a.pk not in revised]
    return {
        docid: token_highlight_shares([tokens.get(docid, set()) for tokens in latest], count)
        for docid, count in token_counts.items()
    }


def _texts_of(item: Item) -> list[dict]:
    roles = item_task_fields(item).roles
    return [
        {
            "docid": link.document.docid,
            "role": role,
            "text": link.document.text,
            "tokens": link.document.tokens.tolist(),
            "sentences": link.document.sentences.tolist(),
        }
        for link, role in zip(item.item_documents.all(), roles, strict=True)
    ]


def item_detail_get(*, project: Project, item_id: int) -> dict:
    """The item page's data (the data manager contract's item detail). NotFound for an
    item of another project, or one deleted. The item's summary must be up to date
    (qc.services.item_summaries.item_summaries_refresh)."""
    item = _item_get(project, item_id)
    annotations = _annotations_of(item)
    texts = _texts_of(item)
    revised = {a.revision_of_id for a in annotations if a.revision_of_id is not None}
    # The list's row of the item (its status, counts, agreement), as the table shows it.
    (row,) = item_list_rows(list(item_list_items(project=project).filter(pk=item.pk)))
    return {
        "item": {
            **row,
            "query": item.query,
            "options": item.options,
            "answer": item.answer,
            "texts": texts,
        },
        "annotations": [
            {
                "id": annotation.pk,
                "assignment_id": annotation.assignment_id,
                "round": annotation.assignment.round,
                "annotator": {
                    "id": annotation.assignment.worker_id,
                    "username": annotation.assignment.worker.username,
                },
                "variant": {
                    "id": annotation.assignment.variant_id,
                    "name": annotation.assignment.variant.name,
                },
                "label": annotation.label,
                "time_spent_ms": annotation.time_spent_ms,
                "submitted_at": annotation.assignment.submitted_at or annotation.created_at,
                "revision_of": annotation.revision_of_id,
                "sets": _sets_of(annotation),
                # A flag stays open while its annotation is the annotator's latest round.
                "flags": [
                    {"kind": flag.kind, "open": annotation.pk not in revised}
                    for flag in sorted(annotation.quality_flags.all(), key=lambda f: f.kind)
                ],
                "review": _review_of(annotation),
            }
            for annotation in annotations
        ],
        "token_agreement": item_token_agreement(
            annotations, {text["docid"]: len(text["tokens"]) for text in texts}
        ),
        "curated": _curated_of(item),
    }


def _curated_of(item: Item) -> dict | None:
    """The item's curated gold, its sets as spans like an annotation's, or None."""
    curated = (
        CuratedAnnotation.objects.select_related("curator")
        .prefetch_related(
            Prefetch(
                "sets",
                queryset=CuratedSet.objects.order_by("position").prefetch_related(
                    Prefetch(
                        "spans",
                        queryset=CuratedSpan.objects.select_related("document")
                        .only("curated_set_id", "start_token", "end_token", "document__docid")
                        .order_by("position"),
                    )
                ),
            )
        )
        .filter(item=item)
        .first()
    )
    if curated is None:
        return None
    return {
        "curator": None
        if curated.curator_id is None
        else {"id": curated.curator_id, "username": curated.curator.username},
        "curated_at": curated.curated_at,
        "confirmed_at": curated.confirmed_at,
        "stale": item_curated_stale(item.pk),
        "rule": curated.rule,
        "label": curated.label,
        "answer": curated.answer,
        "sets": [
            {
                "position": gold_set.position,
                "spans": [
                    {
                        "docid": span.document.docid,
                        "start_token": span.start_token,
                        "end_token": span.end_token,
                    }
                    for span in gold_set.spans.all()
                ],
            }
            for gold_set in curated.sets.all()
        ],
    }


def data_manager_filter_choices(*, project: Project) -> dict:
    """What the data manager's set filters offer: the project's labels, variants,
    annotators, flag kinds and perturbation types."""
    return {
        "labels": [str(label) for label in project.labels or []],
        "variants": [
            {"id": pk, "name": f"{name} v{version}"}
            for pk, name, version in InstructionVariant.objects.filter(project=project)
            .order_by("name", "version")
            .values_list("pk", "name", "version")
        ],
        "annotators": [
            {"id": pk, "username": username}
            for pk, username in ProjectMembership.objects.filter(
                project=project, role=Role.ANNOTATOR
            )
            .order_by("user__username")
            .values_list("user_id", "user__username")
        ],
        "flag_kinds": [{"key": kind.value, "name": str(kind.label)} for kind in FlagKind],
        "perturbation_types": [
            {"key": t["key"], "name": t["name"]}
            for t in available_types(project.perturbation_types)
        ],
    }
