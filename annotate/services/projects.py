from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotate.models import Project, ProjectMembership, Role
from config.exceptions import ApplicationError


@transaction.atomic
def project_create(
    *,
    name: str,
    acting_user: AbstractBaseUser,
    description: str = "",
    task_type: str = "classification",
    labels: list[str] | None = None,
    language: str = "en",
    annotators_per_item: int = 3,
    min_highlight: int = 1,
) -> Project:
    """Create a project; its creator becomes its first admin."""
    if Project.objects.filter(name=name).exists():
        raise ApplicationError(f"a project named {name!r} already exists")
    project = Project.objects.create(
        name=name,
        description=description,
        task_type=task_type,
        labels=list(labels or []),
        language=language,
        annotators_per_item=annotators_per_item,
        min_highlight=min_highlight,
        created_by=acting_user,
    )
    ProjectMembership.objects.create(project=project, user=acting_user, role=Role.ADMIN)
    return project


def membership_add(*, project: Project, user: AbstractBaseUser, role: str) -> ProjectMembership:
    if role not in Role.values:
        raise ApplicationError(f"unknown role {role!r}; expected one of {', '.join(Role.values)}")
    membership, _ = ProjectMembership.objects.get_or_create(project=project, user=user, role=role)
    return membership
