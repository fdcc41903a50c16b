"""Creating a row in one round trip where a unique constraint may refuse it.

`transaction.atomic()` around a lone INSERT costs three round trips (BEGIN, INSERT,
COMMIT) where one would do: a single statement is atomic by itself in autocommit mode.
A first visit creates several such rows (the worker's standing, their variant binding),
and a crowd's first visits arrive together.
"""

from __future__ import annotations

from django.db import IntegrityError, connection, transaction


def create_unless_taken(model, **fields):
    """Create a `model` row with `fields` in one INSERT: on its own when no transaction
    encloses it, else under a savepoint, so that a refusal leaves the caller's
    transaction usable. Returns the instance, or None when an integrity constraint
    refused the row (typically: it exists already)."""
    try:
        if connection.in_atomic_block:
            with transaction.atomic():
                return model.objects.create(**fields)
        return model.objects.create(**fields)
    except IntegrityError:
        return None
