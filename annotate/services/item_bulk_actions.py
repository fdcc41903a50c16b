"""The data manager's bulk actions on items, by name: ITEM_BULK_ACTIONS.

Each action takes (project, items, acting user, args) and returns how many items it
changed. `items` is a queryset or a list of ids, always of this project and never
deleted ones, and empty when nothing matched (the action still checks its args); the caller (qc.services.item_bulk.item_bulk_run) chose them, holds the
transaction, writes the one audit event and refreshes the items' summaries. An action
refuses bad `args` with an ApplicationError whose message starts with the argument's name.

Actions that need a higher app than this one register themselves from there with
`item_bulk_action_register` (send_back, which writes review verdicts, from qc), so that
this module imports nothing above `annotate`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.utils import timezone

from annotate.models import InstructionVariant, Item, Project, ProjectMembership, Role
from annotate.services.assignments import assignment_lease_for_worker, item_variant_pin
from annotate.services.deletion import item_bulk_delete
from config.exceptions import ApplicationError

ItemBulkAction = Callable[[Project, "QuerySet[Item] | list[int]", object, dict], int]

# How long a lease made for a named annotator stays theirs: long enough to come back to it,
# short enough that work nobody does returns to the pool.
ASSIGNED_LEASE_DAYS = 7
ASSIGN_ANNOTATORS_MAX = 50


def _items(project: Project, items) -> QuerySet[Item]:
    if isinstance(items, QuerySet):
        return items.filter(project=project)
    return Item.objects.filter(project=project, pk__in=list(items), deleted_at__isnull=True)


def _flag_set(field: str, value: bool) -> ItemBulkAction:
    def action(project: Project, items, acting_user, args: dict) -> int:
        return _items(project, items).exclude(**{field: value}).update(**{field: value})

    action.__name__ = f"items_{field}_{'set' if value else 'clear'}"
    return action


def items_assign_annotators(project: Project, items, acting_user, args: dict) -> int:
    """Leases of each item for each named annotator (args: {"annotators": [user ids]}),
    open for ASSIGNED_LEASE_DAYS; an annotator who had an item already, or whose variant's
    quota of it is full, is passed over. Returns how many items got at least one lease."""
    wanted = args.get("annotators")
    if (
        not isinstance(wanted, list)
        or not wanted
        or len(wanted) > ASSIGN_ANNOTATORS_MAX
        or not all(isinstance(pk, int) and not isinstance(pk, bool) for pk in wanted)
    ):
        raise ApplicationError(
            f"annotators: a list of 1 to {ASSIGN_ANNOTATORS_MAX} user ids of the project's annotators"
        )
    members = set(
        ProjectMembership.objects.filter(
            project=project, role=Role.ANNOTATOR, user_id__in=wanted
        ).values_list("user_id", flat=True)
    )
    strangers = sorted(set(wanted) - members)
    if strangers:
        raise ApplicationError(f"annotators: not annotators of this project: {strangers}")
    workers = list(get_user_model().objects.filter(pk__in=members).order_by("pk"))
    lease_until = timezone.now() + timedelta(days=ASSIGNED_LEASE_DAYS)
    touched = 0
    for item_id in _items(project, items).order_by("pk").values_list("pk", flat=True):
        leased = [
            assignment_lease_for_worker(
                project=project, item_id=item_id, worker=worker, lease_until=lease_until
            )
            for worker in workers
        ]
        touched += any(leased)
    return touched


def items_assign_variant(project: Project, items, acting_user, args: dict) -> int:
    """Annotate the items under one variant only (args: {"variant": id}), or under every
    active variant again (args: {"variant": null}); see item_variant_pin."""
    if "variant" not in args:
        raise ApplicationError("variant: the id of one of the project's active variants, or null")
    chosen = args["variant"]
    variant = None
    if chosen is not None:
        if isinstance(chosen, bool) or not isinstance(chosen, int):
            raise ApplicationError(
                "variant: the id of one of the project's active variants, or null"
            )
        variant = InstructionVariant.objects.filter(project=project, pk=chosen, active=True).first()
        if variant is None:
            raise ApplicationError(f"variant: {chosen} is not an active variant of this project")
    item_ids = list(_items(project, items).order_by("pk").values_list("pk", flat=True))
    return item_variant_pin(project=project, item_ids=item_ids, variant=variant)


ITEM_BULK_ACTIONS: dict[str, ItemBulkAction] = {
    "mark_gold": _flag_set("marked_gold", True),
    "unmark_gold": _flag_set("marked_gold", False),
    "exclude": _flag_set("excluded", True),
    "include": _flag_set("excluded", False),
    "assign_variant": items_assign_variant,
    "assign_annotators": items_assign_annotators,
    "delete": item_bulk_delete,
}


def item_bulk_action_register(name: str, action: ItemBulkAction) -> None:
    """Add an action from an app above this one (called once, from its AppConfig.ready)."""
    ITEM_BULK_ACTIONS[name] = action
