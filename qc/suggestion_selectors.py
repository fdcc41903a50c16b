"""How much model suggestions pull annotators toward the model: each variant's first-round
annotations against the suggestions of a variant that shows them, and against the other
variants' annotations of the same items (rationale_metrics.suggestions computes)."""

from __future__ import annotations

from collections import defaultdict

from annotate.models import (
    Annotation,
    AssignmentStatus,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    RationaleSpan,
    item_not_deleted,
)
from annotate.suggestion_selectors import run_suggestions
from rationale_metrics.suggestions import SuggestionAnnotation, annotation_key, suggestion_pull

PERMUTATIONS = 2000


def _first_round_annotations(project: Project) -> list[SuggestionAnnotation]:
    rows = list(
        Annotation.objects.filter(
            item_not_deleted("assignment__item"),
            assignment__item__project=project,
            assignment__status=AssignmentStatus.SUBMITTED,
            assignment__round=1,
        )
        .order_by("pk")
        .values_list("pk", "assignment__item_id", "assignment__variant__name")
    )
    tokens: dict[int, set] = defaultdict(set)
    spans = RationaleSpan.objects.filter(
        rationale_set__annotation_id__in=[pk for pk, _, _ in rows]
    ).values_list("rationale_set__annotation_id", "document__docid", "start_token", "end_token")
    for annotation_id, docid, start, end in spans.iterator(chunk_size=5000):
        tokens[annotation_id].update((docid, t) for t in range(start, end))
    return [
        SuggestionAnnotation(item=item_id, variant=variant, tokens=frozenset(tokens[pk]))
        for pk, item_id, variant in rows
    ]


def _suggested_by_item(settings: dict, item_ids: set[int]) -> dict[int, frozenset]:
    table = run_suggestions(settings)
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for item_id, docid, count in ItemDocument.objects.filter(item_id__in=item_ids).values_list(
        "item_id", "document__docid", "document__token_count"
    ):
        counts[item_id][docid] = count
    found = {}
    for item_id, annotation_id, is_int in Item.objects.filter(pk__in=item_ids).values_list(
        "pk", "annotation_id", "annotation_id_is_int"
    ):
        key = annotation_key(int(annotation_id) if is_int else annotation_id)
        if key in table:
            found[item_id] = frozenset(
                (docid, t) for docid, t in table[key] if t < counts[item_id].get(docid, 0)
            )
    return found


def suggestion_pull_report(*, project: Project) -> dict:
    """Per variant that shows suggestions (its latest version that does): every variant's
    token F1 against those suggestions and against the other variants, with 95 % bootstrap
    intervals, and permutation tests against each variant. Empty when none shows any."""
    showing: dict[str, InstructionVariant] = {}
    for variant in InstructionVariant.objects.filter(
        project=project, suggestions__isnull=False
    ).order_by("name", "version"):
        showing[variant.name] = variant
    if not showing:
        return {"reports": []}
    annotations = _first_round_annotations(project)
    item_ids = {a.item for a in annotations}
    reports = []
    for name, variant in showing.items():
        suggested = _suggested_by_item(variant.suggestions, item_ids)
        figures = suggestion_pull(
            annotations, suggested, with_suggestions=name, permutations=PERMUTATIONS
        )
        reports.append(
            {
                "variant": name,
                "run": variant.suggestions["run"],
                "k": variant.suggestions["k"],
                "items_with_suggestions": len(suggested),
                **figures,
            }
        )
    return {"reports": reports}
