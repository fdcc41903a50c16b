from django.urls import path

from annotate import account_apis

app_name = "accounts"

urlpatterns = [
    path(
        "projects/<id:project_id>/accounts/",
        account_apis.ProjectAccountListCreateApi.as_view(),
        name="project-account-list",
    ),
    path(
        "projects/<id:project_id>/accounts/events/",
        account_apis.ProjectAccountEventListApi.as_view(),
        name="project-account-events",
    ),
    path(
        "projects/<id:project_id>/accounts/<id:user_id>/password/",
        account_apis.ProjectAccountPasswordResetApi.as_view(),
        name="project-account-password",
    ),
    path(
        "projects/<id:project_id>/accounts/<id:user_id>/active/",
        account_apis.ProjectAccountActiveApi.as_view(),
        name="project-account-active",
    ),
    path("accounts/", account_apis.SiteAccountListCreateApi.as_view(), name="account-list"),
    path("accounts/events/", account_apis.SiteAccountEventListApi.as_view(), name="account-events"),
    path(
        "accounts/<id:user_id>/password/",
        account_apis.SiteAccountPasswordResetApi.as_view(),
        name="account-password",
    ),
    path(
        "accounts/<id:user_id>/active/",
        account_apis.SiteAccountActiveApi.as_view(),
        name="account-active",
    ),
]
