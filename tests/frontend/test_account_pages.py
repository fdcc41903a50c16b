"""Account pages: the staff's users page, the page an invitation or reset link opens, and
the password page a one-time password leads to."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model

from annotate.account_tokens import account_link_tokens
from annotate.models import AccountAction, AccountEvent
from annotate.services import accounts as account_services
from annotate.services.accounts import Credential
from frontend import account_views
from tests.factories import MembershipFactory, UserFactory

User = get_user_model()
NEW_PASSWORD = "correct horse battery 42"


@pytest.fixture
def admin(project):
    return MembershipFactory(project=project, role="admin", user=UserFactory(username="boss")).user


def invite(admin, project, username="newbie", credential=Credential.LINK):
    return account_services.account_create(
        acting_user=admin,
        project=project,
        username=username,
        role="annotator",
        credential=credential,
    )


def link_path(issued) -> str:
    return f"/accounts/link/{issued.link_uid}/{issued.link_token}/"


# ---------------------------------------------------------------- the users page


def test_the_users_page_is_for_staff(db, client, role_users):
    staff = UserFactory(username="staff", is_staff=True)
    client.force_login(staff)
    page = client.get("/users/")
    client.force_login(role_users["admin"])
    refused = client.get("/users/")
    client.logout()
    anonymous = client.get("/users/")

    assert page.status_code == 200
    assert 'data-api="/api/accounts/"' in page.content.decode()
    assert refused.status_code == 403
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def test_the_header_links_users_for_staff_only(db, client, role_users):
    client.force_login(UserFactory(username="staff", is_staff=True))
    staff_home = client.get("/").content.decode()
    client.force_login(role_users["admin"])
    admin_home = client.get("/").content.decode()

    assert 'id="users-link"' in staff_home
    assert 'id="users-link"' not in admin_home
    assert 'id="password-link"' in admin_home


# ---------------------------------------------------------------- invitation links


def test_an_invitation_sets_a_password_signs_in_and_lands_in_the_project(
    db, client, project, admin
):
    issued = invite(admin, project)

    opened = client.get(link_path(issued))
    form = client.get(opened["Location"])
    done = client.post(
        opened["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )

    assert opened.status_code == 302
    assert "set-password" in opened["Location"] and issued.link_token not in opened["Location"]
    assert "newbie" in form.content.decode()
    assert done.status_code == 302 and done["Location"] == f"/projects/{project.id}/"
    assert client.get(f"/projects/{project.id}/").status_code == 200
    assert User.objects.get(username="newbie").check_password(NEW_PASSWORD)
    event = AccountEvent.objects.filter(action=AccountAction.PASSWORD_SET).get()
    assert (event.actor.username, event.subject.username, event.project) == (
        "newbie",
        "newbie",
        project,
    )


def test_a_link_works_once(db, client, project, admin):
    issued = invite(admin, project)
    opened = client.get(link_path(issued))
    client.post(opened["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    client.logout()

    again = client.get(link_path(issued))

    assert again.status_code == 200
    assert "This link does not work" in again.content.decode()


def test_a_weak_password_is_refused_beside_its_field(db, client, project, admin):
    issued = invite(admin, project)
    opened = client.get(link_path(issued))

    answer = client.post(
        opened["Location"], {"new_password1": "12345678", "new_password2": "12345678"}
    )

    page = answer.content.decode()
    assert answer.status_code == 200
    assert "field-errors" in page and "too common" in page
    assert not User.objects.get(username="newbie").has_usable_password()


def _bad_links(issued, other_user):
    return {
        "wrong token": f"/accounts/link/{issued.link_uid}/abc-0123456789abcdef/",
        "no such user": f"/accounts/link/OTk5OTk5/{issued.link_token}/",
        "garbled uid": f"/accounts/link/!!!/{issued.link_token}/",
        "another user's uid": f"/accounts/link/{other_user}/{issued.link_token}/",
    }


def _link_section(page) -> str:
    text = page.content.decode()
    return text[
        text.index('<section class="card narrow" id="account-link">') : text.index("</section>")
    ]


def test_a_bad_link_says_only_that_it_does_not_work(db, client, project, admin):
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    issued = invite(admin, project)
    other = urlsafe_base64_encode(force_bytes(admin.pk))

    pages = {name: client.get(path) for name, path in _bad_links(issued, other).items()}

    texts = {_link_section(page) for page in pages.values()}
    assert {page.status_code for page in pages.values()} == {200}
    assert len(texts) == 1  # the same page whatever is wrong
    assert "This link does not work" in texts.pop()


def test_an_expired_link_does_not_work(db, client, project, admin, settings, monkeypatch):
    issued = invite(admin, project)
    later = account_link_tokens._now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 60)
    monkeypatch.setattr(account_link_tokens, "_now", lambda: later)

    assert "This link does not work" in client.get(link_path(issued)).content.decode()


def test_a_deactivated_accounts_link_does_not_work(db, client, project, admin):
    issued = invite(admin, project)
    User.objects.filter(username="newbie").update(is_active=False)

    assert "This link does not work" in client.get(link_path(issued)).content.decode()


def test_guessing_links_is_stopped_per_address(db, client, project, admin, monkeypatch):
    monkeypatch.setattr(account_views, "LINK_FAILURE_LIMIT", 3)
    issued = invite(admin, project)
    for n in range(3):
        client.get(f"/accounts/link/{issued.link_uid}/guess-{n}/")

    blocked = client.get(link_path(issued))
    elsewhere = client.get(link_path(issued), REMOTE_ADDR="10.9.8.7")

    assert blocked.status_code == 429
    assert blocked["Retry-After"]
    assert elsewhere.status_code == 302


# ---------------------------------------------------------------- one-time passwords


def _sign_in(client, username, password):
    return client.post("/accounts/login/", {"username": username, "password": password})


def test_a_one_time_password_leads_to_the_password_page_until_changed(db, client, project, admin):
    issued = invite(admin, project, credential=Credential.ONE_TIME_PASSWORD)

    signed_in = _sign_in(client, "newbie", issued.one_time_password)
    page = client.get(f"/projects/{project.id}/")
    api = client.get("/api/projects/")
    form = client.get(page["Location"])
    changed = client.post(
        "/accounts/password/",
        {
            "old_password": issued.one_time_password,
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
            "next": f"/projects/{project.id}/",
        },
    )
    after = client.get(f"/projects/{project.id}/")

    assert signed_in.status_code == 302
    assert (
        page.status_code == 302
        and page["Location"] == f"/accounts/password/?next=/projects/{project.id}/"
    )
    assert api.status_code == 403 and api.json()["code"] == "password_change_required"
    assert "You signed in with a one-time password" in form.content.decode()
    assert changed.status_code == 302 and changed["Location"] == f"/projects/{project.id}/"
    assert after.status_code == 200  # still signed in: the session follows the new password
    event = AccountEvent.objects.filter(action=AccountAction.PASSWORD_CHANGE).get()
    assert (event.subject.username, event.project, event.detail) == (
        "newbie",
        project,
        "replaced a one-time password",
    )


def test_logging_out_is_open_while_a_change_is_due(db, client, project, admin):
    issued = invite(admin, project, credential=Credential.ONE_TIME_PASSWORD)
    _sign_in(client, "newbie", issued.one_time_password)

    out = client.post("/accounts/logout/")

    assert out.status_code == 302 and out["Location"] == "/accounts/login/"


def test_anyone_changes_their_own_password_with_the_old_one(db, client, role_users):
    client.force_login(role_users["annotator"])

    wrong = client.post(
        "/accounts/password/",
        {"old_password": "nope", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    right = client.post(
        "/accounts/password/",
        {
            "old_password": "pw",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
            "next": "https://evil.example/",
        },
    )

    assert wrong.status_code == 200 and "field-errors" in wrong.content.decode()
    assert right.status_code == 302 and right["Location"] == "/"
    assert User.objects.get(pk=role_users["annotator"].pk).check_password(NEW_PASSWORD)


def test_an_ordinary_sign_in_goes_straight_on(db, client, role_users, project):
    _sign_in(client, "annotator-user", "pw")

    assert client.get(f"/projects/{project.id}/").status_code == 200


# ---------------------------------------------------------------- the project's accounts page


def test_the_accounts_page_is_a_workers_subpage_for_admins(db, client, role_users, project):
    url = f"/projects/{project.id}/members/"
    client.force_login(role_users["admin"])
    page = client.get(url)
    pages = {role: None for role in ("reviewer", "annotator", "outsider")}
    for role in pages:
        client.force_login(role_users[role])
        pages[role] = client.get(url).status_code

    html = page.content.decode()
    assert page.status_code == 200
    assert f'data-api="/api/projects/{project.id}/accounts/"' in html
    assert 'id="subtab-members"' in html and 'id="subtab-workers"' in html
    assert '<option value="annotator" selected>' in html
    assert pages == {"reviewer": 403, "annotator": 403, "outsider": 404}


def test_the_accounts_page_escapes_the_project_name(db, client, role_users, project):
    project.name = "<script>alert(1)</script>"
    project.save()
    client.force_login(role_users["admin"])

    html = client.get(f"/projects/{project.id}/members/").content.decode()

    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_deactivating_signs_the_account_out_and_a_reset_ends_its_sessions(
    db, client, project, admin, role_users
):
    deactivated, reset = client, type(client)()
    deactivated.force_login(role_users["annotator"])
    reset.force_login(role_users["reviewer"])
    assert deactivated.get(f"/projects/{project.id}/").status_code == 200

    account_services.account_active_set(
        acting_user=admin, subject=role_users["annotator"], active=False, project=project
    )
    account_services.account_password_reset(
        acting_user=admin,
        subject=role_users["reviewer"],
        project=project,
        credential=Credential.LINK,
    )

    for signed_out in (deactivated, reset):
        page = signed_out.get(f"/projects/{project.id}/")
        assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
