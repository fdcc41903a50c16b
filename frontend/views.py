"""Pages served by Django; their interactive parts call the JSON API from static scripts."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import pgettext_lazy
from django.views import i18n
from django.views.decorators.http import require_POST

from annotate import account_selectors, selectors
from annotate.models import AnswersEditableUntil, Language, Role, TaskType
from annotate.participants import ConsentRequiredError
from annotate.services import invitations as invitation_services
from annotate.services.item_bulk_actions import ITEM_BULK_ACTIONS
from annotate.variant_presets import PRESET_CHANGES
from crowd.views import consent_refused_page
from exports.file_names import portable_file_name
from frontend import navigation, services
from frontend.locale import supported_language
from qc import item_detail_selectors as qc_item_detail
from qc import selectors as qc_selectors
from qc.cohorts import COHORTS
from qc.curation_selectors import curation_item_get
from qc.project_setup import project_missing_to_annotate, project_setup_checklist
from qc.services.lifecycle import deleted_projects_for_user, restorable_until


@login_required
def home(request):
    projects = list(selectors.project_list_for_user(user=request.user))
    progress = selectors.project_progress_summaries(project_ids=[p.pk for p in projects])
    for project in projects:
        project.progress = progress[project.pk]
    can_create = request.user.is_staff or request.user.has_perm("annotate.add_project")
    deleted = deleted_projects_for_user(user=request.user)
    for project in deleted:
        project.restorable_until = restorable_until(project.deleted_at)
    return render(
        request,
        "frontend/home.html",
        {
            "projects": projects,
            "invitations": account_selectors.invitation_list_open_for_user(user=request.user),
            "can_create": can_create,
            "deleted_projects": deleted,
            "task_types": TaskType.choices,
            "languages": Language.choices,
        },
    )


@login_required
@require_POST
def invitation_answer(request, invitation_id: int, accepted: bool):
    """Accept or decline one of the signed-in user's invitations (the projects page's
    buttons), then back to the projects page."""
    if accepted:
        invitation_services.invitation_accept(invitation_id=invitation_id, user=request.user)
    else:
        invitation_services.invitation_decline(invitation_id=invitation_id, user=request.user)
    return redirect("home")


def project_page_render(request, project_id: int, page: str, template: str, context=None):
    """A project page: the roles its navigation entry names, then the header and tabs that the
    member's roles open (a non-member gets a 404, a member without the role a 403)."""
    project = selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=navigation.project_page_roles(page)
    )
    roles = selectors.project_roles_of_user(project=project, user=request.user)
    return render(
        request,
        template,
        {
            "project": project,
            # Their names in the page's language, in the order of the codes.
            "roles": [Role(role).label for role in sorted(roles)],
            "nav": navigation.project_navigation(project_id=project.pk, roles=roles, current=page),
            "is_admin": Role.ADMIN in roles,
            **(context(project, roles) if context else {}),
        },
    )


def _overview_context(project, roles) -> dict:
    # What the project still needs, for the admins who set it up: on top while a required
    # step is left, folded at the bottom once none is.
    checklist = project_setup_checklist(project=project) if Role.ADMIN in roles else []
    return {
        "setup_checklist": checklist,
        "setup_pending": any(not step.done and not step.optional for step in checklist),
        "setup_done": sum(step.done for step in checklist),
        "progress": selectors.project_progress_summaries(project_ids=[project.pk])[project.pk],
        "is_annotator": Role.ANNOTATOR in roles,
        "can_export": bool(roles & {Role.ADMIN, Role.RESEARCHER}),
        "can_review": bool(roles & {Role.ADMIN, Role.REVIEWER}),
        "can_perturb": bool(roles & {Role.ADMIN, Role.RESEARCHER, Role.AUTHOR, Role.CHECKER}),
        "can_check_perturbations": bool(roles & {Role.ADMIN, Role.CHECKER}),
    }


@login_required
def project_page(request, project_id: int):
    return project_page_render(
        request, project_id, "overview", "frontend/project.html", _overview_context
    )


@login_required
def project_data_page(request, project_id: int):
    return project_page_render(request, project_id, "data", "frontend/project_data.html")


def _data_manager_rights(roles) -> dict:
    return {
        # Bulk actions change the data: admins only (the bulk API refuses everyone else).
        "can_act": Role.ADMIN in roles,
        "can_curate": bool(roles & {Role.ADMIN, Role.CURATOR}),
        # The export form (its page's roles) takes the list's filter (?item_filter=).
        "can_export": bool(roles & {Role.ADMIN, Role.RESEARCHER}),
        # The actions the bulk API knows (apps register theirs), so the pages offer no other.
        "bulk_actions": " ".join(sorted(ITEM_BULK_ACTIONS)),
    }


@login_required
def data_items_page(request, project_id: int):
    def context(project, roles):
        return {
            **_data_manager_rights(roles),
            "filter_choices": qc_item_detail.data_manager_filter_choices(project=project),
        }

    return project_page_render(request, project_id, "items", "frontend/data_items.html", context)


@login_required
def data_item_page(request, project_id: int, item_id: int):
    def item_context(project, roles):
        # The item must be this project's: another project's id is a 404 like the API's.
        item = qc_item_detail.item_get(project=project, item_id=item_id)
        return {**_data_manager_rights(roles), "item": item}

    return project_page_render(request, project_id, "item", "frontend/data_item.html", item_context)


@login_required
def project_instructions_page(request, project_id: int):
    # The study's preset names: once every one is a variant, adding them is no longer the
    # page's first action.
    return project_page_render(
        request,
        project_id,
        "instructions",
        "frontend/project_instructions.html",
        lambda project, roles: {"preset_names": list(PRESET_CHANGES)},
    )


@login_required
def project_workers_page(request, project_id: int):
    return project_page_render(request, project_id, "workers", "frontend/project_workers.html")


@login_required
def project_pipeline_page(request, project_id: int):
    return project_page_render(
        request,
        project_id,
        "pipeline",
        "frontend/project_pipeline.html",
        _pipeline_context,
    )


# The automatic flags by their API names, as the quality page names them.
_FLAG_NAMES = {
    "empty": pgettext_lazy("quality flag", "empty"),
    "too_fast": pgettext_lazy("quality flag", "too fast"),
    "stopwords": pgettext_lazy("quality flag", "stopwords"),
    "first_tokens": pgettext_lazy("quality flag", "first tokens"),
    "low_agreement": pgettext_lazy("quality flag", "low agreement"),
}


def _pipeline_context(project, roles) -> dict:
    pipeline = qc_selectors.pipeline_counts(project=project)
    return {
        "pipeline": pipeline,
        "flag_counts": [(_FLAG_NAMES.get(kind, kind), n) for kind, n in pipeline["flags"].items()],
    }


@login_required
def project_results_page(request, project_id: int):
    return project_page_render(
        request,
        project_id,
        "results",
        "frontend/project_results.html",
        lambda project, roles: {"cohorts": COHORTS},
    )


@login_required
def project_settings_page(request, project_id: int):
    return project_page_render(
        request,
        project_id,
        "settings",
        "frontend/project_settings.html",
        lambda project, roles: {
            "restore_days": settings.DELETED_RESTORE_DAYS,
            "answers_editable_choices": AnswersEditableUntil.choices,
        },
    )


@login_required
def workspace(request, project_id: int):
    try:
        access = selectors.project_get_for_annotating(project_id=project_id, user=request.user)
    except ConsentRequiredError as refusal:
        return consent_refused_page(request, refusal, project_id=project_id)
    missing = project_missing_to_annotate(project=access.project)
    if missing:
        roles = selectors.project_roles_of_user(project=access.project, user=request.user)
        return render(
            request,
            "frontend/workspace_not_ready.html",
            {"project": access.project, "missing": missing, "is_admin": Role.ADMIN in roles},
        )
    return render(request, "frontend/workspace.html", {"project": access.project})


@login_required
def answers_page(request, project_id: int):
    """The annotator's previous answers in the project, and one of them to see or change."""
    try:
        access = selectors.project_get_for_annotating(project_id=project_id, user=request.user)
    except ConsentRequiredError as refusal:
        return consent_refused_page(request, refusal, project_id=project_id)
    return render(request, "frontend/answers.html", {"project": access.project})


@login_required
def assignment_page(request, assignment_id: int):
    assignment = selectors.assignment_get_for_worker(
        assignment_id=assignment_id, worker=request.user
    )
    project = assignment.item.project
    try:
        selectors.annotator_access_get(project=project, user=request.user)
    except ConsentRequiredError as refusal:
        return consent_refused_page(request, refusal, project_id=project.pk)
    return render(
        request,
        "frontend/workspace.html",
        {"project": project, "assignment_id": assignment.pk},
    )


@login_required
def agreement_page(request, project_id: int):
    return project_page_render(request, project_id, "agreement", "frontend/agreement.html")


@login_required
def datasheet_page(request, project_id: int):
    return project_page_render(
        request,
        project_id,
        "datasheet",
        "frontend/datasheet.html",
        # The downloads are named after the project, as its exports are.
        lambda project, roles: {"file_stem": portable_file_name(project.name)},
    )


@login_required
def review_page(request, project_id: int):
    return project_page_render(request, project_id, "review", "frontend/review.html")


@login_required
def curation_page(request, project_id: int):
    return project_page_render(
        request, project_id, "curation", "frontend/curation.html", _curation_context
    )


@login_required
def curation_item_page(request, project_id: int, item_id: int):
    def item_context(project, roles):
        item = curation_item_get(project=project, item_id=item_id)
        return {"item": item, **_curation_context(project, roles)}

    return project_page_render(
        request, project_id, "curation-item", "frontend/curation_item.html", item_context
    )


def _curation_context(project, roles) -> dict:
    return {
        "variants": list(
            project.variants.order_by("name", "version").values("id", "name", "version")
        ),
        "flag_names": _FLAG_NAMES,
    }


@login_required
def quality_page(request, project_id: int):
    return project_page_render(request, project_id, "quality", "frontend/quality.html")


@login_required
def perturbations_page(request, project_id: int):
    return project_page_render(
        request, project_id, "perturbations", "frontend/perturbations.html", _perturbations_context
    )


@login_required
def perturb_author_page(request, project_id: int, item_id: int):
    def item_context(project, roles):
        return {"item": selectors.perturbation_original_get(project=project, item_id=item_id)}

    return project_page_render(
        request, project_id, "perturb-author", "frontend/perturb_author.html", item_context
    )


def _perturbations_context(project, roles) -> dict:
    return {
        "can_author": bool(roles & {Role.ADMIN, Role.AUTHOR}),
        "can_check": bool(roles & {Role.ADMIN, Role.CHECKER}),
        # The originals' list is the authors' and checkers' working list (its API refuses
        # a researcher, who reads the progress only).
        "can_list_originals": bool(roles & {Role.ADMIN, Role.AUTHOR, Role.CHECKER}),
    }


@login_required
def perturb_check_page(request, project_id: int):
    return project_page_render(request, project_id, "perturb-check", "frontend/perturb_check.html")


@require_POST
def language_set(request):
    """The header's language switcher: Django's set_language (the language cookie and a safe
    redirect back), and for a signed-in user the choice kept for their next sessions."""
    language = request.POST.get(i18n.LANGUAGE_QUERY_PARAMETER, "")
    if request.user.is_authenticated and supported_language(language) == language:
        services.user_language_set(user=request.user, language=language)
        services.session_language_remember(session=request.session, language=language)
    return i18n.set_language(request)
