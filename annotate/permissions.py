"""DRF permission for project-scoped endpoints: the view names the roles it allows."""

from rest_framework.permissions import SAFE_METHODS, BasePermission


class CanCreateProjects(BasePermission):
    message = "creating projects needs staff status or the 'add project' permission"

    def has_permission(self, request, view) -> bool:
        if request.method != "POST":
            return True
        user = request.user
        return bool(
            user.is_authenticated and (user.is_staff or user.has_perm("annotate.add_project"))
        )


ARCHIVED = "this project is archived: it is read-only until an admin unarchives it"


def project_writable_check(project) -> None:
    """The one rule on writes to an archived project, for the services that load the
    project themselves (the permission below covers every endpoint under a project)."""
    # Imported here: DRF loads this module (a default permission) while config.exceptions,
    # which imports DRF's views, is still being imported.
    from config.exceptions import ConflictError

    if project.archived_at is not None:
        raise ConflictError(ARCHIVED, extra={"code": "project_archived"})


class ProjectNotArchived(BasePermission):
    """Every write under /projects/<id>/ to an archived project answers 409 "this project
    is archived" (one default permission, so no endpoint can forget it). A view that stays
    open on an archived project says so with `archived_project_writable = True`: exports,
    unarchive, delete, and "next item" (refused in words by its own gate, at no cost to
    the hot path). Callers who may not see the project get its 404 first."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS or getattr(view, "archived_project_writable", False):
            return True
        project_id = getattr(view, "kwargs", {}).get("project_id")
        if project_id is None:
            return True
        from annotate.models import Project
        from annotate.selectors import project_get_for_user

        if Project.objects.filter(pk=project_id, archived_at__isnull=False).exists():
            project_writable_check(project_get_for_user(project_id=project_id, user=request.user))
        return True
