"""Pages served by Django; their interactive parts call the JSON API from static scripts."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotate import selectors
from annotate.models import Role


@login_required
def home(request):
    projects = selectors.project_list_for_user(user=request.user)
    return render(request, "frontend/home.html", {"projects": projects})


@login_required
def project_page(request, project_id: int):
    project = selectors.project_get_for_user(project_id=project_id, user=request.user)
    roles = selectors.project_roles_of_user(project=project, user=request.user)
    return render(
        request,
        "frontend/project.html",
        {"project": project, "roles": sorted(roles), "is_admin": Role.ADMIN in roles},
    )
