"""Repeated failed sign-ins lock a user name from the address they came from, and an
address that fails for many names (django-axes, config/login_lockout.py), on the sign-in
form and for the API's Basic authentication, until the cool-off passes or staff unlock;
the right password is refused meanwhile, with a message that says so. Nobody locks a
user name out from another address."""

import base64
from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.models import AccountAction, AccountEvent
from tests.factories import MembershipFactory, UserFactory

PASSWORD = "the-right-long-password"
LIMIT = 3
ADDRESS_LIMIT = 7


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = ADDRESS_LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


@pytest.fixture
def user(db):
    user = UserFactory(username="lock-me")
    user.set_password(PASSWORD)
    user.save()
    return user


def sign_in(username, password, address="10.0.0.1"):
    client = Client(REMOTE_ADDR=address)
    response = client.post(reverse("login"), {"username": username, "password": password})
    return client, response


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def basic(username, password, address="10.0.0.1"):
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    client = APIClient(HTTP_AUTHORIZATION=f"Basic {token}", REMOTE_ADDR=address)
    return client.get(reverse("annotate:project-list"))


def test_the_form_locks_a_user_name_from_the_address_that_failed(user):
    for _ in range(LIMIT - 1):
        assert sign_in(user.username, "wrong", "10.0.1.1")[1].status_code == 200

    locked = sign_in(user.username, "wrong", "10.0.1.1")[1]
    client, right = sign_in(user.username, PASSWORD, "10.0.1.1")

    assert locked.status_code == 429
    assert right.status_code == 429 and not signed_in(client)
    assert "locked for 15 minutes" in right.content.decode()


def test_a_lock_from_one_address_does_not_lock_the_name_from_another(user):
    """Someone who knows an annotator's user name cannot lock them out from elsewhere."""
    for _ in range(LIMIT * 3):
        sign_in(user.username, "wrong", "10.0.2.66")
    assert sign_in(user.username, PASSWORD, "10.0.2.66")[1].status_code == 429

    client, response = sign_in(user.username, PASSWORD, "10.0.2.1")

    assert response.status_code == 302 and signed_in(client)


def test_failures_spread_over_addresses_lock_nothing(user):
    for n in range(LIMIT * 3):
        sign_in(user.username, "wrong", f"10.0.1.{n}")

    client, response = sign_in(user.username, PASSWORD, "10.0.1.200")

    assert response.status_code == 302 and signed_in(client)


def test_an_address_failing_for_many_names_is_slowed_down_for_every_name(user):
    """Below the address's limit other names still sign in from it; at the limit, none."""
    for n in range(ADDRESS_LIMIT - 1):
        sign_in(f"someone-{n}", "wrong", "10.0.3.3")
    client, before = sign_in(user.username, PASSWORD, "10.0.3.3")
    assert before.status_code == 302 and signed_in(client)

    sign_in("someone-last", "wrong", "10.0.3.3")
    client, right = sign_in(user.username, PASSWORD, "10.0.3.3")
    elsewhere, fine = sign_in(user.username, PASSWORD, "10.0.3.4")

    assert right.status_code == 429 and not signed_in(client)
    assert fine.status_code == 302 and signed_in(elsewhere)


def test_forty_wrong_passwords_then_the_right_one_does_not_sign_in(user):
    for _ in range(40):
        sign_in(user.username, "wrong")

    client, response = sign_in(user.username, PASSWORD)

    assert response.status_code == 429 and not signed_in(client)


def test_a_lockout_is_audited(user):
    for _ in range(LIMIT):
        sign_in(user.username, "wrong", "10.0.4.4")

    attempt = AccessAttempt.objects.get(username=user.username)
    assert attempt.failures_since_start == LIMIT and attempt.ip_address == "10.0.4.4"
    assert AccessFailureLog.objects.filter(
        username=user.username, ip_address="10.0.4.4", locked_out=True
    ).exists()


def test_basic_auth_locks_a_user_and_refuses_the_right_password_clearly(user):
    for _ in range(LIMIT - 1):
        assert basic(user.username, "wrong", "10.0.5.5").status_code == 401

    locked = basic(user.username, "wrong", "10.0.5.5")
    right = basic(user.username, PASSWORD, "10.0.5.5")

    assert locked.status_code == 429
    assert right.status_code == 429
    assert right.json()["code"] == "locked_out"
    assert "locked for 15 minutes" in right.json()["detail"]
    assert int(right["Retry-After"]) == 15 * 60
    assert basic(user.username, PASSWORD, "10.0.6.1").status_code == 200


def test_basic_auth_locks_an_address(user):
    for n in range(ADDRESS_LIMIT):
        basic(f"someone-{n}", "wrong", "10.0.7.7")

    assert basic(user.username, PASSWORD, "10.0.7.7").status_code == 429
    assert basic(user.username, PASSWORD, "10.0.7.8").status_code == 200


def test_the_form_and_basic_auth_count_together(user):
    for _ in range(LIMIT - 1):
        sign_in(user.username, "wrong")
    basic(user.username, "wrong")

    assert sign_in(user.username, PASSWORD)[1].status_code == 429


def test_the_lock_ends_when_the_cool_off_has_passed(user):
    for _ in range(LIMIT):
        sign_in(user.username, "wrong")
    assert sign_in(user.username, PASSWORD)[1].status_code == 429

    # The failures are as old as the cool-off: the time a locked-out user waits.
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))

    client, response = sign_in(user.username, PASSWORD)
    assert response.status_code == 302 and signed_in(client)
    assert basic(user.username, PASSWORD).status_code == 200


@pytest.mark.parametrize(
    ("command", "argument"),
    [("axes_reset_username", "lock-me"), ("axes_reset_ip", "10.0.8.8")],
)
def test_an_admin_unlocks_with_the_reset_commands(user, command, argument):
    for _ in range(LIMIT):
        sign_in(user.username, "wrong", "10.0.8.8")
    assert sign_in(user.username, PASSWORD, "10.0.8.8")[1].status_code == 429

    call_command(command, argument)

    assert sign_in(user.username, PASSWORD, "10.0.8.8")[1].status_code == 302


def test_an_admin_unlocks_by_deleting_the_attempt_in_the_admin(user):
    for _ in range(LIMIT):
        sign_in(user.username, "wrong", "10.0.9.9")
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    attempt = AccessAttempt.objects.get(username=user.username)

    listed = staff.get(reverse("admin:axes_accessattempt_changelist"))
    deleted = staff.post(
        reverse("admin:axes_accessattempt_changelist"),
        {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"},
    )

    assert listed.status_code == 200 and user.username in listed.content.decode()
    assert deleted.status_code == 302
    assert sign_in(user.username, PASSWORD, "10.0.9.9")[1].status_code == 302


def _unlock(caller, user):
    client = APIClient()
    if caller is not None:
        client.force_authenticate(caller)
    return client.post(f"/api/accounts/{user.pk}/sign-in-unlock/")


def test_site_staff_lift_a_lock_and_it_is_audited(user):
    for _ in range(LIMIT):
        sign_in(user.username, "wrong", "10.0.10.10")
    assert sign_in(user.username, PASSWORD, "10.0.10.10")[1].status_code == 429
    staff = UserFactory(username="staff-unlocker", is_staff=True)

    response = _unlock(staff, user)

    assert response.status_code == 200
    assert sign_in(user.username, PASSWORD, "10.0.10.10")[1].status_code == 302
    event = AccountEvent.objects.get(action=AccountAction.SIGN_IN_UNLOCK)
    assert (event.actor, event.subject, event.project) == (staff, user, None)


@pytest.mark.parametrize("who", ["member", "project_admin", "anonymous"])
def test_no_one_but_staff_lifts_a_lock(user, who):
    for _ in range(LIMIT):
        sign_in(user.username, "wrong", "10.0.11.11")
    caller = None
    if who != "anonymous":
        caller = UserFactory(username=f"caller-{who}")
        role = "admin" if who == "project_admin" else "annotator"
        project = MembershipFactory(user=caller, role=role).project
        MembershipFactory(user=user, project=project)

    response = _unlock(caller, user)

    assert response.status_code == (401 if who == "anonymous" else 403)
    assert sign_in(user.username, PASSWORD, "10.0.11.11")[1].status_code == 429


def test_unlocking_an_account_that_does_not_exist_is_a_404_that_records_nothing(db):
    staff = UserFactory(username="staff-unlocker", is_staff=True)
    client = APIClient()
    client.force_authenticate(staff)

    response = client.post("/api/accounts/987654/sign-in-unlock/")

    assert response.status_code == 404
    assert not AccountEvent.objects.filter(action=AccountAction.SIGN_IN_UNLOCK).exists()
