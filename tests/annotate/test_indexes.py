"""The tables every lease and submit writes carry no index that another already covers, and
lookups by their foreign keys still find an index (PostgreSQL)."""

import pytest
from django.db import connection

HOT_TABLES = [
    "annotate_assignment",
    "annotate_itemvariantfill",
    "annotate_annotation",
    "annotate_rationaleset",
    "annotate_rationalespan",
    "qc_submissioncheck",
]


def _indexes(table: str) -> list[tuple[str, list[str], bool]]:
    """(name, columns in order, unique) of each index on `table`."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT i.relname, array_agg(a.attname ORDER BY k.position), x.indisunique
            FROM pg_index x
            JOIN pg_class i ON i.oid = x.indexrelid
            CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, position)
            JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
            WHERE x.indrelid = %s::regclass
            GROUP BY i.relname, x.indisunique
            """,
            [table],
        )
        return cursor.fetchall()


@pytest.mark.parametrize("table", HOT_TABLES)
def test_no_plain_index_is_the_leading_part_of_another(postgres_only, table):
    indexes = _indexes(table)

    redundant = [
        (name, other)
        for name, columns, unique in indexes
        if not unique
        for other, other_columns, _ in indexes
        if other != name
        and len(other_columns) > len(columns)
        and other_columns[: len(columns)] == columns
    ]

    assert redundant == []


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("annotate_assignment", "item_id"),
        ("annotate_assignment", "worker_id"),
        ("annotate_itemvariantfill", "variant_id"),
        ("annotate_rationaleset", "annotation_id"),
        ("annotate_rationaleset", "reference_item_id"),
        ("annotate_rationalespan", "rationale_set_id"),
        ("qc_submissioncheck", "project_id"),
    ],
)
def test_a_lookup_by_foreign_key_uses_an_index(postgres_only, table, column):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f'EXPLAIN SELECT * FROM "{table}" WHERE "{column}" = 1')  # noqa: S608
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "Index" in plan, plan
