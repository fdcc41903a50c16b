"""Writing many rows' changed fields in one UPDATE statement.

Django's `bulk_update` builds a CASE WHEN expression per field with one branch per row
and resolves each through the ORM; for the quality-check batches (fifty workers'
standings, a hundred checks' agreement) that cost the Celery worker more CPU than the
checks themselves. Here the rows travel as a VALUES list that the UPDATE joins on the
primary key: the same single statement per batch, built as plain text.

Like `bulk_update`, this writes the given fields as they are on the instances: no
`save()`, no signals, no `auto_now`.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

BATCH_SIZE = 500


def rows_update(model, rows: Sequence, field_names: Sequence[str]) -> int:
    """Write `field_names` of each instance in `rows` (all of `model`, all saved before);
    returns the number of rows updated."""
    if not rows:
        return 0
    meta = model._meta
    fields = [meta.pk, *(meta.get_field(name) for name in field_names)]
    quote = connection.ops.quote_name
    # PostgreSQL types a VALUES column from its first row's text, so each is cast, and
    # names the columns here; SQLite calls them column1, column2, ...
    cast = connection.vendor == "postgresql"
    if cast:
        aliases = [f"c{i}" for i in range(len(fields))]
        values_as = f"v ({', '.join(aliases)})"
    else:
        aliases = [f"column{i + 1}" for i in range(len(fields))]
        values_as = "v"
    row_sql = (
        "(" + ", ".join(f"%s::{f.db_type(connection)}" if cast else "%s" for f in fields) + ")"
    )
    assignments = ", ".join(
        f"{quote(field.column)} = v.{alias}"
        for field, alias in zip(fields[1:], aliases[1:], strict=True)
    )
    table = quote(meta.db_table)
    updated = 0
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH_SIZE):
            batch = rows[start : start + BATCH_SIZE]
            params = [
                field.get_db_prep_save(getattr(row, field.attname), connection)
                for row in batch
                for field in fields
            ]
            cursor.execute(
                f"UPDATE {table} SET {assignments} "  # noqa: S608 - model names only
                f"FROM (VALUES {', '.join([row_sql] * len(batch))}) AS {values_as} "
                f"WHERE {table}.{quote(meta.pk.column)} = v.{aliases[0]}",
                params,
            )
            updated += cursor.rowcount
    return updated


def statistics_refresh(*models) -> None:
    """After a bulk write, refresh PostgreSQL's planner statistics of these models' tables
    (elsewhere, nothing). Until autovacuum gets to a freshly filled table, the planner
    takes it for nearly empty and plans sequential scans and hash joins over it; the
    statements of "next" and "submit" would read every item for each annotator."""
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for model in models:
            cursor.execute(f"ANALYZE {quote(model._meta.db_table)}")
