"""Account management: services, the API for every action and caller, and the audit trail."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.account_tokens import account_link_tokens
from annotate.models import AccountAction, AccountEvent, PasswordChangeRequired, ProjectMembership
from annotate.services import accounts as account_services
from annotate.services.accounts import PLATFORM_USERNAME_PREFIXES, Credential
from config.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from qc.models import Platform, WorkerProfile
from tests.conftest import client_for
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

User = get_user_model()


@pytest.fixture
def people(project):
    """The callers of every test: an admin of the project, an admin of another project, a
    reviewer and an annotator of the project, site staff; and the accounts acted on."""
    other = ProjectFactory(name="other project")
    people = {
        "admin_here": MembershipFactory(
            project=project, role="admin", user=UserFactory(username="admin-here")
        ).user,
        "admin_elsewhere": MembershipFactory(
            project=other, role="admin", user=UserFactory(username="admin-elsewhere")
        ).user,
        "reviewer": MembershipFactory(
            project=project, role="reviewer", user=UserFactory(username="reviewer")
        ).user,
        "annotator": MembershipFactory(
            project=project, role="annotator", user=UserFactory(username="annotator")
        ).user,
        "staff": UserFactory(username="staff", is_staff=True),
        "anonymous": None,
    }
    people["target"] = MembershipFactory(
        project=project, role="annotator", user=UserFactory(username="target")
    ).user
    people["inactive"] = MembershipFactory(
        project=project, role="annotator", user=UserFactory(username="inactive", is_active=False)
    ).user
    people["other_project"] = other
    return people


def caller(people, who) -> APIClient:
    return APIClient() if people[who] is None else client_for(people[who])


CALLERS = ["admin_here", "admin_elsewhere", "reviewer", "annotator", "anonymous", "staff"]
# A project's account endpoints: its admins alone; non-members (staff included, who have the
# users page) are told the project is not found; anonymous callers are asked to sign in.
PROJECT_STATUS = {
    "admin_here": None,
    "admin_elsewhere": 404,
    "reviewer": 403,
    "annotator": 403,
    "anonymous": 401,
    "staff": 404,
}
# The site's account endpoints: staff alone.
SITE_STATUS = {
    "admin_here": 403,
    "admin_elsewhere": 403,
    "reviewer": 403,
    "annotator": 403,
    "anonymous": 401,
    "staff": None,
}


def project_url(project, tail=""):
    return f"/api/projects/{project.id}/accounts/{tail}"


def project_actions(project, people):
    target, inactive = people["target"], people["inactive"]
    return {
        "create_with_password": (
            "post",
            project_url(project),
            {"username": "newbie", "role": "annotator", "credential": "one_time_password"},
            201,
            AccountAction.ACCOUNT_CREATE,
            "newbie",
        ),
        "create_with_link": (
            "post",
            project_url(project),
            {
                "username": "newbie",
                "email": "n@example.org",
                "role": "reviewer",
                "credential": "link",
            },
            201,
            AccountAction.ACCOUNT_CREATE,
            "newbie",
        ),
        "reset_to_password": (
            "post",
            project_url(project, f"{target.id}/password/"),
            {"credential": "one_time_password"},
            200,
            AccountAction.PASSWORD_RESET,
            "target",
        ),
        "reset_to_link": (
            "post",
            project_url(project, f"{target.id}/password/"),
            {"credential": "link"},
            200,
            AccountAction.PASSWORD_RESET,
            "target",
        ),
        "deactivate": (
            "post",
            project_url(project, f"{target.id}/active/"),
            {"active": False},
            200,
            AccountAction.DEACTIVATE,
            "target",
        ),
        "reactivate": (
            "post",
            project_url(project, f"{inactive.id}/active/"),
            {"active": True},
            200,
            AccountAction.REACTIVATE,
            "inactive",
        ),
        "list": ("get", project_url(project), None, 200, None, None),
        "events": ("get", project_url(project, "events/"), None, 200, None, None),
    }


def site_actions(people):
    target, inactive = people["target"], people["inactive"]
    return {
        "create_with_password": (
            "post",
            "/api/accounts/",
            {"username": "newbie", "credential": "one_time_password"},
            201,
            AccountAction.ACCOUNT_CREATE,
            "newbie",
        ),
        "create_in_project": (
            "post",
            "/api/accounts/",
            {
                "username": "newbie",
                "credential": "link",
                "project": people["other_project"].id,
                "role": "admin",
            },
            201,
            AccountAction.ACCOUNT_CREATE,
            "newbie",
        ),
        "reset_to_link": (
            "post",
            f"/api/accounts/{target.id}/password/",
            {"credential": "link"},
            200,
            AccountAction.PASSWORD_RESET,
            "target",
        ),
        "deactivate": (
            "post",
            f"/api/accounts/{target.id}/active/",
            {"active": False},
            200,
            AccountAction.DEACTIVATE,
            "target",
        ),
        "reactivate": (
            "post",
            f"/api/accounts/{inactive.id}/active/",
            {"active": True},
            200,
            AccountAction.REACTIVATE,
            "inactive",
        ),
        "list": ("get", "/api/accounts/", None, 200, None, None),
        "events": ("get", "/api/accounts/events/", None, 200, None, None),
    }


def _run(people, who, spec):
    method, url, body, ok_status, action, subject = spec
    response = (
        getattr(caller(people, who), method)(url, body, format="json")
        if body
        else caller(people, who).get(url)
    )
    return response, ok_status, action, subject


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize(
    "name",
    [
        "create_with_password",
        "create_with_link",
        "reset_to_password",
        "reset_to_link",
        "deactivate",
        "reactivate",
        "list",
        "events",
    ],
)
def test_project_account_actions_by_caller(db, project, people, who, name):
    response, ok_status, action, subject = _run(people, who, project_actions(project, people)[name])

    denied = PROJECT_STATUS[who]
    if denied:
        assert response.status_code == denied, response.content
        assert not AccountEvent.objects.exists()
        assert not User.objects.filter(username="newbie").exists()
        assert User.objects.get(username="target").is_active
        assert User.objects.get(username="target").check_password("pw")
        return
    assert response.status_code == ok_status, response.content
    if action:
        event = AccountEvent.objects.get()
        assert (event.action, event.actor, event.subject.username, event.project) == (
            action,
            people[who],
            subject,
            project,
        )


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize(
    "name",
    [
        "create_with_password",
        "create_in_project",
        "reset_to_link",
        "deactivate",
        "reactivate",
        "list",
        "events",
    ],
)
def test_site_account_actions_by_caller(db, project, people, who, name):
    response, ok_status, action, subject = _run(people, who, site_actions(people)[name])

    denied = SITE_STATUS[who]
    if denied:
        assert response.status_code == denied, response.content
        assert not AccountEvent.objects.exists()
        assert not User.objects.filter(username="newbie").exists()
        assert User.objects.get(username="target").is_active
        return
    assert response.status_code == ok_status, response.content
    if action:
        event = AccountEvent.objects.get()
        expected_project = people["other_project"] if name == "create_in_project" else None
        assert (event.action, event.actor, event.subject.username, event.project) == (
            action,
            people["staff"],
            subject,
            expected_project,
        )


def test_a_new_account_with_a_one_time_password_must_change_it(db, project, people):
    response = client_for(people["admin_here"]).post(
        project_url(project),
        {"username": "newbie", "role": "annotator", "credential": "one_time_password"},
        format="json",
    )

    body = response.json()
    newbie = User.objects.get(username="newbie")
    assert newbie.check_password(body["one_time_password"])
    assert body["link"] is None
    assert body["account"]["sign_in"] == "change_due"
    assert PasswordChangeRequired.objects.filter(user=newbie).exists()
    assert ProjectMembership.objects.filter(project=project, user=newbie, role="annotator").exists()
    assert body["one_time_password"] not in AccountEvent.objects.get().detail


def test_a_new_account_with_a_link_has_no_password_until_the_link_is_used(db, project, people):
    response = client_for(people["admin_here"]).post(
        project_url(project),
        {
            "username": "newbie",
            "role": "reviewer",
            "credential": "link",
            "email": "New@Example.ORG",
        },
        format="json",
    )

    body = response.json()
    newbie = User.objects.get(username="newbie")
    _uid, token = body["link"].rstrip("/").split("/")[-2:]
    assert body["link"].startswith("http://testserver/accounts/link/")
    assert not newbie.has_usable_password()
    assert newbie.email == "New@example.org"
    assert account_link_tokens.check_token(newbie, token)
    assert body["account"]["sign_in"] == "link"
    assert body["one_time_password"] is None
    assert AccountEvent.objects.get().detail == "reviewer, invitation link"


def test_the_member_list_says_roles_and_what_the_admin_may_do(db, project, people):
    MembershipFactory(project=people["other_project"], user=people["annotator"], role="annotator")

    response = client_for(people["admin_here"]).get(project_url(project))

    rows = {row["username"]: row for row in response.json()["results"]}
    assert set(rows) == {"admin-here", "reviewer", "annotator", "target", "inactive"}
    assert rows["target"]["roles"] == ["annotator"]
    assert rows["target"]["refusals"] == {
        "password_reset": None,
        "deactivate": None,
        "reactivate": None,
        "membership": None,
    }
    assert "do not administer" in rows["annotator"]["refusals"]["deactivate"]
    # Their roles here are another matter: the annotator belongs to this project too.
    assert rows["annotator"]["refusals"]["membership"] is None
    assert "own account" in rows["admin-here"]["refusals"]["deactivate"]
    assert "yourself" in rows["admin-here"]["refusals"]["membership"]
    assert rows["inactive"]["is_active"] is False
    assert rows["target"]["last_login"] is None


def _queries(client, url) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_member_list_costs_the_same_queries_for_more_members(db, project, people):
    client = client_for(people["admin_here"])
    few = _queries(client, project_url(project))
    for n in range(30):
        MembershipFactory(project=project, user=UserFactory(username=f"extra{n}"), role="annotator")

    many = _queries(client, project_url(project))

    assert many == few
    assert client.get(project_url(project)).json()["count"] == 35


@pytest.mark.parametrize("target", ["annotator", "target"])
def test_an_admin_cannot_act_on_someone_in_a_project_they_do_not_administer(
    db, project, people, target
):
    MembershipFactory(project=people["other_project"], user=people[target], role="annotator")
    client = client_for(people["admin_here"])

    deactivate = client.post(
        project_url(project, f"{people[target].id}/active/"), {"active": False}, format="json"
    )
    reset = client.post(
        project_url(project, f"{people[target].id}/password/"),
        {"credential": "link"},
        format="json",
    )

    assert (deactivate.status_code, reset.status_code) == (403, 403)
    assert "do not administer" in deactivate.json()["detail"]
    assert people[target].__class__.objects.get(pk=people[target].pk).is_active
    assert not AccountEvent.objects.exists()


def test_an_admin_of_both_projects_may_act(db, project, people):
    MembershipFactory(project=people["other_project"], user=people["target"], role="annotator")
    MembershipFactory(project=people["other_project"], user=people["admin_here"], role="admin")

    response = client_for(people["admin_here"]).post(
        project_url(project, f"{people['target'].id}/active/"), {"active": False}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["is_active"] is False


def test_a_project_admin_cannot_act_on_staff_another_admin_or_themselves(db, project, people):
    co_admin = MembershipFactory(
        project=project, role="admin", user=UserFactory(username="co-admin")
    ).user
    staff_member = MembershipFactory(
        project=project, role="annotator", user=UserFactory(username="staffer", is_staff=True)
    ).user
    client = client_for(people["admin_here"])

    answers = {
        who.username: client.post(
            project_url(project, f"{who.id}/active/"), {"active": False}, format="json"
        )
        for who in (co_admin, staff_member, people["admin_here"])
    }

    assert {name: r.status_code for name, r in answers.items()} == {
        "co-admin": 403,
        "staffer": 403,
        "admin-here": 403,
    }
    assert "another admin" in answers["co-admin"].json()["detail"]
    assert "site staff" in answers["staffer"].json()["detail"]
    assert "your own account" in answers["admin-here"].json()["detail"]
    assert User.objects.filter(is_active=False).count() == 1  # the fixture's inactive account


def test_a_user_outside_the_project_is_not_found_by_its_admin(db, project, people):
    stranger = UserFactory(username="stranger")

    response = client_for(people["admin_here"]).post(
        project_url(project, f"{stranger.id}/active/"), {"active": False}, format="json"
    )

    assert response.status_code == 404
    assert "stranger" not in response.content.decode()


def test_staff_cannot_touch_a_superuser_or_themselves(db, people):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client = client_for(people["staff"])

    root_answer = client.post(f"/api/accounts/{root.id}/active/", {"active": False}, format="json")
    self_answer = client.post(
        f"/api/accounts/{people['staff'].id}/active/", {"active": False}, format="json"
    )

    assert (root_answer.status_code, self_answer.status_code) == (403, 403)
    assert "superuser" in root_answer.json()["detail"]


def test_staff_list_searches_and_filters(db, project, people):
    client = client_for(people["staff"])

    searched = client.get("/api/accounts/", {"search": "admin"}).json()
    inactive = client.get("/api/accounts/", {"active": "false"}).json()
    staff = client.get("/api/accounts/", {"staff": "true", "limit": 1}).json()
    bad = client.get("/api/accounts/", {"active": "maybe"})
    twice = client.get("/api/accounts/?staff=true&staff=false")

    assert [row["username"] for row in searched["results"]] == ["admin-elsewhere", "admin-here"]
    assert [row["username"] for row in inactive["results"]] == ["inactive"]
    assert (staff["count"], staff["results"][0]["username"]) == (1, "staff")
    assert bad.status_code == 400
    assert "active" in bad.json()
    assert twice.status_code == 400
    assert twice.json() == {"staff": ["give it once"]}


def test_a_filter_of_the_account_list_sent_empty_is_refused(db, project, people):
    client = client_for(people["staff"])

    empty = client.get("/api/accounts/?active=&staff=")
    no_search = client.get("/api/accounts/?search=")

    assert empty.status_code == 400
    assert empty.json() == {
        name: ["this parameter is empty: give a value or leave it out"]
        for name in ("active", "staff")
    }
    assert no_search.status_code == 200, "an empty search searches for everything"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"username": "", "role": "annotator", "credential": "link"}, "username"),
        ({"username": "has space", "role": "annotator", "credential": "link"}, "username"),
        ({"username": "x", "role": "boss", "credential": "link"}, "role"),
        ({"username": "x", "role": "annotator", "credential": "carrier pigeon"}, "credential"),
        (
            {"username": "x", "role": "annotator", "credential": "link", "email": "not-an-email"},
            "email",
        ),
    ],
)
def test_bad_input_names_the_field(db, project, people, body, field):
    response = client_for(people["admin_here"]).post(project_url(project), body, format="json")

    assert response.status_code == 400
    assert field in response.json()
    assert not AccountEvent.objects.exists()


def test_a_taken_or_crowd_style_username_is_refused(db, project, people):
    client = client_for(people["admin_here"])

    taken = client.post(
        project_url(project),
        {"username": "TARGET", "role": "annotator", "credential": "link"},
        format="json",
    )
    crowd = client.post(
        project_url(project),
        {"username": "mturk.A1B2", "role": "annotator", "credential": "link"},
        format="json",
    )

    assert taken.status_code == 409
    assert taken.json()["field"] == "username"
    assert crowd.status_code == 400
    assert "crowd" in crowd.json()["detail"]


def test_crowd_usernames_prefixes_are_the_platforms():
    assert set(PLATFORM_USERNAME_PREFIXES) == {f"{value}." for value in Platform.values if value}


def test_a_crowd_workers_account_gets_no_password(db, project, people):
    worker = MembershipFactory(
        project=project, role="annotator", user=UserFactory(username="prolific.P1")
    ).user
    worker.set_unusable_password()
    worker.save()
    WorkerProfile.objects.create(user=worker, platform=Platform.PROLIFIC, external_id="P1")

    reset = client_for(people["staff"]).post(
        f"/api/accounts/{worker.id}/password/", {"credential": "one_time_password"}, format="json"
    )
    deactivate = client_for(people["admin_here"]).post(
        project_url(project, f"{worker.id}/active/"), {"active": False}, format="json"
    )

    assert reset.status_code == 403
    assert "crowd" in reset.json()["detail"]
    assert not User.objects.get(pk=worker.pk).has_usable_password()
    assert deactivate.status_code == 200


def test_deactivating_twice_is_a_conflict(db, project, people):
    url = project_url(project, f"{people['inactive'].id}/active/")

    response = client_for(people["admin_here"]).post(url, {"active": False}, format="json")

    assert response.status_code == 409
    assert "already deactivated" in response.json()["detail"]


def test_a_reset_ends_the_old_password_and_lifts_a_lockout(db, project, people):
    from axes.models import AccessAttempt

    AccessAttempt.objects.create(
        username="target", ip_address="10.0.0.1", failures_since_start=9, user_agent="x"
    )

    issued = account_services.account_password_reset(
        acting_user=people["admin_here"],
        subject=people["target"],
        project=project,
        credential=Credential.ONE_TIME_PASSWORD,
    )

    target = User.objects.get(username="target")
    assert not target.check_password("pw")
    assert target.check_password(issued.one_time_password)
    assert not AccessAttempt.objects.filter(username="target").exists()


def test_a_reset_link_makes_the_old_password_unusable_and_older_links_stop(db, project, people):
    first = account_services.account_password_reset(
        acting_user=people["staff"], subject=people["target"], credential=Credential.LINK
    )
    second = account_services.account_password_reset(
        acting_user=people["staff"], subject=people["target"], credential=Credential.LINK
    )

    target = User.objects.get(username="target")
    assert not target.has_usable_password()
    assert not account_link_tokens.check_token(target, first.link_token)
    assert account_link_tokens.check_token(target, second.link_token)


def test_deactivating_ends_a_link(db, project, people):
    issued = account_services.account_password_reset(
        acting_user=people["staff"], subject=people["target"], credential=Credential.LINK
    )

    account_services.account_active_set(
        acting_user=people["staff"], subject=people["target"], active=False
    )

    assert not account_link_tokens.check_token(
        User.objects.get(username="target"), issued.link_token
    )


def test_services_check_the_acting_user_themselves(db, project, people):
    with pytest.raises(PermissionDeniedError):
        account_services.account_create(
            acting_user=people["reviewer"],
            project=project,
            username="x",
            role="annotator",
            credential=Credential.LINK,
        )
    with pytest.raises(PermissionDeniedError):
        account_services.account_active_set(
            acting_user=people["admin_here"], subject=people["target"], active=False
        )
    with pytest.raises(ApplicationError, match="role: give a project and a role together"):
        account_services.account_create(
            acting_user=people["staff"], username="x", role="annotator", credential=Credential.LINK
        )
    with pytest.raises(ConflictError):
        account_services.account_create(
            acting_user=people["staff"], username="Target", credential=Credential.LINK
        )
    assert not AccountEvent.objects.exists()


def test_events_list_newest_first_with_names(db, project, people):
    client = client_for(people["admin_here"])
    client.post(
        project_url(project, f"{people['target'].id}/active/"), {"active": False}, format="json"
    )
    client.post(
        project_url(project, f"{people['target'].id}/active/"), {"active": True}, format="json"
    )
    account_services.account_create(
        acting_user=people["staff"], username="elsewhere", credential=Credential.LINK
    )

    project_events = client.get(project_url(project, "events/")).json()["results"]
    site_events = client_for(people["staff"]).get("/api/accounts/events/").json()["results"]

    assert [(e["action"], e["actor"], e["subject"], e["project"]) for e in project_events] == [
        ("reactivate", "admin-here", "target", project.name),
        ("deactivate", "admin-here", "target", project.name),
    ]
    assert [e["subject"] for e in site_events] == ["elsewhere", "target", "target"]


def test_a_one_time_password_opens_no_api_by_basic_authentication(db, project, people):
    issued = account_services.account_password_reset(
        acting_user=people["admin_here"],
        subject=people["target"],
        project=project,
        credential=Credential.ONE_TIME_PASSWORD,
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=_basic("target", issued.one_time_password))

    refused = client.get("/api/projects/")
    account_services.account_password_change(
        user=people["target"], password="a fresh passphrase 42"
    )
    client.credentials(HTTP_AUTHORIZATION=_basic("target", "a fresh passphrase 42"))
    allowed = client.get("/api/projects/")

    assert refused.status_code == 403
    assert "one-time password" in refused.json()["detail"]
    assert allowed.status_code == 200


def _basic(username, password):
    import base64

    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def test_the_link_page_url_is_the_one_the_api_gives(db):
    assert (
        reverse("account-link", kwargs={"uidb64": "MQ", "token": "abc-def"})
        == "/accounts/link/MQ/abc-def/"
    )


def test_adding_an_existing_account_to_the_project_is_in_the_trail_once(db, project, people):
    """Someone from another project the admin administers is added directly."""
    second = ProjectFactory(name="second project")
    MembershipFactory(project=second, role="admin", user=people["admin_here"])
    colleague = MembershipFactory(
        project=second, role="annotator", user=UserFactory(username="colleague")
    ).user
    client = client_for(people["admin_here"])
    body = {"username": "colleague", "role": "reviewer"}

    first = client.post(f"/api/projects/{project.id}/members/", body, format="json")
    again = client.post(f"/api/projects/{project.id}/members/", body, format="json")
    refused = client_for(people["reviewer"]).post(
        f"/api/projects/{project.id}/members/",
        {"username": "staff", "role": "admin"},
        format="json",
    )

    assert (first.status_code, again.status_code, refused.status_code) == (201, 201, 403)
    event = AccountEvent.objects.get()
    assert (event.action, event.actor, event.subject, event.project, event.detail) == (
        AccountAction.MEMBER_ADD,
        people["admin_here"],
        colleague,
        project,
        "reviewer",
    )


def test_the_users_list_and_the_trail_cost_the_same_queries_for_more_rows(db, project, people):
    client = client_for(people["staff"])
    account_services.account_active_set(
        acting_user=people["staff"], subject=people["target"], active=False
    )
    few = (_queries(client, "/api/accounts/"), _queries(client, "/api/accounts/events/"))
    for n in range(30):
        user = UserFactory(username=f"extra{n}")
        MembershipFactory(project=project, user=user, role="annotator")
        account_services.account_active_set(acting_user=people["staff"], subject=user, active=False)

    many = (_queries(client, "/api/accounts/"), _queries(client, "/api/accounts/events/"))

    assert many == few
    assert client.get("/api/accounts/").json()["count"] == 37
    assert client.get("/api/accounts/events/").json()["count"] == 31
