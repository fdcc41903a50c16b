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

from django.db import connection

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

    def fetchall(self, values: dict) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(*self._statement(cursor, values))
            return cursor.fetchall()

    def fetchone(self, values: dict) -> tuple | None:
        with connection.cursor() as cursor:
            cursor.execute(*self._statement(cursor, values))
            return cursor.fetchone()

    def raw(self, model, values: dict) -> list:
        """The rows as `model` instances (columns named as its fields), as Model.raw makes."""
        with connection.cursor() as cursor:
            sql, params = self._statement(cursor, values)
        return list(model._default_manager.raw(sql, params))

    def _statement(self, cursor, values: dict) -> tuple[str, list]:
        """The SQL to send and its parameters, preparing the statement on this connection
        first if it never ran here."""
        if connection.vendor != "postgresql":
            return self._positional, [values[name] for name in self._order]
        prepared = _prepared.setdefault(connection.connection, set())
        if self.name not in prepared:
            cursor.execute(self._prepare)
            prepared.add(self.name)
        return self._execute, [values[name] for name in self.parameters]


def columns(model, alias: str) -> str:
    """`alias."column", ...` for every concrete field of `model`, for a SELECT list."""
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)
