"""Argument helpers shared by the management commands."""

from django.core.management.base import CommandError

from annotate.models import Project


def project_from_argument(value: str) -> Project:
    """The project named `value`, or with that numeric id; a CommandError otherwise."""
    found = Project.objects.filter(name=value).first()
    if found is None and value.isdigit():
        found = Project.objects.filter(pk=int(value)).first()
    if found is None:
        raise CommandError(
            f"no project named {value!r}; create it first: "
            f'python manage.py create_project "{value}" --admin USER --labels A,B'
        )
    return found
