"""No account takeover: a project admin adds directly only people from projects they
administer; anyone else is invited and joins by accepting. The members endpoint answers
alike whether or not a user name is an account's; password resets stay within the
accounts the admin may manage."""

import pytest
from django.db import IntegrityError
from django.forms import modelform_factory
from django.test import Client

from annotate.models import (
    AccountAction,
    AccountEvent,
    ProjectInvitation,
    ProjectMembership,
)
from annotate.services import invitations as invitation_services
from annotate.services.projects import MemberAddOutcome, membership_add_by_username
from qc.models import Platform, WorkerProfile
from tests.conftest import client_for
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

INVITED_BODY = b'{"detail":"If an account with this user name exists, it has been invited."}'


@pytest.fixture
def setting(project):
    """An admin of `project`; an outsider who works in someone else's project; a colleague
    from a second project the admin administers."""
    admin = MembershipFactory(project=project, role="admin", user=UserFactory(username="adm")).user
    elsewhere = ProjectFactory(name="elsewhere")
    outsider = MembershipFactory(
        project=elsewhere, role="researcher", user=UserFactory(username="outsider")
    ).user
    second = ProjectFactory(name="second")
    MembershipFactory(project=second, role="admin", user=admin)
    colleague = MembershipFactory(
        project=second, role="annotator", user=UserFactory(username="colleague")
    ).user
    return {"admin": admin, "outsider": outsider, "colleague": colleague, "project": project}


def members_post(user, project, username, role="annotator"):
    return client_for(user).post(
        f"/api/projects/{project.id}/members/", {"username": username, "role": role}, format="json"
    )


def test_an_admin_cannot_add_an_outsider_then_reset_their_password(setting):
    """Given an account that works only in a project the admin does not administer, when
    the admin adds it by name and then resets its password, neither happens."""
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]

    added = members_post(admin, project, "outsider", "admin")
    reset = client_for(admin).post(
        f"/api/projects/{project.id}/accounts/{outsider.id}/password/",
        {"credential": "one_time_password"},
        format="json",
    )

    assert added.status_code == 202
    assert not ProjectMembership.objects.filter(project=project, user=outsider).exists()
    assert reset.status_code == 404
    outsider.refresh_from_db()
    assert outsider.check_password("pw")


def test_the_members_answer_is_the_same_byte_for_byte_whether_or_not_the_account_exists(setting):
    admin, project = setting["admin"], setting["project"]

    existing = members_post(admin, project, "outsider")
    missing = members_post(admin, project, "nobody-by-this-name")

    assert (existing.status_code, missing.status_code) == (202, 202)
    assert existing.content == missing.content == INVITED_BODY
    assert existing["Content-Type"] == missing["Content-Type"]


def test_someone_from_a_project_the_admin_administers_is_added_directly(setting):
    response = members_post(setting["admin"], setting["project"], "colleague", "reviewer")

    assert response.status_code == 201
    assert ProjectMembership.objects.filter(
        project=setting["project"], user=setting["colleague"], role="reviewer"
    ).exists()
    assert not ProjectInvitation.objects.exists()


def test_site_staff_add_anyone_directly(setting):
    staff = UserFactory(username="staff", is_staff=True)
    MembershipFactory(project=setting["project"], role="admin", user=staff)

    response = members_post(staff, setting["project"], "outsider", "reviewer")

    assert response.status_code == 201
    assert ProjectMembership.objects.filter(
        project=setting["project"], user=setting["outsider"], role="reviewer"
    ).exists()


def test_an_invitation_is_recorded_audited_and_extended_by_a_second_role(setting):
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]

    members_post(admin, project, "outsider", "annotator")
    members_post(admin, project, "outsider", "reviewer")
    members_post(admin, project, "outsider", "reviewer")

    invitation = ProjectInvitation.objects.get()
    assert (invitation.project, invitation.invited_user, invitation.invited_by) == (
        project,
        outsider,
        admin,
    )
    assert invitation.roles == ["reviewer", "annotator"]
    assert (invitation.answered_at, invitation.accepted, invitation.withdrawn_at) == (
        None,
        None,
        None,
    )
    assert list(
        AccountEvent.objects.order_by("pk").values_list("action", "actor", "subject", "detail")
    ) == [
        (AccountAction.INVITE, admin.pk, outsider.pk, "annotator"),
        (AccountAction.INVITE, admin.pk, outsider.pk, "reviewer"),
    ]


def test_one_open_invitation_per_project_and_user_is_a_database_constraint(setting):
    ProjectInvitation.objects.create(
        project=setting["project"], invited_user=setting["outsider"], roles=["annotator"]
    )
    with pytest.raises(IntegrityError):
        ProjectInvitation.objects.create(
            project=setting["project"], invited_user=setting["outsider"], roles=["reviewer"]
        )


def test_an_answered_invitation_leaves_room_for_a_new_one(setting):
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]
    members_post(admin, project, "outsider")
    first = ProjectInvitation.objects.get()
    invitation_services.invitation_decline(invitation_id=first.pk, user=outsider)

    members_post(admin, project, "outsider")

    assert ProjectInvitation.objects.count() == 2


def test_the_invitee_lists_and_accepts_their_invitation(setting):
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]
    members_post(admin, project, "outsider", "reviewer")
    invitation = ProjectInvitation.objects.get()
    client = client_for(outsider)

    mine = client.get("/api/invitations/")
    accepted = client.post(f"/api/invitations/{invitation.pk}/accept/")
    again = client.post(f"/api/invitations/{invitation.pk}/accept/")

    assert mine.status_code == 200
    assert [(row["id"], row["project_name"], row["roles"]) for row in mine.json()["results"]] == [
        (invitation.pk, project.name, ["reviewer"])
    ]
    assert accepted.status_code == 200 and accepted.json()["accepted"] is True
    assert again.status_code == 404
    assert ProjectMembership.objects.filter(
        project=project, user=outsider, role="reviewer"
    ).exists()
    event = AccountEvent.objects.filter(action=AccountAction.INVITE_ACCEPT).get()
    assert (event.actor, event.subject, event.project) == (outsider, outsider, project)


def test_the_invitee_declines_and_does_not_join(setting):
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]
    members_post(admin, project, "outsider")
    invitation = ProjectInvitation.objects.get()

    declined = client_for(outsider).post(f"/api/invitations/{invitation.pk}/decline/")

    assert declined.status_code == 200 and declined.json()["accepted"] is False
    assert not ProjectMembership.objects.filter(project=project, user=outsider).exists()
    assert AccountEvent.objects.filter(action=AccountAction.INVITE_DECLINE).count() == 1


def test_nobody_else_answers_someone_s_invitation(setting):
    admin, project = setting["admin"], setting["project"]
    members_post(admin, project, "outsider")
    invitation = ProjectInvitation.objects.get()

    by_admin = client_for(admin).post(f"/api/invitations/{invitation.pk}/accept/")
    by_colleague = client_for(setting["colleague"]).post(
        f"/api/invitations/{invitation.pk}/accept/"
    )
    anonymous = Client().post(f"/api/invitations/{invitation.pk}/accept/")
    listed = client_for(setting["colleague"]).get("/api/invitations/")

    assert (by_admin.status_code, by_colleague.status_code, anonymous.status_code) == (
        404,
        404,
        401,
    )
    assert listed.json()["results"] == []
    assert ProjectInvitation.objects.get().is_open


def test_the_project_s_admins_list_and_withdraw_its_invitations(setting):
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]
    members_post(admin, project, "outsider")
    invitation = ProjectInvitation.objects.get()
    reviewer = MembershipFactory(project=project, role="reviewer").user
    url = f"/api/projects/{project.id}/invitations/"

    listed = client_for(admin).get(url)
    statuses = [
        client_for(reviewer).get(url).status_code,
        client_for(setting["colleague"]).get(url).status_code,
        client_for(reviewer).post(f"{url}{invitation.pk}/withdraw/").status_code,
    ]
    withdrawn = client_for(admin).post(f"{url}{invitation.pk}/withdraw/")
    twice = client_for(admin).post(f"{url}{invitation.pk}/withdraw/")
    accept_after = client_for(outsider).post(f"/api/invitations/{invitation.pk}/accept/")

    assert listed.status_code == 200
    assert [row["invited_user"] for row in listed.json()["results"]] == ["outsider"]
    assert statuses == [403, 404, 403]
    assert withdrawn.status_code == 200 and withdrawn.json()["withdrawn_at"] is not None
    assert twice.status_code == 409
    assert accept_after.status_code == 404
    assert client_for(admin).get(url).json()["results"] == []
    assert AccountEvent.objects.filter(action=AccountAction.INVITE_WITHDRAW).count() == 1


def test_another_project_s_invitation_cannot_be_withdrawn_through_this_one(setting):
    admin, project = setting["admin"], setting["project"]
    other_admin = MembershipFactory(project=ProjectFactory(), role="admin").user
    other = other_admin.project_memberships.get().project
    invitation_services.invitation_create(
        project=other, user=setting["outsider"], role="annotator", acting_user=other_admin
    )
    invitation = ProjectInvitation.objects.get()

    response = client_for(admin).post(
        f"/api/projects/{project.id}/invitations/{invitation.pk}/withdraw/"
    )

    assert response.status_code == 404
    assert ProjectInvitation.objects.get().is_open


# ---------------------------------------------------------------- password resets


def _reset(admin, project, subject):
    return client_for(admin).post(
        f"/api/projects/{project.id}/accounts/{subject.id}/password/",
        {"credential": "one_time_password"},
        format="json",
    )


def test_an_accepted_member_who_also_works_elsewhere_cannot_be_reset_by_the_admin(setting):
    """The rule: a project admin resets only accounts that belong to nothing but projects
    they administer, and never staff's or another admin's."""
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]
    members_post(admin, project, "outsider")
    invitation_services.invitation_accept(
        invitation_id=ProjectInvitation.objects.get().pk, user=outsider
    )

    response = _reset(admin, project, outsider)

    assert response.status_code == 403
    assert "do not administer" in response.json()["detail"]


def test_staff_in_the_admin_s_project_cannot_be_reset_by_the_admin(setting):
    admin, project = setting["admin"], setting["project"]
    staff = MembershipFactory(
        project=project, role="annotator", user=UserFactory(username="st", is_staff=True)
    ).user

    response = _reset(admin, project, staff)

    assert response.status_code == 403
    assert "site staff" in response.json()["detail"]


def test_a_member_only_of_the_admin_s_projects_can_be_reset(setting):
    response = _reset(setting["admin"], setting["project"], setting["colleague"])

    assert response.status_code == 404  # not a member of this project yet

    members_post(setting["admin"], setting["project"], "colleague")
    assert _reset(setting["admin"], setting["project"], setting["colleague"]).status_code == 200


# ---------------------------------------------------------------- the projects page


def test_the_projects_page_shows_pending_invitations_with_accept_and_decline(setting):
    admin, outsider, project = setting["admin"], setting["outsider"], setting["project"]
    project.name = "<b>bold</b> project"
    project.save()
    members_post(admin, project, "outsider", "reviewer")
    invitation = ProjectInvitation.objects.get()
    client = Client()
    client.force_login(outsider)

    page = client.get("/").content.decode()
    accepted = client.post(f"/invitations/{invitation.pk}/accept/")

    assert 'id="invitations"' in page
    assert "&lt;b&gt;bold&lt;/b&gt; project" in page and "<b>bold</b>" not in page
    assert f'action="/invitations/{invitation.pk}/accept/"' in page
    assert f'action="/invitations/{invitation.pk}/decline/"' in page
    assert accepted.status_code == 302 and accepted["Location"] == "/"
    assert ProjectMembership.objects.filter(
        project=project, user=outsider, role="reviewer"
    ).exists()
    assert 'id="invitations"' not in client.get("/").content.decode()


def test_the_projects_page_declines_and_refuses_a_get(setting):
    members_post(setting["admin"], setting["project"], "outsider")
    invitation = ProjectInvitation.objects.get()
    client = Client()
    client.force_login(setting["outsider"])

    assert client.get(f"/invitations/{invitation.pk}/decline/").status_code == 405
    assert client.post(f"/invitations/{invitation.pk}/decline/").status_code == 302
    assert ProjectInvitation.objects.get().accepted is False


# ---------------------------------------------------------------- crowd accounts


@pytest.fixture
def crowd_account(setting):
    """A crowd worker's account, annotating in the admin's project."""
    user = UserFactory(username="mturk.A1CROWD")
    user.set_unusable_password()
    user.save()
    WorkerProfile.objects.create(user=user, platform=Platform.MTURK, external_id="A1CROWD")
    MembershipFactory(project=setting["project"], role="annotator", user=user)
    return user


@pytest.mark.parametrize("role", ["admin", "researcher", "reviewer", "author", "checker"])
def test_the_members_api_gives_a_crowd_account_no_role_but_annotator(setting, crowd_account, role):
    response = members_post(setting["admin"], setting["project"], crowd_account.username, role)

    assert response.status_code == 400
    assert response.json()["field"] == "role"
    assert not ProjectMembership.objects.filter(user=crowd_account, role=role).exists()


def test_a_crowd_account_out_of_reach_is_not_even_invited_beyond_annotator(setting):
    crowd = UserFactory(username="prolific.P1")
    WorkerProfile.objects.create(user=crowd, platform=Platform.PROLIFIC, external_id="P1")

    reviewer = members_post(setting["admin"], setting["project"], "prolific.P1", "reviewer")
    annotator = members_post(setting["admin"], setting["project"], "prolific.P1", "annotator")

    assert reviewer.content == annotator.content == INVITED_BODY
    assert list(ProjectInvitation.objects.values_list("roles", flat=True)) == [["annotator"]]


def test_accepting_refuses_a_role_beyond_annotator_for_a_crowd_account(setting):
    crowd = UserFactory(username="other.X1")
    invitation = ProjectInvitation.objects.create(
        project=setting["project"], invited_user=crowd, roles=["researcher"]
    )
    WorkerProfile.objects.create(user=crowd, platform=Platform.OTHER, external_id="X1")

    response = client_for(crowd).post(f"/api/invitations/{invitation.pk}/accept/")

    assert response.status_code == 400
    assert not ProjectMembership.objects.filter(user=crowd).exists()


@pytest.mark.parametrize("role", ["admin", "researcher", "reviewer"])
def test_services_and_commands_give_a_crowd_account_no_role_but_annotator(
    setting, crowd_account, role
):
    """membership_add is what demo_setup, demo_fine_grained and the crowd entry call."""
    from annotate.services import membership_add
    from config.exceptions import ApplicationError

    with pytest.raises(ApplicationError, match="crowd worker"):
        membership_add(project=setting["project"], user=crowd_account, role=role)
    assert (
        membership_add(project=ProjectFactory(), user=crowd_account, role="annotator").role
        == "annotator"
    )


def test_membership_add_by_username_refuses_through_the_service(setting, crowd_account):
    from config.exceptions import ApplicationError

    with pytest.raises(ApplicationError, match="crowd worker"):
        membership_add_by_username(
            project=setting["project"],
            username=crowd_account.username,
            role="admin",
            acting_user=setting["admin"],
        )
    assert (
        membership_add_by_username(
            project=setting["project"],
            username="colleague",
            role="admin",
            acting_user=setting["admin"],
        )
        is MemberAddOutcome.ADDED
    )


@pytest.mark.parametrize("role", ["admin", "reviewer"])
def test_the_django_admin_s_membership_form_refuses_a_crowd_account_s_role(
    setting, crowd_account, role
):
    """The project admin's membership inline is a model form: ProjectMembership.clean."""
    form_class = modelform_factory(ProjectMembership, fields=["project", "user", "role"])

    refused = form_class(
        data={"project": ProjectFactory().pk, "user": crowd_account.pk, "role": role}
    )
    allowed = form_class(
        data={"project": ProjectFactory().pk, "user": crowd_account.pk, "role": "annotator"}
    )

    assert not refused.is_valid()
    assert "crowd worker" in refused.errors["role"][0]
    assert allowed.is_valid()


def test_the_accounts_api_makes_no_crowd_named_account(setting):
    response = client_for(setting["admin"]).post(
        f"/api/projects/{setting['project'].id}/accounts/",
        {"username": "mturk.NEWONE", "role": "admin", "credential": "link"},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["field"] == "username"
