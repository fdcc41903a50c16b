"""DRF permission for project-scoped endpoints: the view names the roles it allows."""

from rest_framework.permissions import BasePermission


class CanCreateProjects(BasePermission):
    message = "creating projects needs staff status or the 'add project' permission"

    def has_permission(self, request, view) -> bool:
        if request.method != "POST":
            return True
        user = request.user
        return bool(
            user.is_authenticated and (user.is_staff or user.has_perm("annotate.add_project"))
        )
