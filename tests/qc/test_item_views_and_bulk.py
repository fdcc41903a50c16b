"""Saved views (/api/projects/{id}/item-views/) and bulk actions
(/api/projects/{id}/items/bulk/) of the data manager."""

import pytest
from django.urls import reverse

from annotate.models import Assignment, AssignmentStatus, Item
from annotate.services import assignment_next
from annotate.services.item_bulk_actions import ITEM_BULK_ACTIONS
from qc.models import AuditAction, AuditEvent, ItemSummary, ItemView, ReviewVerdict
from qc.services.item_summaries import item_summaries_refresh
from tests.annotate.workflow_helpers import submit_first_tokens
from tests.conftest import client_for
from tests.factories import UserFactory
from tests.qc.data_manager_helpers import make_world, work_on


@pytest.fixture
def world(db):
    return make_world(items=6)


def views_url(world, *view):
    name = "qc:item-view-detail" if view else "qc:item-view-list"
    return reverse(name, args=[world.project.pk, *view])


def bulk(world, who="admin", **body):
    return world.client(who).post(
        reverse("qc:item-bulk", args=[world.project.pk]), body, format="json"
    )


# ---------------------------------------------------------------- saved views


def test_a_private_view_is_its_creators_and_a_shared_one_everyones(world):
    researcher, curator = world.client("researcher"), world.client("curator")

    mine = researcher.post(views_url(world), {"name": "Train", "query": "split=train&page=3"})
    shared = researcher.post(
        views_url(world), {"name": "Disagreements", "query": "ordering=kappa", "shared": True}
    )

    assert mine.status_code == 201 and shared.status_code == 201
    assert mine.json()["query"] == "split=train"  # a view is a filter, not a page of it
    assert [v["name"] for v in researcher.get(views_url(world)).json()] == [
        "Disagreements",
        "Train",
    ]
    assert [v["name"] for v in curator.get(views_url(world)).json()] == ["Disagreements"]
    assert curator.patch(views_url(world, mine.json()["id"]), {"name": "x"}).status_code == 404


def test_only_its_creator_or_an_admin_changes_a_shared_view(world):
    shared = world.client("researcher").post(
        views_url(world), {"name": "Gold", "query": "status=gold", "shared": True}
    )
    url = views_url(world, shared.json()["id"])

    assert world.client("curator").patch(url, {"name": "Mine"}).status_code == 403
    assert world.client("admin").patch(url, {"name": "Gold items"}).json()["name"] == "Gold items"
    assert world.client("researcher").delete(url).status_code == 204
    assert not ItemView.objects.filter(project=world.project).exists()


def test_names_are_unique_per_creator_when_private_and_per_project_when_shared(world):
    researcher, admin = world.client("researcher"), world.client("admin")
    assert researcher.post(views_url(world), {"name": "A", "query": ""}).status_code == 201
    # Someone else may have a private view of the same name.
    assert admin.post(views_url(world), {"name": "A", "query": ""}).status_code == 201

    again = researcher.post(views_url(world), {"name": "A", "query": "split=val"})
    assert again.status_code == 400 and "name" in again.json()["detail"]
    assert (
        researcher.post(views_url(world), {"name": "S", "query": "", "shared": True}).status_code
        == 201
    )
    clash = admin.post(views_url(world), {"name": "S", "query": "", "shared": True})
    assert clash.status_code == 400 and "name" in clash.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "query": "colour=red"}, "query"),
        ({"name": "x", "query": "kappa_min=1&kappa_max=0"}, "query"),
        ({"name": "", "query": ""}, "name"),
        ({"name": "x" * 121, "query": ""}, "name"),
        ({"name": "x", "query": "q" * 4001}, "query"),
        ({"name": "x", "query": "", "shared": "yes"}, "shared"),
    ],
)
def test_a_bad_view_is_refused_naming_its_field(world, body, field):
    response = world.client("researcher").post(views_url(world), body)

    assert response.status_code == 400
    assert field in response.json() or response.json()["detail"].startswith(field)


# ---------------------------------------------------------------- bulk actions


def test_the_registry_holds_this_helpers_actions():
    assert {
        "send_back",
        "mark_gold",
        "unmark_gold",
        "exclude",
        "include",
        "assign_variant",
        "assign_annotators",
    } <= set(ITEM_BULK_ACTIONS)


def test_marking_gold_by_ids_touches_only_what_changes_and_writes_one_audit_event(world):
    first, second = world.items[0].pk, world.items[1].pk
    Item.objects.filter(pk=second).update(marked_gold=True)

    response = bulk(world, action="mark_gold", ids=[first, second])

    assert response.status_code == 200
    assert response.json()["touched"] == 1 and response.json()["matched"] == 2
    event = AuditEvent.objects.get(pk=response.json()["audit_event"])
    assert event.action == AuditAction.BULK_ACTION and event.actor == world.admin
    assert event.details == {
        "action": "mark_gold",
        "args": {},
        "matched": 2,
        "touched": 1,
        "ids": 2,
    }
    assert ItemSummary.objects.get(item_id=first).status == "gold"


def test_a_filter_acts_on_everything_it_matches_not_one_page(world):
    response = bulk(world, action="exclude", filter="split=train,val&page=1&page_size=1")

    chosen = {i.pk for i in world.items if i.split in ("train", "val")}
    assert response.json()["matched"] == len(chosen) == response.json()["touched"]
    assert set(Item.objects.filter(excluded=True).values_list("pk", flat=True)) == chosen
    event = AuditEvent.objects.get(pk=response.json()["audit_event"])
    assert event.details["filter"] == "split=train%2Cval&page=1&page_size=1"
    listed = world.list(status="excluded").json()
    assert listed["count"] == len(chosen)

    back = bulk(world, action="include", filter="status=excluded")
    assert back.json()["touched"] == len(chosen)
    assert not Item.objects.filter(excluded=True).exists()


def test_unmark_gold(world):
    Item.objects.filter(project=world.project).update(marked_gold=True)

    assert bulk(world, action="unmark_gold", filter="").json()["touched"] == 6


def test_items_of_another_project_or_deleted_are_never_touched(world):
    other = make_world(items=1)
    from django.utils import timezone

    Item.objects.filter(pk=world.items[0].pk).update(deleted_at=timezone.now())

    response = bulk(world, action="exclude", ids=[other.items[0].pk, world.items[0].pk])

    assert response.json() == {**response.json(), "matched": 0, "touched": 0}
    assert not Item.objects.filter(excluded=True).exists()


def test_send_back_opens_a_revision_of_undecided_work_only(world):
    first, second, _ = world.annotators
    (mine,) = work_on(world, first, 1)
    item_id = mine.assignment.item_id
    (decided,) = work_on(world, second, 1)
    ReviewVerdict.objects.create(annotation=decided, outcome="accepted", means={})

    response = bulk(
        world,
        action="send_back",
        ids=[item_id, decided.assignment.item_id],
        args={"comment": "Mark every word of the reason."},
    )

    assert response.status_code == 200, response.json()
    assert response.json()["touched"] == 1
    verdict = ReviewVerdict.objects.get(annotation=mine)
    assert verdict.outcome == "revise"
    assert verdict.means == {
        "sent_back_by": world.admin.username,
        "comment": "Mark every word of the reason.",
    }
    revision = Assignment.objects.get(item_id=item_id, worker=first, round=2)
    assert revision.status == AssignmentStatus.LEASED and revision.draft["sets"]
    assert ReviewVerdict.objects.get(annotation=decided).outcome == "accepted"
    item_summaries_refresh(project=world.project)
    assert ItemSummary.objects.get(item_id=item_id).status == "revising"
    # The revision is the annotator's next item.
    assert assignment_next(project=world.project, worker=first).pk == revision.pk


def test_sending_back_twice_sends_nothing_the_second_time(world):
    (mine,) = work_on(world, world.annotators[0], 1)
    ids = [mine.assignment.item_id]

    assert bulk(world, action="send_back", ids=ids).json()["touched"] == 1
    assert bulk(world, action="send_back", ids=ids).json()["touched"] == 0
    assert Assignment.objects.filter(item_id=ids[0], round=2).count() == 1


def test_assign_annotators_leases_items_to_named_annotators(world):
    third = world.annotators[2]
    chosen = [world.items[4].pk, world.items[5].pk]

    response = bulk(world, action="assign_annotators", ids=chosen, args={"annotators": [third.pk]})

    assert response.json()["touched"] == 2
    leases = Assignment.objects.filter(worker=third, status=AssignmentStatus.LEASED)
    assert sorted(leases.values_list("item_id", flat=True)) == chosen
    # Their next "next" serves what was assigned to them, oldest first.
    assert assignment_next(project=world.project, worker=third).item_id == chosen[0]
    # A second assignment of the same items to the same person changes nothing.
    again = bulk(world, action="assign_annotators", ids=chosen, args={"annotators": [third.pk]})
    assert again.json()["touched"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "paint", "ids": [1]}, "action"),
        ({"action": "exclude"}, "ids"),
        ({"action": "exclude", "ids": [1], "filter": "split=train"}, "ids"),
        ({"action": "exclude", "ids": ["a"]}, "ids"),
        ({"action": "exclude", "filter": "colour=red"}, "filter"),
        ({"action": "exclude", "filter": "kappa_min=1&kappa_max=0"}, "filter"),
        ({"action": "assign_annotators", "ids": [1], "args": {}}, "annotators"),
        (
            {"action": "assign_annotators", "ids": [1], "args": {"annotators": [999999]}},
            "annotators",
        ),
        ({"action": "send_back", "ids": [1], "args": {"comment": 5}}, "comment"),
    ],
)
def test_bad_bulk_input_is_refused_naming_the_field(world, body, field):
    response = bulk(world, **body)

    assert response.status_code == 400, response.json()
    text = str(response.json())
    assert field in text
    assert not AuditEvent.objects.filter(action=AuditAction.BULK_ACTION).exists()


def test_a_huge_ids_list_is_refused_naming_the_limit(world):
    response = bulk(world, action="exclude", ids=list(range(1, 10_002)))

    assert response.status_code == 400
    assert "10000" in str(response.json()["ids"])


def test_only_admins_act_in_bulk(world):
    for who in ("researcher", "curator"):
        assert bulk(world, who, action="exclude", ids=[world.items[0].pk]).status_code == 403
    outsider = UserFactory(username="dm-outsider")
    response = client_for(outsider).post(
        reverse("qc:item-bulk", args=[world.project.pk]),
        {"action": "exclude", "ids": [1]},
        format="json",
    )
    assert response.status_code == 404


def test_assign_variant_offers_the_items_under_that_variant_only(world):
    from annotate.models import ItemVariantFill, WorkerVariantBinding

    variants = {v.name: v for v in world.project.variants.all()}
    pinned = [world.items[0].pk, world.items[1].pk]

    response = bulk(
        world, action="assign_variant", ids=pinned, args={"variant": variants["guided"].pk}
    )

    assert response.json()["touched"] == 2
    assert set(
        ItemVariantFill.objects.filter(item_id__in=pinned).values_list("variant__name", flat=True)
    ) == {"guided"}
    # An annotator of the other variant is never given them, even once the rest is gone.
    worker = world.annotators[0]
    WorkerVariantBinding.objects.create(
        project=world.project, worker=worker, variant=variants["plain"], seed=0
    )
    served = []
    while (lease := assignment_next(project=world.project, worker=worker)) is not None:
        served.append(lease.item_id)
        submit_first_tokens(lease, worker)
    assert set(served) == {i.pk for i in world.items} - set(pinned)
    # Complete needs the pinned variant's quota only.
    row = ItemSummary.objects.get(item_id=pinned[0])
    assert [v["name"] for v in row.variants] == ["guided"]

    back = bulk(world, action="assign_variant", ids=pinned, args={"variant": None})
    assert back.json()["touched"] == 2
    assert ItemVariantFill.objects.filter(item_id__in=pinned).count() == 4


def test_assign_variant_refuses_another_projects_variant(world):
    other = make_world(items=1)
    variant = other.project.variants.first()

    response = bulk(
        world, action="assign_variant", ids=[world.items[0].pk], args={"variant": variant.pk}
    )

    assert response.status_code == 400 and "variant" in response.json()["detail"]
