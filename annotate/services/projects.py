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


POLICY_FIELDS = (
    "description",
    "labels",
    "annotators_per_item",
    "min_highlight",
    "lease_seconds",
    "allow_variant_mixing",
    "allocation_seed",
    # The review policy.
    "reviewers_per_annotation",
    "max_rounds",
    "sufficiency_threshold",
    "compactness_threshold",
    "comprehensiveness_threshold",
)


@transaction.atomic
def project_update_policy(*, project: Project, **changes) -> Project:
    unknown = set(changes) - set(POLICY_FIELDS)
    if unknown:
        raise ApplicationError(f"cannot change {', '.join(sorted(unknown))} here")
    project = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    if "allocation_seed" in changes and project.variant_bindings.exists():
        raise ApplicationError(
            "the allocation seed is fixed once workers have been allocated to variants"
        )
    for key, value in changes.items():
        setattr(project, key, value)
    project.save()
    return project


def membership_add_by_username(*, project: Project, username: str, role: str) -> ProjectMembership:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ApplicationError(f"no user named {username!r}")
    return membership_add(project=project, user=user, role=role)
