"""The account pages' addresses (frontend/account_views.py)."""

from django.urls import path

from frontend import account_views, api_token_views

urlpatterns = [
    path("users/", account_views.users_page, name="users-page"),
    path(
        "projects/<id:project_id>/members/",
        account_views.project_members_page,
        name="project-members",
    ),
    path("accounts/password/", account_views.PasswordChangePage.as_view(), name="password-change"),
    path("accounts/tokens/", api_token_views.api_tokens_page, name="api-tokens"),
    path(
        "accounts/tokens/<id:token_id>/revoke/",
        api_token_views.api_token_revoke,
        name="api-token-revoke",
    ),
    path(
        "accounts/link/<uidb64>/<token>/",
        account_views.AccountLinkPage.as_view(),
        name="account-link",
    ),
]
