"""`manage.py create_project`: the README's first step before `import_eraser`."""

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.models import Project, ProjectMembership, Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_it_creates_the_project_with_the_user_as_its_first_admin():
    alice = UserFactory(username="alice")
    out = io.StringIO()

    call_command(
        "create_project",
        "My project",
        "--admin",
        "alice",
        "--labels",
        "NEG, POS",
        "--task-type",
        "sentence_pair",
        "--text-names",
        "Premise,Hypothesis",
        stdout=out,
    )

    project = Project.objects.get(name="My project")
    assert (project.labels, project.task_type) == (["NEG", "POS"], "sentence_pair")
    assert project.text_names == ["Premise", "Hypothesis"]
    assert ProjectMembership.objects.filter(project=project, user=alice, role=Role.ADMIN).exists()
    assert f"created project {project.pk} 'My project'" in out.getvalue()


def test_print_id_writes_the_id_alone_for_scripts():
    UserFactory(username="alice")
    out = io.StringIO()

    call_command("create_project", "Scripted", "--admin", "alice", "--print-id", stdout=out)

    assert out.getvalue().strip() == str(Project.objects.get(name="Scripted").pk)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--admin", "nobody"], "no active user named 'nobody'; create one first"),
        (["--admin", "alice", "--annotators-per-item", "0"], "must be 1 or more"),
        (["--admin", "alice", "--task-type", "sentence_pair", "--text-names", "A,B,C"], "two"),
    ],
)
def test_bad_arguments_are_named_and_nothing_is_created(arguments, message):
    UserFactory(username="alice")

    with pytest.raises(CommandError, match=message):
        call_command("create_project", "Bad", *arguments)

    assert not Project.objects.filter(name="Bad").exists()


def test_a_second_project_of_the_same_name_is_refused():
    UserFactory(username="alice")
    call_command("create_project", "Twice", "--admin", "alice", stdout=io.StringIO())

    with pytest.raises(CommandError, match="a project named 'Twice' already exists"):
        call_command("create_project", "Twice", "--admin", "alice")


def test_importing_into_a_missing_project_says_how_to_make_one(tmp_path):
    with pytest.raises(
        CommandError, match=re.escape('create it first: python manage.py create_project "x"')
    ):
        call_command("import_eraser", "x", str(tmp_path))
