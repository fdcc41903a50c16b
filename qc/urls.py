from django.urls import path

from qc import apis

app_name = "qc"

urlpatterns = [
    path(
        "projects/<int:project_id>/agreement/", apis.AgreementReportApi.as_view(), name="agreement"
    ),
    path(
        "projects/<int:project_id>/agreement/refresh/",
        apis.AgreementRefreshApi.as_view(),
        name="agreement-refresh",
    ),
    path(
        "projects/<int:project_id>/agreement/csv/",
        apis.AgreementCsvApi.as_view(),
        name="agreement-csv",
    ),
]
