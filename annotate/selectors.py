from __future__ import annotations

from django.db.models import Count, QuerySet

from annotate.models import ImportJob, Item, Project, ProjectMembership, Role
from config.exceptions import NotFoundError, PermissionDeniedError


def project_roles_of_user(*, project: Project, user) -> set[str]:
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(Role.values)
    return set(
        ProjectMembership.objects.filter(project=project, user=user).values_list("role", flat=True)
    )


def project_list_for_user(*, user) -> QuerySet[Project]:
    projects = Project.objects.all()
    if not user.is_superuser:
        projects = projects.filter(memberships__user=user).distinct()
    return projects.annotate(item_count=Count("items", distinct=True)).order_by("name")


def project_get_for_user(*, project_id: int, user, roles: tuple[str, ...] | None = None) -> Project:
    """The project if `user` holds one of `roles` in it (any role when None).

    Non-members get NotFound, so that project ids do not leak; members without the
    role get PermissionDenied.
    """
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        raise NotFoundError("project not found")
    held = project_roles_of_user(project=project, user=user)
    if not held:
        raise NotFoundError("project not found")
    if roles is not None and not held.intersection(roles):
        raise PermissionDeniedError(
            f"this needs the {' or '.join(roles)} role in project {project.name!r}"
        )
    return project


def import_job_list(*, project: Project) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(project=project).select_related("created_by")


def import_job_get(*, project: Project, job_id: int) -> ImportJob:
    job = ImportJob.objects.filter(project=project, pk=job_id).first()
    if job is None:
        raise NotFoundError("import job not found")
    return job


def item_list(*, project: Project) -> QuerySet[Item]:
    return (
        Item.objects.filter(project=project)
        .prefetch_related("item_documents__document")
        .annotate(reference_set_count=Count("reference_sets", distinct=True))
        .order_by("id")
    )
