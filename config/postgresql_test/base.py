"""The test settings' PostgreSQL backend: config.postgresql's, with a cheaper flush.

A transactional test (a live server, a Celery worker, many clients at once) ends with
Django's flush, which empties every table. Django's PostgreSQL flush is one TRUNCATE of all
of them: a new file for each of the ~60 tables and their indexes, which took 2 to 4 s a
test on CI's machine, against a few tenths of a second for DELETE of the few rows a test
leaves. Every foreign key Django makes is DEFERRABLE INITIALLY DEFERRED, so the deletes may
go in any order inside the flush's transaction, and the keys are checked when it commits.

A flush that resets sequences or cascades to tables outside the list is Django's own.
"""

from __future__ import annotations

from django.db.backends.postgresql.operations import DatabaseOperations as DjangoOperations

from config.postgresql import base


class DatabaseOperations(DjangoOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if not tables or reset_sequences or allow_cascade:
            return super().sql_flush(
                style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return [
            f"{style.SQL_KEYWORD('SET CONSTRAINTS ALL DEFERRED')};",
            *(
                f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
                for table in tables
            ),
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
