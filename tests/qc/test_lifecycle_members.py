"""Members after they joined: roles changed, members removed; the accounts page's rules,
the audit trail, their leases, and a project that never loses its last admin."""

import pytest

from annotate.account_rules import Actor, Subject, membership_change_refusal
from annotate.models import Annotation, Assignment, AssignmentStatus, ProjectMembership, Role
from annotate.services import assignment_next
from qc.models import AuditAction, AuditEvent
from qc.services.members import membership_remove, membership_roles_set
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.concurrency import run_at_once
from tests.conftest import client_for
from tests.factories import UserFactory


def _actor(user_id=1, *, staff=False) -> Actor:
    return Actor(user_id=user_id, is_staff=staff, is_superuser=False, admin_project_ids=frozenset())


def _subject(user_id=2, *, staff=False, superuser=False) -> Subject:
    return Subject(
        user_id=user_id,
        is_staff=staff,
        is_superuser=superuser,
        is_active=True,
        project_ids=frozenset({7}),
        roles=frozenset(),
        signs_in_through_platform=False,
    )


@pytest.mark.parametrize(
    ("actor", "subject", "roles", "refused"),
    [
        (_actor(), _subject(), {"annotator"}, False),
        (_actor(), _subject(1), {"annotator"}, True),  # oneself
        (_actor(), _subject(staff=True), {"annotator"}, True),
        (_actor(), _subject(superuser=True), {"annotator"}, True),
        (_actor(), _subject(), {"admin"}, True),  # another admin
        (_actor(staff=True), _subject(), {"admin"}, False),  # staff may
        (_actor(staff=True), _subject(superuser=True), {"admin"}, True),
    ],
)
def test_who_may_change_whose_membership(actor, subject, roles, refused):
    refusal = membership_change_refusal(
        actor=actor, subject=subject, subject_project_roles=frozenset(roles)
    )

    assert (refusal is not None) is refused


@pytest.fixture
def team(db):
    project = make_project(items=4, quota=2)
    admin = UserFactory(username="lead")
    worker = UserFactory(username="worker")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    return project, admin, worker


def test_roles_are_set_exactly_and_audited(team):
    project, admin, worker = team

    roles = membership_roles_set(
        project=project, user=worker, roles=["reviewer", "annotator"], acting_user=admin
    )

    assert roles == ["annotator", "reviewer"]
    assert set(
        ProjectMembership.objects.filter(project=project, user=worker).values_list(
            "role", flat=True
        )
    ) == {"annotator", "reviewer"}
    event = AuditEvent.objects.get(project=project, action=AuditAction.ROLE_CHANGE)
    assert (event.actor, event.worker) == (admin, worker)
    assert event.details == {"before": ["annotator"], "after": ["annotator", "reviewer"]}


def test_losing_the_annotator_role_releases_open_leases_and_keeps_their_work(team):
    project, admin, worker = team
    done = assignment_next(project=project, worker=worker)
    submit_first_tokens(done, worker)
    open_lease = assignment_next(project=project, worker=worker)

    membership_roles_set(project=project, user=worker, roles=["reviewer"], acting_user=admin)

    assert Assignment.objects.get(pk=open_lease.pk).status == AssignmentStatus.SKIPPED
    assert Annotation.objects.filter(assignment__worker=worker).count() == 1


def test_removing_a_member_keeps_their_annotations_attributed(team):
    project, admin, worker = team
    submit_first_tokens(assignment_next(project=project, worker=worker), worker)
    open_lease = assignment_next(project=project, worker=worker)

    released = membership_remove(project=project, user=worker, acting_user=admin)

    assert released == 1
    assert not ProjectMembership.objects.filter(project=project, user=worker).exists()
    assert Annotation.objects.get(assignment__worker=worker).assignment.worker == worker
    assert Assignment.objects.get(pk=open_lease.pk).status == AssignmentStatus.SKIPPED
    event = AuditEvent.objects.get(project=project, action=AuditAction.MEMBER_REMOVE)
    assert event.details == {"roles": ["annotator"], "leases_released": 1}


def test_an_admin_cannot_act_on_another_admin_or_on_themselves(team):
    project, admin, _worker = team
    peer = UserFactory(username="peer")
    ProjectMembership.objects.create(project=project, user=peer, role=Role.ADMIN)
    client = client_for(admin)

    on_peer = client.put(f"/api/projects/{project.pk}/members/{peer.pk}/", {"roles": ["reviewer"]})
    on_self = client.delete(f"/api/projects/{project.pk}/members/{admin.pk}/")

    assert on_peer.status_code == 403
    assert "another admin" in on_peer.json()["detail"]
    assert on_self.status_code == 403
    assert ProjectMembership.objects.filter(project=project, role=Role.ADMIN).count() == 2


def test_the_last_admin_is_kept(team):
    project, admin, _ = team
    # A superuser reaches every project without a membership, so the admin is the only one.
    root = UserFactory(username="root", is_staff=True, is_superuser=True)

    response = client_for(root).put(
        f"/api/projects/{project.pk}/members/{admin.pk}/", {"roles": ["researcher"]}
    )

    assert response.status_code == 409
    assert "at least one admin" in response.json()["detail"]
    assert ProjectMembership.objects.filter(project=project, user=admin, role=Role.ADMIN).exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"roles": []}, "roles"),
        ({"roles": ["overlord"]}, "role"),
        ({"roles": "annotator"}, "roles"),
        ({}, "roles"),
    ],
)
def test_bad_roles_are_refused_naming_the_field(team, body, field):
    project, admin, worker = team

    response = client_for(admin).put(f"/api/projects/{project.pk}/members/{worker.pk}/", body)

    assert response.status_code == 400
    assert field in str(response.json())
    assert not AuditEvent.objects.filter(project=project).exists()


def test_a_user_outside_the_project_is_not_found(team):
    project, admin, _ = team
    stranger = UserFactory(username="stranger")

    response = client_for(admin).delete(f"/api/projects/{project.pk}/members/{stranger.pk}/")

    assert response.status_code == 404


def test_the_members_list_says_why_a_membership_cannot_be_changed(team):
    project, admin, _worker = team

    rows = client_for(admin).get(f"/api/projects/{project.pk}/accounts/").json()["results"]
    refusals = {row["username"]: row["refusals"]["membership"] for row in rows}

    assert refusals["worker"] is None
    assert "yourself" in refusals["lead"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_admins_demoting_each_other_at_once_leave_one_admin(postgres_only):
    project = make_project(items=1)
    first, second = (UserFactory(username=n, is_staff=True) for n in ("first", "second"))
    for user in (first, second):
        ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)

    def demote(actor, subject):
        membership_roles_set(project=project, user=subject, roles=["reviewer"], acting_user=actor)

    errors = run_at_once(demote, [(first, second), (second, first)], timeout=60)

    assert len(errors) == 1 and errors[0].startswith("ConflictError")
    assert ProjectMembership.objects.filter(project=project, role=Role.ADMIN).count() == 1
    assert AuditEvent.objects.filter(project=project, action=AuditAction.ROLE_CHANGE).count() == 1
