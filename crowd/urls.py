from django.urls import path

from crowd import apis, views

app_name = "crowd"

_LINK = "api/projects/<id:project_id>/crowd/links/<id:link_id>/"

urlpatterns = [
    # The worker's pages: the platform's entry, consent, work and the way back.
    path("crowd/s/<str:key>/", views.entry, name="entry"),
    path("crowd/sessions/<id:session_id>/consent/", views.consent, name="consent"),
    path("crowd/sessions/<id:session_id>/work/", views.work, name="work"),
    path("crowd/sessions/<id:session_id>/done/", views.done, name="done"),
    path("crowd/sessions/<id:session_id>/end/", views.end, name="end"),
    # The worker's session.
    path("api/crowd/sessions/<id:session_id>/", apis.CrowdSessionApi.as_view(), name="session"),
    path(
        "api/crowd/sessions/<id:session_id>/finish/",
        apis.CrowdSessionFinishApi.as_view(),
        name="session-finish",
    ),
    # Project admins (the pay report also for researchers).
    path(
        "api/projects/<id:project_id>/crowd/links/",
        apis.StudyLinkListCreateApi.as_view(),
        name="link-list",
    ),
    path(_LINK, apis.StudyLinkDetailApi.as_view(), name="link-detail"),
    path(
        _LINK + "external-question/",
        apis.ExternalQuestionApi.as_view(),
        name="link-external-question",
    ),
    path(_LINK + "sessions/", apis.StudyLinkSessionsApi.as_view(), name="link-sessions"),
    path(_LINK + "bonuses/", apis.BonusFileApi.as_view(), name="link-bonuses"),
    path(_LINK + "verify/", apis.CompletionTokenCheckApi.as_view(), name="link-verify"),
    path(
        "api/projects/<id:project_id>/crowd/earnings/",
        apis.CrowdEarningsApi.as_view(),
        name="earnings",
    ),
    path(
        "api/projects/<id:project_id>/crowd/pay-report/",
        apis.CrowdPayReportApi.as_view(),
        name="pay-report",
    ),
]
