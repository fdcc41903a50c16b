"""The project pages speak the project's task type: the import hint names its fields, the
policy form offers its options, the new-project form offers every task type."""

import pytest

from annotate.models import ProjectMembership, TaskType
from tests.factories import ProjectFactory


@pytest.mark.parametrize(
    ("task_type", "fields", "options"),
    [
        (TaskType.CLASSIFICATION, ["<code>text</code>"], []),
        (TaskType.SENTENCE_PAIR, ["<code>text_a</code>", "<code>text_b</code>"], ["text_name_1"]),
        (
            TaskType.READING_COMPREHENSION,
            ["<code>passage</code>", "<code>answer_start</code>"],
            ["question_rationales"],
        ),
        (TaskType.MULTIPLE_CHOICE, ["<code>options</code>", "<code>option_1</code>"], []),
    ],
)
def test_the_admin_page_follows_the_task_type(db, client, role_users, task_type, fields, options):
    project = ProjectFactory(task_type=task_type, text_names=[])
    ProjectMembership.objects.create(project=project, user=role_users["admin"], role="admin")
    client.force_login(role_users["admin"])

    data_page = client.get(f"/projects/{project.id}/data/").content.decode()
    settings_page = client.get(f"/projects/{project.id}/settings/").content.decode()

    assert all(field in data_page for field in fields)
    assert 'name="labels_from_annotators"' in settings_page
    for name in ("text_name_1", "question_rationales"):
        assert (f'name="{name}"' in settings_page) == (name in options)


def test_text_names_are_escaped_on_the_project_page(db, client, role_users):
    project = ProjectFactory(
        task_type=TaskType.SENTENCE_PAIR, text_names=["<i>Claim</i>", "Evidence"]
    )
    ProjectMembership.objects.create(project=project, user=role_users["admin"], role="admin")
    client.force_login(role_users["admin"])

    page = "".join(
        client.get(f"/projects/{project.id}/{path}").content.decode() for path in ("", "settings/")
    )

    assert "<i>Claim</i>" not in page
    assert "&lt;i&gt;Claim&lt;/i&gt;" in page


def test_the_new_project_form_offers_every_task_type(db, client, django_user_model):
    staff = django_user_model.objects.create_user("staff", password="pw", is_staff=True)
    client.force_login(staff)

    page = client.get("/").content.decode()

    for value, name in TaskType.choices:
        assert f'<option value="{value}">{name}</option>' in page
