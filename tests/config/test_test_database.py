"""The test databases on PostgreSQL: each a copy of the migrated template, emptied between
transactional tests by DELETE, every table, rows that reference each other included."""

import pytest
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from annotate.models import Document, Item, Project, ProjectMembership
from bench.common import TEMPLATE_PREFIX
from tests.annotate.workflow_helpers import make_project
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.postgres


def test_each_test_database_is_a_copy_of_the_migrated_template(postgres_only):
    template = connections["default"].settings_dict.get("TEST", {}).get("TEMPLATE") or ""

    assert template.startswith(TEMPLATE_PREFIX), (
        f"the test database was migrated from nothing, not copied (TEMPLATE={template!r})"
    )


@pytest.mark.django_db(transaction=True)
def test_the_flush_deletes_every_row_of_every_table_without_truncating(postgres_only):
    project = make_project(items=3)
    MembershipFactory(project=project, user=UserFactory(), role="annotator")
    assert Item.objects.exists() and Document.objects.exists()

    with CaptureQueriesContext(connection) as sent:
        call_command(
            "flush",
            interactive=False,
            verbosity=0,
            reset_sequences=False,
            inhibit_post_migrate=True,
        )

    flushed = [q["sql"] for q in sent.captured_queries if "DELETE FROM" in q["sql"]]
    assert not [q for q in sent.captured_queries if "TRUNCATE" in q["sql"]]
    assert len(flushed) == len(connection.introspection.django_table_names(only_existing=True))
    for model in (Project, Item, Document, ProjectMembership):
        assert not model.objects.exists(), model.__name__


def test_a_flush_that_resets_sequences_or_cascades_is_djangos_truncate(postgres_only):
    for option in ("reset_sequences", "allow_cascade"):
        sql = connection.ops.sql_flush(no_style(), ["annotate_item"], **{option: True})

        assert sql and sql[0].startswith("TRUNCATE"), (option, sql)
