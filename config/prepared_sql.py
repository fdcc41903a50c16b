"""Raw SQL that PostgreSQL parses and plans once per connection.

The few statements every request runs (loading the signed-in user, the caller's role in a
project, "next item" and "submit") cost PostgreSQL more to plan than to run, and Django,
through psycopg2, sends each as new text. A `PreparedStatement` is PREPAREd the first time
a connection runs it and EXECUTEd after. On other databases (SQLite for the demo) the same
SQL runs as a plain query.

Write the SQL with %(name)s parameters and give each its SQL type. Name columns rather
than `*`: PostgreSQL refuses to run a prepared statement whose columns changed under it.
"""

from __future__ import annotations

import re
import weakref

from django.db import DEFAULT_DB_ALIAS, connections

# The statements each open database connection has prepared (they last as long as it).
_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class PreparedStatement:
    def __init__(self, name: str, sql: str, parameters: list[tuple[str, str]]):
        self.name = name
        self.sql = sql
        self.parameters = [parameter for parameter, _ in parameters]
        position = {parameter: f"${i}" for i, parameter in enumerate(self.parameters, start=1)}
        body = re.sub(r"%\((\w+)\)s", lambda m: position[m.group(1)], sql)
        types = ", ".join(sql_type for _, sql_type in parameters)
        self._prepare = f"PREPARE {name} ({types}) AS {body}"
        self._execute = f"EXECUTE {name} ({', '.join(['%s'] * len(parameters))})"
        self._positional = re.sub(r"%\(\w+\)s", "%s", sql)
        self._order = re.findall(r"%\((\w+)\)s", sql)

    # Each method looks the connection up once: through django.db.connection, every
    # attribute read is a lookup in the connection handler's context-local storage, and
    # these statements run a few times per request.

    def fetchall(self, values: dict) -> list[tuple]:
        db = connections[DEFAULT_DB_ALIAS]
        with db.cursor() as cursor:
            cursor.execute(*self._statement(db, cursor, values))
            return cursor.fetchall()

    def fetchone(self, values: dict) -> tuple | None:
        db = connections[DEFAULT_DB_ALIAS]
        with db.cursor() as cursor:
            cursor.execute(*self._statement(db, cursor, values))
            return cursor.fetchone()

    def instances(self, model, values: dict, *, extra: tuple[str, ...] = ()) -> list:
        """The rows as `model` instances. The statement selects the `extra` columns first
        (set as attributes of each instance), then `columns(model, ...)`."""
        found = []
        for leading, instance in self.rows_with_instances(model, values, leading=len(extra)):
            if instance is None:
                continue
            for name, value in zip(extra, leading, strict=True):
                setattr(instance, name, value)
            found.append(instance)
        return found

    def rows_with_instances(self, model, values: dict, *, leading: int = 0) -> list[tuple]:
        """(the first `leading` columns, the rest as a `model` instance) for each row; the
        instance is None where the row's primary key column is NULL (an outer join that
        found no row of `model`). See `instance_from_row`."""
        db = connections[DEFAULT_DB_ALIAS]
        with db.cursor() as cursor:
            cursor.execute(*self._statement(db, cursor, values))
            rows = cursor.fetchall()
        return [(row[:leading], instance_from_row(db, model, row[leading:])) for row in rows]

    def _statement(self, db, cursor, values: dict) -> tuple[str, list]:
        """The SQL to send and its parameters, preparing the statement on connection `db`
        first if it never ran there."""
        if db.vendor != "postgresql":
            return self._positional, [values[name] for name in self._order]
        prepared = _prepared.setdefault(db.connection, set())
        if self.name not in prepared:
            cursor.execute(self._prepare)
            prepared.add(self.name)
        return self._execute, [values[name] for name in self.parameters]


def instance_from_row(db, model, row):
    """A `model` instance from the values of `columns(model, ...)` as connection `db`
    returned them, or None when the primary key is NULL (an outer join that found no row).

    Built with Model.from_db and the fields' own database converters, which is what the
    ORM does for a row: Model.raw did the same with three times the CPU, by matching
    column names to fields on every call."""
    names, converters, pk_position = _row_layout(db, model)
    values = list(row)
    if values[pk_position] is None:
        return None
    for position, (expression, field_converters) in converters:
        value = values[position]
        for converter in field_converters:
            value = converter(value, expression, db)
        values[position] = value
    return model.from_db(db.alias, names, values)


def _row_layout(db, model) -> tuple[list[str], list, int]:
    """The attribute names of `model`'s concrete fields; for each field that has any,
    (its position, (its column expression, its database converters)) on connection `db`;
    and the primary key's position."""
    key = (model, db.vendor)
    layout = _layouts.get(key)
    if layout is None:
        fields = model._meta.concrete_fields
        converters = []
        for position, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            found = db.ops.get_db_converters(column) + column.get_db_converters(db)
            if found:
                converters.append((position, (column, found)))
        pk_position = fields.index(model._meta.pk)
        layout = _layouts[key] = ([field.attname for field in fields], converters, pk_position)
    return layout


_layouts: dict = {}


def columns(model, alias: str) -> str:
    """`alias."column", ...` for every concrete field of `model`, for a SELECT list."""
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)
