"""The data manager's bulk actions by name (docs: the data manager API contract): each takes
the project, the chosen items (a queryset or ids), the acting user and the action's
arguments, and returns how many items it touched.

Apps above `annotate` add their own actions when they start (qc registers
"curation_start" in qc/apps.py), as `work_gate_register` does for the work gates, so that
this module never imports upwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

from annotate.models import Item, Project

ItemBulkAction = Callable[[Project, "QuerySet[Item] | list[int]", Any, dict], int]

ITEM_BULK_ACTIONS: dict[str, ItemBulkAction] = {}


def item_bulk_action_register(name: str, action: ItemBulkAction) -> None:
    ITEM_BULK_ACTIONS[name] = action
