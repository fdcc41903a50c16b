"""The data manager's bulk actions by name: each takes (project, the chosen items as a
queryset or a list of ids, the acting user, the action's args) and returns how many items
it touched. The bulk endpoint validates, calls one, and writes the audit row."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import QuerySet

from annotate.models import Project
from annotate.services.deletion import item_bulk_delete

ItemBulkAction = Callable[[Project, QuerySet | list[int], object, dict], int]

ITEM_BULK_ACTIONS: dict[str, ItemBulkAction] = {
    "delete": item_bulk_delete,
}
