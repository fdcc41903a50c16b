"""Bulk actions of the data manager: run one of ITEM_BULK_ACTIONS
(annotate/services/item_bulk_actions.py) on chosen items or on every item a filter
matches, write one audit event, and bring the items' summaries up to date.

A list of ids is limited (qc.data_manager_serializers.BULK_IDS_LIMIT); a filter is not.
Either way the action runs synchronously, in one transaction, over batches of
BULK_BATCH_SIZE items, so that no statement grows with the selection: a failure anywhere
leaves nothing done. The send-back action lives here because it writes review verdicts.
"""

from __future__ import annotations

from django.db import transaction
from django.http import QueryDict

from annotate.models import Annotation, AssignmentStatus, Item, Project
from annotate.services import assignment_revision_create
from annotate.services.item_bulk_actions import ITEM_BULK_ACTIONS
from config.exceptions import ApplicationError
from qc.filters import ItemListFilter
from qc.models import AuditAction, AuditEvent, ReviewVerdict, VerdictOutcome
from qc.services.item_summaries import item_summaries_refresh

BULK_BATCH_SIZE = 1_000
SEND_BACK_COMMENT_MAX_CHARS = 5_000


def item_bulk_selection(
    *, project: Project, ids: list[int] | None, item_filter: QueryDict | None
) -> list[int]:
    """The ids of the items chosen: the listed ones of this project (not deleted), or
    every item the list's filter matches, not only one page of it."""
    items = Item.objects.filter(project=project, deleted_at__isnull=True)
    if ids is not None:
        return sorted(items.filter(pk__in=ids).values_list("pk", flat=True))
    data = item_filter.copy()
    for paging in ("page", "page_size", "ordering"):
        data.pop(paging, None)
    item_summaries_refresh(project=project)
    filters = ItemListFilter(data=data, queryset=items.filter(summary__project=project))
    if not filters.is_valid():
        problems = "; ".join(
            f"{name}: {' '.join(map(str, m))}" for name, m in filters.errors.items()
        )
        raise ApplicationError(f"filter: {problems}")
    return list(filters.qs.order_by("pk").values_list("pk", flat=True))


def item_bulk_run(
    *,
    project: Project,
    acting_user,
    action: str,
    ids: list[int] | None = None,
    item_filter: QueryDict | None = None,
    args: dict | None = None,
) -> dict:
    run = ITEM_BULK_ACTIONS.get(action)
    if run is None:
        raise ApplicationError(f"action: one of {', '.join(sorted(ITEM_BULK_ACTIONS))}")
    args = args or {}
    with transaction.atomic():
        chosen = item_bulk_selection(project=project, ids=ids, item_filter=item_filter)
        # At least one call, with no items when nothing matched: bad args are refused
        # whatever the selection.
        batches = [
            chosen[start : start + BULK_BATCH_SIZE]
            for start in range(0, len(chosen), BULK_BATCH_SIZE)
        ] or [[]]
        touched = sum(run(project, batch, acting_user, args) for batch in batches)
        item_summaries_refresh(project=project, item_ids=chosen)
        details = {"action": action, "args": args, "matched": len(chosen), "touched": touched}
        if ids is not None:
            details["ids"] = len(ids)
        else:
            details["filter"] = item_filter.urlencode()
        event = AuditEvent.objects.create(
            project=project,
            actor=acting_user,
            action=AuditAction.BULK_ACTION,
            reason=f"{action} on {touched} of {len(chosen)} items",
            details=details,
        )
    return {"action": action, "touched": touched, "matched": len(chosen), "audit_event": event.pk}


def items_send_back(project: Project, items, acting_user, args: dict) -> int:
    """Send the items' undecided work back to its annotators for another round, as a
    failed review does (assignment_revision_create): the newest submitted annotation of
    each chain with no verdict yet gets a "revise" verdict carrying the admin's comment,
    and its annotator a revision with the previous highlights. Work already decided
    (accepted, discarded, or sent back) stays as it is: a verdict is given once. The
    annotations are locked as review_submit locks them, so a review landing at the same
    time is counted once, before or after. Returns how many items had work sent back."""
    comment = args.get("comment", "")
    if not isinstance(comment, str) or len(comment) > SEND_BACK_COMMENT_MAX_CHARS:
        raise ApplicationError(f"comment: text of at most {SEND_BACK_COMMENT_MAX_CHARS} characters")
    undecided = (
        Annotation.objects.filter(
            assignment__item__project=project,
            assignment__item_id__in=list(items),
            assignment__status=AssignmentStatus.SUBMITTED,
            revisions__isnull=True,
            verdict__isnull=True,
        )
        .select_for_update(of=("self",), no_key=True)
        .select_related("assignment__item__project", "assignment__worker")
        .order_by("pk")
    )
    touched: set[int] = set()
    for annotation in undecided:
        # Decided while we waited for its lock: the reviewers' verdict stands.
        if ReviewVerdict.objects.filter(annotation=annotation).exists():
            continue
        ReviewVerdict.objects.create(
            annotation=annotation,
            outcome=VerdictOutcome.REVISE,
            means={"sent_back_by": acting_user.username, "comment": comment},
            failed_properties=[],
        )
        assignment_revision_create(annotation=annotation)
        touched.add(annotation.assignment.item_id)
    return len(touched)
