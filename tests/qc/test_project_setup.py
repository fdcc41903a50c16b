"""A new project's setup checklist (qc/project_setup.py): on the overview for its admins, in
the API, and in the words the workspace gives when the project is not ready."""

import pytest
from django.test import Client

from annotate.models import InstructionVariant, Role
from qc.models import QualityPolicy
from tests.conftest import client_for
from tests.factories import ItemFactory, MembershipFactory, UserFactory

URL = "/api/projects/{}/setup-checklist/"


def _steps(project, user) -> dict:
    response = client_for(user).get(URL.format(project.pk))
    assert response.status_code == 200
    return {step["key"]: step for step in response.json()}


def _ready(project):
    ItemFactory(project=project)
    InstructionVariant.objects.create(project=project, name="plain", text="Mark why.", active=True)


def test_a_new_project_lists_every_step_with_what_is_left_to_do(project, role_users):
    admin = role_users[Role.ADMIN]
    project.memberships.exclude(role=Role.ADMIN).delete()

    steps = _steps(project, admin)

    assert list(steps) == [
        "data",
        "variant",
        "annotators",
        "reviewers",
        "qualification",
        "review_thresholds",
    ]
    assert {key for key, step in steps.items() if step["done"]} == set()
    assert {key for key, step in steps.items() if step["optional"]} == {
        "qualification",
        "review_thresholds",
    }
    assert steps["data"]["detail"] == "Import an ERASER dataset or raw texts."
    assert steps["data"]["url"] == f"/projects/{project.pk}/data/"
    assert steps["variant"]["url"] == f"/projects/{project.pk}/instructions/"


def test_each_step_is_done_once_the_project_has_it(project, role_users):
    _ready(project)
    ItemFactory(project=project)
    InstructionVariant.objects.create(project=project, name="inactive", text="x", active=False)
    QualityPolicy.objects.create(project=project, min_approval_rate=95)
    project.sufficiency_threshold = 2.5
    project.save(update_fields=["sufficiency_threshold"])

    steps = _steps(project, role_users[Role.ADMIN])

    assert all(step["done"] for step in steps.values())
    assert steps["data"]["detail"] == "2 items to annotate."
    assert steps["variant"]["detail"] == "1 variant active."
    assert steps["annotators"]["detail"] == "1 annotator."


def test_gold_items_of_the_test_are_not_data_to_annotate(project, role_users):
    from qc.models import GoldItem

    GoldItem.objects.create(item=ItemFactory(project=project))

    assert _steps(project, role_users[Role.ADMIN])["data"]["done"] is False


def test_a_policy_left_at_its_defaults_is_no_qualification(project, role_users):
    QualityPolicy.objects.create(project=project)

    assert _steps(project, role_users[Role.ADMIN])["qualification"]["done"] is False


@pytest.mark.parametrize(
    ("who", "status"),
    [
        (Role.RESEARCHER, 403),
        (Role.REVIEWER, 403),
        (Role.ANNOTATOR, 403),
        ("outsider", 404),
    ],
)
def test_only_the_projects_admins_read_the_checklist(project, role_users, who, status):
    response = client_for(role_users[who]).get(URL.format(project.pk))

    assert response.status_code == status


def test_anonymous_callers_are_asked_to_sign_in(project, api_client):
    assert api_client.get(URL.format(project.pk)).status_code == 401


def _page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_overview_shows_the_checklist_to_admins_only(project, role_users):
    admin_page = _page_client(role_users[Role.ADMIN]).get(f"/projects/{project.pk}/").content
    annotator_page = _page_client(role_users[Role.ANNOTATOR]).get(f"/projects/{project.pk}/")

    assert b'id="setup-checklist"' in admin_page
    assert b'data-step="data" data-done="false"' in admin_page
    assert b"Import an ERASER dataset or raw texts." in admin_page
    assert b'id="setup-checklist"' not in annotator_page.content


def test_start_annotating_on_a_project_without_data_or_variant_says_what_is_missing(
    project, role_users
):
    response = _page_client(role_users[Role.ANNOTATOR]).get(f"/projects/{project.pk}/annotate/")

    page = response.content.decode()
    assert response.status_code == 200
    assert 'id="workspace-not-ready"' in page
    assert 'data-step="data"' in page and 'data-step="variant"' in page
    assert "There are no items to annotate yet." in page
    assert "No instruction variant is active yet." in page
    assert "ask one of them" in page
    # An annotator cannot set the project up: no links to the admins' pages.
    assert f"/projects/{project.pk}/data/" not in page
    assert 'id="workspace"' not in page


def test_an_admin_who_annotates_gets_a_link_to_each_missing_step(project):
    admin = UserFactory(username="admin-annotator")
    MembershipFactory(project=project, user=admin, role=Role.ADMIN)
    MembershipFactory(project=project, user=admin, role=Role.ANNOTATOR)
    ItemFactory(project=project)

    page = _page_client(admin).get(f"/projects/{project.pk}/annotate/").content.decode()

    assert 'data-step="data"' not in page
    assert 'data-step="variant"' in page
    assert f'href="/projects/{project.pk}/instructions/"' in page


def test_once_every_required_step_is_done_the_checklist_folds_below(project, role_users):
    _ready(project)

    page = _page_client(role_users[Role.ADMIN]).get(f"/projects/{project.pk}/").content.decode()

    assert "Setup: every required step is done" in page
    assert page.index('id="setup-checklist"') > page.index('id="project-shortcuts"')


def test_a_ready_project_opens_the_workspace(project, role_users):
    _ready(project)

    page = _page_client(role_users[Role.ANNOTATOR]).get(f"/projects/{project.pk}/annotate/")

    assert b'id="workspace"' in page.content
    assert b"workspace-not-ready" not in page.content


@pytest.mark.parametrize("project_id", [987654, 2**63])
def test_an_unknown_project_is_a_404(role_users, project_id):
    response = client_for(role_users[Role.ADMIN]).get(URL.format(project_id))

    assert response.status_code == 404
