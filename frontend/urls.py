from django.contrib.auth import views as auth_views
from django.urls import path

from frontend import views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/<int:project_id>/", views.project_page, name="project-page"),
    path("projects/<int:project_id>/annotate/", views.workspace, name="workspace"),
    path("projects/<int:project_id>/agreement/", views.agreement_page, name="agreement-page"),
    path("projects/<int:project_id>/review/", views.review_page, name="review-page"),
    path("projects/<int:project_id>/quality/", views.quality_page, name="quality-page"),
    path(
        "projects/<int:project_id>/perturbations/",
        views.perturbations_page,
        name="perturbations-page",
    ),
    path(
        "projects/<int:project_id>/perturbations/originals/<int:item_id>/",
        views.perturb_author_page,
        name="perturb-author-page",
    ),
    path(
        "projects/<int:project_id>/perturbations/check/",
        views.perturb_check_page,
        name="perturb-check-page",
    ),
    path("assignments/<int:assignment_id>/", views.assignment_page, name="assignment-page"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
