"""rows_update writes what bulk_update would, in one statement per batch, on both databases."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from config import bulk_sql
from config.bulk_sql import rows_update
from qc.models import ProjectWorker, QualificationStatus
from tests.factories import ProjectFactory, UserFactory


def _standings(n: int) -> list[ProjectWorker]:
    project = ProjectFactory()
    return [
        ProjectWorker.objects.create(
            project=project, worker=UserFactory(), status=QualificationStatus.QUALIFIED
        )
        for _ in range(n)
    ]


def test_each_row_gets_its_own_values_of_every_type(db):
    first, second, untouched = _standings(3)
    first.warnings, first.aggregates = [], {"median_seconds": None, "n": 0}
    second.warnings = ['too fast: "3 s" median', "empty rate 40%"]
    second.aggregates = {"median_seconds": 2.5, "n": 12, "nested": {"a": [1, 2]}}
    second.reason = "it's 'quoted'; DROP TABLE x; --"

    updated = rows_update(ProjectWorker, [first, second], ["warnings", "aggregates", "reason"])

    assert updated == 2
    for row in (first, second):
        stored = ProjectWorker.objects.get(pk=row.pk)
        assert (stored.warnings, stored.aggregates, stored.reason) == (
            row.warnings,
            row.aggregates,
            row.reason,
        )
    stored = ProjectWorker.objects.get(pk=untouched.pk)
    assert (stored.warnings, stored.aggregates, stored.reason) == ([], {}, "")


def test_one_statement_per_batch(db, monkeypatch):
    monkeypatch.setattr(bulk_sql, "BATCH_SIZE", 2)
    rows = _standings(5)
    for i, row in enumerate(rows):
        row.aggregates = {"i": i}

    with CaptureQueriesContext(connection) as queries:
        updated = rows_update(ProjectWorker, rows, ["aggregates"])

    assert updated == 5 and len(queries) == 3
    assert [r.aggregates for r in ProjectWorker.objects.order_by("pk")] == [
        {"i": i} for i in range(5)
    ]


def test_nothing_to_write_sends_nothing(db):
    with CaptureQueriesContext(connection) as queries:
        assert rows_update(ProjectWorker, [], ["aggregates"]) == 0
    assert len(queries) == 0
