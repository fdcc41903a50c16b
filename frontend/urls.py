from django.contrib.auth import views as auth_views
from django.urls import path
from django.utils import timezone
from django.views.decorators.http import last_modified
from django.views.i18n import JavaScriptCatalog

from frontend import docs_site, views

_STARTED = timezone.now()

urlpatterns = [
    path("", views.home, name="home"),
    # The documentation site built by `make docs` (frontend/docs_site.py): public, as on the web.
    path("docs/", docs_site.docs_page, name="docs-site"),
    path("docs/<path:path>", docs_site.docs_page, name="docs-file"),
    path(
        "invitations/<id:invitation_id>/accept/",
        views.invitation_answer,
        {"accepted": True},
        name="invitation-accept",
    ),
    path(
        "invitations/<id:invitation_id>/decline/",
        views.invitation_answer,
        {"accepted": False},
        name="invitation-decline",
    ),
    path("projects/<id:project_id>/", views.project_page, name="project-page"),
    path("projects/<id:project_id>/data/", views.project_data_page, name="project-data"),
    path("projects/<id:project_id>/data/items/", views.data_items_page, name="data-items-page"),
    path(
        "projects/<id:project_id>/data/items/<id:item_id>/",
        views.data_item_page,
        name="data-item-page",
    ),
    path(
        "projects/<id:project_id>/instructions/",
        views.project_instructions_page,
        name="project-instructions",
    ),
    path("projects/<id:project_id>/workers/", views.project_workers_page, name="project-workers"),
    path(
        "projects/<id:project_id>/pipeline/", views.project_pipeline_page, name="project-pipeline"
    ),
    path("projects/<id:project_id>/results/", views.project_results_page, name="project-results"),
    path(
        "projects/<id:project_id>/settings/", views.project_settings_page, name="project-settings"
    ),
    path("projects/<id:project_id>/annotate/", views.workspace, name="workspace"),
    path("projects/<id:project_id>/answers/", views.answers_page, name="answers-page"),
    path("projects/<id:project_id>/agreement/", views.agreement_page, name="agreement-page"),
    path("projects/<id:project_id>/review/", views.review_page, name="review-page"),
    path("projects/<id:project_id>/curation/", views.curation_page, name="curation-page"),
    path(
        "projects/<id:project_id>/curation/<id:item_id>/",
        views.curation_item_page,
        name="curation-item-page",
    ),
    path("projects/<id:project_id>/datasheet/", views.datasheet_page, name="datasheet-page"),
    path("projects/<id:project_id>/quality/", views.quality_page, name="quality-page"),
    path(
        "projects/<id:project_id>/perturbations/",
        views.perturbations_page,
        name="perturbations-page",
    ),
    path(
        "projects/<id:project_id>/perturbations/originals/<id:item_id>/",
        views.perturb_author_page,
        name="perturb-author-page",
    ),
    path(
        "projects/<id:project_id>/perturbations/check/",
        views.perturb_check_page,
        name="perturb-check-page",
    ),
    path("assignments/<id:assignment_id>/", views.assignment_page, name="assignment-page"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("language/", views.language_set, name="language-set"),
    # The page scripts' strings (this project's djangojs catalog only, not every app's);
    # unchanged while the server runs, so a browser's revalidation is answered with a 304.
    path(
        "jsi18n/",
        last_modified(lambda request: _STARTED)(JavaScriptCatalog.as_view(packages=["frontend"])),
        name="javascript-catalog",
    ),
]
