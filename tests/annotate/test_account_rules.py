"""Who may act on whose account: the plain rule, without a database."""

import pytest

from annotate.account_rules import AccountOperation, Actor, Subject, account_refusal

RESET, DEACTIVATE, REACTIVATE = (
    AccountOperation.PASSWORD_RESET,
    AccountOperation.DEACTIVATE,
    AccountOperation.REACTIVATE,
)


def actor(*, admin_of=(1,), staff=False, superuser=False, user_id=100):
    return Actor(
        user_id=user_id,
        is_staff=staff,
        is_superuser=superuser,
        admin_project_ids=frozenset(admin_of),
    )


def subject(*, projects=(1,), roles=("annotator",), staff=False, superuser=False, platform=False):
    return Subject(
        user_id=7,
        is_staff=staff,
        is_superuser=superuser,
        is_active=True,
        project_ids=frozenset(projects),
        roles=frozenset(roles),
        signs_in_through_platform=platform,
    )


@pytest.mark.parametrize("operation", list(AccountOperation))
def test_an_admin_acts_on_someone_who_works_only_in_their_projects(operation):
    assert (
        account_refusal(
            actor=actor(admin_of=(1, 2)), subject=subject(projects=(1, 2)), operation=operation
        )
        is None
    )


@pytest.mark.parametrize("operation", list(AccountOperation))
def test_an_admin_cannot_touch_someone_who_also_works_in_another_project(operation):
    refusal = account_refusal(
        actor=actor(admin_of=(1,)), subject=subject(projects=(1, 2)), operation=operation
    )

    assert "also belongs to a project you do not administer" in refusal


def test_an_admin_cannot_touch_someone_outside_their_projects():
    refusal = account_refusal(
        actor=actor(admin_of=(1,)), subject=subject(projects=(3,)), operation=DEACTIVATE
    )

    assert "not a member of a project you administer" in refusal


def test_an_account_in_no_project_is_for_staff_only():
    assert account_refusal(actor=actor(), subject=subject(projects=()), operation=RESET)
    assert (
        account_refusal(
            actor=actor(staff=True, admin_of=()), subject=subject(projects=()), operation=RESET
        )
        is None
    )


@pytest.mark.parametrize("operation", list(AccountOperation))
def test_a_project_admin_cannot_touch_staff_or_another_admin(operation):
    staff_refusal = account_refusal(actor=actor(), subject=subject(staff=True), operation=operation)
    admin_refusal = account_refusal(
        actor=actor(), subject=subject(roles=("admin",)), operation=operation
    )

    assert "site staff accounts are managed by site staff" in staff_refusal
    assert "another admin" in admin_refusal


@pytest.mark.parametrize("operation", list(AccountOperation))
def test_staff_act_on_anyone_but_a_superuser(operation):
    staff = actor(staff=True, admin_of=())

    assert (
        account_refusal(
            actor=staff,
            subject=subject(projects=(5, 6), roles=("admin",), staff=True),
            operation=operation,
        )
        is None
    )
    assert "superuser" in account_refusal(
        actor=staff, subject=subject(superuser=True), operation=operation
    )
    assert "superuser" in account_refusal(
        actor=actor(superuser=True), subject=subject(superuser=True), operation=operation
    )


def test_nobody_deactivates_or_resets_themselves():
    me = actor(staff=True, user_id=7)

    assert "password page" in account_refusal(actor=me, subject=subject(), operation=RESET)
    assert "your own account" in account_refusal(actor=me, subject=subject(), operation=DEACTIVATE)


def test_a_crowd_worker_gets_no_password_but_can_be_deactivated():
    crowd = subject(platform=True)

    for who in (actor(), actor(staff=True)):
        assert "crowd" in account_refusal(actor=who, subject=crowd, operation=RESET)
        assert account_refusal(actor=who, subject=crowd, operation=DEACTIVATE) is None
        assert account_refusal(actor=who, subject=crowd, operation=REACTIVATE) is None
