from django.urls import path

from annotate import account_apis, api_token_apis

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
    path(
        "projects/<id:project_id>/invitations/",
        account_apis.ProjectInvitationListApi.as_view(),
        name="project-invitation-list",
    ),
    path(
        "projects/<id:project_id>/invitations/<id:invitation_id>/withdraw/",
        account_apis.ProjectInvitationWithdrawApi.as_view(),
        name="project-invitation-withdraw",
    ),
    path("invitations/", account_apis.InvitationMineListApi.as_view(), name="invitation-mine"),
    path(
        "invitations/<id:invitation_id>/accept/",
        account_apis.InvitationAcceptApi.as_view(),
        name="invitation-accept",
    ),
    path(
        "invitations/<id:invitation_id>/decline/",
        account_apis.InvitationDeclineApi.as_view(),
        name="invitation-decline",
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
    path(
        "accounts/<id:user_id>/sign-in-unlock/",
        account_apis.SiteAccountSignInUnlockApi.as_view(),
        name="account-sign-in-unlock",
    ),
    path("tokens/", api_token_apis.ApiTokenListCreateApi.as_view(), name="token-list"),
    path(
        "tokens/<id:token_id>/revoke/",
        api_token_apis.ApiTokenRevokeApi.as_view(),
        name="token-revoke",
    ),
]
