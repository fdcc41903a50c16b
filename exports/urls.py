from django.urls import path

from exports import apis, job_progress_apis

app_name = "exports"

urlpatterns = [
    path(
        "projects/<id:project_id>/exports/", apis.ExportListCreateApi.as_view(), name="export-list"
    ),
    path(
        "projects/<id:project_id>/exports/<id:export_id>/",
        apis.ExportDetailApi.as_view(),
        name="export-detail",
    ),
    path(
        "projects/<id:project_id>/exports/<id:export_id>/cancel/",
        apis.ExportCancelApi.as_view(),
        name="export-cancel",
    ),
    path(
        "projects/<id:project_id>/exports/<id:export_id>/download/",
        apis.ExportDownloadApi.as_view(),
        name="export-download",
    ),
    path(
        "projects/<id:project_id>/exports/<id:export_id>/runs/",
        apis.ExplainerRunListCreateApi.as_view(),
        name="run-list",
    ),
    path(
        "projects/<id:project_id>/exports/<id:export_id>/progress/",
        job_progress_apis.ExportProgressApi.as_view(),
        name="export-progress",
    ),
    path(
        "projects/<id:project_id>/exports/<id:export_id>/runs/<id:run_id>/progress/",
        job_progress_apis.ExplainerRunProgressApi.as_view(),
        name="run-progress",
    ),
    path(
        "projects/<id:project_id>/models/",
        apis.ClassifierModelListCreateApi.as_view(),
        name="model-list",
    ),
    path(
        "projects/<id:project_id>/models/<id:model_id>/",
        apis.ClassifierModelDetailApi.as_view(),
        name="model-detail",
    ),
    path(
        "projects/<id:project_id>/runs/compare/",
        apis.RunCompareApi.as_view(),
        name="run-compare",
    ),
    path(
        "projects/<id:project_id>/variants/<id:variant_id>/suggestions/",
        apis.VariantSuggestionsApi.as_view(),
        name="variant-suggestions",
    ),
    path(
        "projects/<id:project_id>/datasheet/",
        apis.DatasheetInfoApi.as_view(),
        name="datasheet-info",
    ),
    path(
        "projects/<id:project_id>/datasheet/preview/",
        apis.DatasheetPreviewApi.as_view(),
        name="datasheet-preview",
    ),
]
