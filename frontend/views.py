"""Pages served by Django; their interactive parts call the JSON API from static scripts."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views import i18n
from django.views.decorators.http import require_POST

from annotate import selectors
from annotate.models import Language, Role, TaskType
from frontend import services
from frontend.locale import supported_language
from qc.cohorts import COHORTS


@login_required
def home(request):
    projects = selectors.project_list_for_user(user=request.user)
    can_create = request.user.is_staff or request.user.has_perm("annotate.add_project")
    return render(
        request,
        "frontend/home.html",
        {
            "projects": projects,
            "can_create": can_create,
            "task_types": TaskType.choices,
            "languages": Language.choices,
        },
    )


@login_required
def project_page(request, project_id: int):
    project = selectors.project_get_for_user(project_id=project_id, user=request.user)
    roles = selectors.project_roles_of_user(project=project, user=request.user)
    return render(
        request,
        "frontend/project.html",
        {
            "project": project,
            # Their names in the page's language, in the order of the codes.
            "roles": [Role(role).label for role in sorted(roles)],
            "is_admin": Role.ADMIN in roles,
            "is_annotator": Role.ANNOTATOR in roles,
            "can_export": bool(roles & {Role.ADMIN, Role.RESEARCHER}),
            "can_review": bool(roles & {Role.ADMIN, Role.REVIEWER}),
            "can_perturb": bool(roles & {Role.ADMIN, Role.RESEARCHER, Role.AUTHOR, Role.CHECKER}),
            "can_check_perturbations": bool(roles & {Role.ADMIN, Role.CHECKER}),
            "cohorts": COHORTS,
        },
    )


@login_required
def workspace(request, project_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.ANNOTATOR,)
    )
    return render(request, "frontend/workspace.html", {"project": project})


@login_required
def assignment_page(request, assignment_id: int):
    assignment = selectors.assignment_get_for_worker(
        assignment_id=assignment_id, worker=request.user
    )
    return render(
        request,
        "frontend/workspace.html",
        {"project": assignment.item.project, "assignment_id": assignment.pk},
    )


@login_required
def agreement_page(request, project_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.RESEARCHER)
    )
    return render(request, "frontend/agreement.html", {"project": project})


@login_required
def datasheet_page(request, project_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.RESEARCHER)
    )
    roles = selectors.project_roles_of_user(project=project, user=request.user)
    return render(
        request,
        "frontend/datasheet.html",
        {"project": project, "is_admin": Role.ADMIN in roles},
    )


@login_required
def review_page(request, project_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.REVIEWER, Role.ADMIN)
    )
    return render(request, "frontend/review.html", {"project": project})


@login_required
def quality_page(request, project_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.ADMIN,)
    )
    return render(request, "frontend/quality.html", {"project": project})


@login_required
def perturbations_page(request, project_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id,
        user=request.user,
        roles=(Role.ADMIN, Role.RESEARCHER, Role.AUTHOR, Role.CHECKER),
    )
    roles = selectors.project_roles_of_user(project=project, user=request.user)
    return render(
        request,
        "frontend/perturbations.html",
        {
            "project": project,
            "is_admin": Role.ADMIN in roles,
            "can_author": bool(roles & {Role.ADMIN, Role.AUTHOR}),
            "can_check": bool(roles & {Role.ADMIN, Role.CHECKER}),
        },
    )


@login_required
def perturb_author_page(request, project_id: int, item_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.AUTHOR)
    )
    item = selectors.perturbation_original_get(project=project, item_id=item_id)
    return render(request, "frontend/perturb_author.html", {"project": project, "item": item})


@login_required
def perturb_check_page(request, project_id: int):
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.CHECKER)
    )
    return render(request, "frontend/perturb_check.html", {"project": project})


@require_POST
def language_set(request):
    """The header's language switcher: Django's set_language (the language cookie and a safe
    redirect back), and for a signed-in user the choice kept for their next sessions."""
    language = request.POST.get(i18n.LANGUAGE_QUERY_PARAMETER, "")
    if request.user.is_authenticated and supported_language(language) == language:
        services.user_language_set(user=request.user, language=language)
        services.session_language_remember(session=request.session, language=language)
    return i18n.set_language(request)
