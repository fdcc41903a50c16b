"""The PostgreSQL statements behind "next" and "submit": prepared once per connection,
atomic, and handing every case they do not cover to the general services."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Assignment, AssignmentStatus, ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from config.exceptions import ConflictError
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


@pytest.fixture
def project(postgres_only):
    return make_project(items=3, quota=2, min_highlight=1)


def annotator(project):
    user = UserFactory()
    ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    return user


def spans(lease, tokens=(0, 1)):
    docid = lease.item.item_documents.all()[0].document.docid
    return [[{"docid": docid, "start_token": t, "end_token": t + 1} for t in tokens]]


def prepared_here() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {name for (name,) in cursor.fetchall()}


def test_next_and_submit_each_run_one_prepared_statement(project):
    worker = annotator(project)
    client = client_for(worker)
    client.post(reverse("annotate:assignment-next", args=[project.id]))  # binds a variant

    with CaptureQueriesContext(connection) as next_queries:
        lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    docid = lease["item"]["documents"][0]["docid"]
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 2}]],
    }
    with CaptureQueriesContext(connection) as submit_queries:
        response = client.post(
            reverse("annotate:assignment-submit", args=[lease["id"]]), body, format="json"
        )

    assert response.status_code == 201
    assert {"rw_lease", "rw_submit", "rw_project_role"} <= prepared_here()
    executed = [q["sql"].split(" (")[0] for q in next_queries.captured_queries]
    assert "EXECUTE rw_lease" in executed
    assert "EXECUTE rw_bound_variant" not in executed, "the lease reads the bound variant"
    # Besides the savepoint (these tests run inside a transaction) and, the first time on
    # this connection, the PREPARE: the one statement.
    scaffolding = ("SAVEPOINT", "RELEASE SAVEPOINT", "PREPARE")
    work = [q["sql"] for q in submit_queries.captured_queries]
    assert [q.split(" (")[0] for q in work if not q.startswith(scaffolding)] == [
        "EXECUTE rw_submit"
    ]
    stored = Assignment.objects.get(pk=lease["id"])
    assert stored.status == AssignmentStatus.SUBMITTED
    assert stored.annotation.rationale_sets.get().spans.count() == 1


def test_a_failed_statement_leaves_the_callers_transaction_usable(project):
    # The tests run inside a transaction: the second submit's statement fails on the
    # unique client UUID, and the general service then answers with a clear conflict.
    first, second = annotator(project), annotator(project)
    reused = uuid.uuid4()
    lease = assignment_next(project=project, worker=first)
    annotation_submit(
        assignment_id=lease.pk, worker=first, client_uuid=reused, rationale_sets=spans(lease)
    )
    other = assignment_next(project=project, worker=second)

    with pytest.raises(ConflictError, match="belongs to another submission"):
        annotation_submit(
            assignment_id=other.pk, worker=second, client_uuid=reused, rationale_sets=spans(other)
        )

    assert Assignment.objects.get(pk=other.pk).status == AssignmentStatus.LEASED


def test_the_lease_is_a_loaded_instance(project):
    worker = annotator(project)
    lease = assignment_next(project=project, worker=worker)

    assert lease.slot in (0, 1)  # not selected by the statement: read on access
    lease.draft = {"sets": [[["d0", [1]]]], "current": 0}
    lease.save(update_fields=["draft"])

    assert Assignment.objects.filter(worker=worker).count() == 1
    assert Assignment.objects.get(pk=lease.pk).draft == lease.draft
    assert assignment_next(project=project, worker=worker).pk == lease.pk  # the open lease


def test_what_the_statements_decline_the_services_decide(project):
    worker = annotator(project)
    lease = assignment_next(project=project, worker=worker)
    Assignment.objects.filter(pk=lease.pk).update(
        lease_expires_at=lease.lease_expires_at.replace(year=2000)
    )

    late = annotation_submit(
        assignment_id=lease.pk, worker=worker, client_uuid=uuid.uuid4(), rationale_sets=spans(lease)
    )
    replay = annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=late.annotation.client_uuid,
        rationale_sets=spans(lease),
    )

    assert late.late and not late.replayed
    assert replay.replayed and replay.annotation.pk == late.annotation.pk


def test_a_lease_without_a_named_variant_comes_under_the_bound_one(project):
    from django.utils import timezone

    from annotate.services import hot_path_sql

    worker = annotator(project)
    bound = assignment_next(project=project, worker=worker).variant  # binds on first visit
    Assignment.objects.filter(worker=worker).update(status=AssignmentStatus.SKIPPED)

    lease = hot_path_sql.lease(
        project=project, worker_id=worker.pk, variant=None, now=timezone.now()
    )

    assert lease.variant_id == bound.pk and lease.variant == bound
    assert lease.variant.text == bound.text, "the variant comes loaded, for the response"


def test_a_worker_without_an_active_bound_variant_gets_nothing_from_the_statement(project):
    from django.utils import timezone

    from annotate.models import InstructionVariant
    from annotate.services import hot_path_sql

    newcomer, returning = annotator(project), annotator(project)
    lease = assignment_next(project=project, worker=returning)
    Assignment.objects.filter(pk=lease.pk).update(status=AssignmentStatus.SKIPPED)
    InstructionVariant.objects.filter(pk=lease.variant_id).update(active=False)
    now = timezone.now()

    for worker in (newcomer, returning):
        found = hot_path_sql.lease(project=project, worker_id=worker.pk, variant=None, now=now)

        assert found is hot_path_sql.UNBOUND
    assert not Assignment.objects.filter(worker=newcomer).exists()


def test_an_open_lease_comes_back_with_its_own_variant_after_a_rebinding(project):
    from annotate.models import InstructionVariant, WorkerVariantBinding

    worker = annotator(project)
    lease = assignment_next(project=project, worker=worker)
    other = InstructionVariant.objects.create(
        project=project, name="other", version=1, text="Mark the other way."
    )
    WorkerVariantBinding.objects.filter(worker=worker).update(variant=other)

    again = assignment_next(project=project, worker=worker)

    assert again.pk == lease.pk and again.variant == lease.variant != other


def most_rows_read(statement, values) -> int:
    """The most rows any node of the statement's plan touched (kept plus filtered out,
    over all its loops), from EXPLAIN ANALYZE of the prepared statement."""
    import json

    with connection.cursor() as cursor:
        sql, params = statement._statement(connection, cursor, values)
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan

    def walk(node):
        loops = node.get("Actual Loops", 1)
        read = (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops
        return max([read, *(walk(child) for child in node.get("Plans", []))])

    return walk(plan[0]["Plan"])


CROWD_ITEMS = 1_000


@pytest.fixture
def crowded(postgres_only):
    """A project of 1,000 items, all but the last ten with three open leases. The
    imported tables have statistics, as an import leaves them; the assignment table has
    none, as in a new deployment when the first crowd arrives."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.models import Document, Item, ItemDocument, ItemVariantFill
    from annotate.services.assignments import fill_rows_rebuild
    from config.bulk_sql import statistics_refresh

    crowd = make_project(items=CROWD_ITEMS, quota=3)
    variant = crowd.variants.get()
    items = list(Item.objects.filter(project=crowd).order_by("pk"))
    holders = UserFactory.create_batch(3)
    expires = timezone.now() + timedelta(hours=1)
    Assignment.objects.bulk_create(
        Assignment(item=item, worker=w, variant=variant, round=1, slot=n, lease_expires_at=expires)
        for item in items[:-10]
        for n, w in enumerate(holders)
    )
    fill_rows_rebuild(project=crowd)
    statistics_refresh(Document, Item, ItemDocument, ItemVariantFill)
    return crowd, variant, holders


# A plan that scans what grows with the project (every live slot, every document) to
# serve one annotator shows here as a node that read many rows; each statement reads a
# handful, whatever the statistics.
BOUNDED_ROWS = 5


def test_submit_reads_a_bounded_number_of_rows_however_many_leases_are_open(crowded):
    from django.utils import timezone

    from annotate.services import hot_path_sql

    crowd, _variant, holders = crowded
    lease = Assignment.objects.filter(worker=holders[0]).order_by("pk").last()
    docid = lease.item.item_documents.get().document.docid

    read = most_rows_read(
        hot_path_sql._SUBMIT_STATEMENT,
        {
            "assignment": lease.pk,
            "worker": holders[0].pk,
            "now": timezone.now(),
            "highlighted": 2,
            "label": None,
            "set_positions": [0],
            "positions": [0],
            "docids": [docid],
            "starts": [0],
            "ends": [2],
            "n_spans": 1,
            "n_sets": 1,
            "client_uuid": uuid.uuid4(),
            "time_spent_ms": 1000,
        },
    )

    assert Assignment.objects.filter(item__project=crowd).count() == 3 * (CROWD_ITEMS - 10)
    assert read <= BOUNDED_ROWS, f"a plan node read {read} rows to submit one annotation"


@pytest.mark.parametrize("variant_given", [True, False], ids=["named", "bound"])
def test_a_lease_reads_a_bounded_number_of_rows_however_full_the_project(crowded, variant_given):
    from datetime import timedelta

    from django.utils import timezone

    from annotate.models import WorkerVariantBinding
    from annotate.services import hot_path_sql

    crowd, variant, _holders = crowded
    newcomer = UserFactory()
    WorkerVariantBinding.objects.create(
        project=crowd, worker=newcomer, variant=variant, seed=1, ticket=1
    )
    now = timezone.now()

    read = most_rows_read(
        hot_path_sql._LEASE_STATEMENT,
        {
            "worker": newcomer.pk,
            "project": crowd.pk,
            "variant": variant.pk if variant_given else None,
            "quota": 3,
            "now": now,
            "expires": now + timedelta(minutes=30),
        },
    )

    assert Assignment.objects.filter(worker=newcomer).count() == 1  # it leased one
    assert read <= BOUNDED_ROWS, f"a plan node read {read} rows to lease one item"
