"""Invitations under simultaneous requests on PostgreSQL: one open invitation per project
and person whatever the number of admins inviting at once, and an invitation answered
and withdrawn at the same moment ends one way only."""

import pytest

from annotate.models import AccountAction, AccountEvent, ProjectInvitation, ProjectMembership
from annotate.services import invitations as invitation_services
from tests.concurrency import run_at_once
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROLES = ["admin", "researcher", "reviewer", "annotator", "author", "checker"]


@pytest.fixture
def invited(postgres_only):
    project = ProjectFactory(name="inviting")
    admins = [
        MembershipFactory(project=project, role="admin", user=UserFactory(username=f"a{n}")).user
        for n in range(len(ROLES) * 2)
    ]
    outsider = MembershipFactory(
        project=ProjectFactory(name="theirs"), role="annotator", user=UserFactory(username="out")
    ).user
    return project, admins, outsider


def test_simultaneous_invitations_make_one_open_invitation_with_every_role(invited):
    project, admins, outsider = invited

    errors = run_at_once(
        lambda admin, role: invitation_services.invitation_create(
            project=project, user=outsider, role=role, acting_user=admin
        ),
        [(admin, ROLES[n % len(ROLES)]) for n, admin in enumerate(admins)],
    )

    assert errors == []
    invitation = ProjectInvitation.objects.get()
    assert sorted(invitation.roles) == sorted(ROLES)
    # One event per role that joined the invitation, never one per request.
    assert AccountEvent.objects.filter(action=AccountAction.INVITE).count() == len(ROLES)


def test_an_invitation_accepted_and_withdrawn_at_once_ends_one_way(invited):
    project, admins, outsider = invited
    invitation = invitation_services.invitation_create(
        project=project, user=outsider, role="reviewer", acting_user=admins[0]
    )

    def accept():
        invitation_services.invitation_accept(invitation_id=invitation.pk, user=outsider)

    def withdraw():
        invitation_services.invitation_withdraw(
            project=project, invitation_id=invitation.pk, acting_user=admins[1]
        )

    errors = run_at_once(lambda step: step(), [(accept,), (withdraw,)] * 4)

    invitation.refresh_from_db()
    member = ProjectMembership.objects.filter(project=project, user=outsider).exists()
    assert len(errors) == 7
    if invitation.accepted:
        assert member and invitation.withdrawn_at is None
    else:
        assert not member and invitation.withdrawn_at is not None
