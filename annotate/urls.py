from django.urls import path

from annotate import apis

app_name = "annotate"

urlpatterns = [
    path("projects/", apis.ProjectListCreateApi.as_view(), name="project-list"),
    path("projects/<int:project_id>/", apis.ProjectDetailApi.as_view(), name="project-detail"),
    path(
        "projects/<int:project_id>/imports/",
        apis.ImportJobListCreateApi.as_view(),
        name="import-list",
    ),
    path(
        "projects/<int:project_id>/imports/<int:job_id>/",
        apis.ImportJobDetailApi.as_view(),
        name="import-detail",
    ),
    path("projects/<int:project_id>/items/", apis.ItemListApi.as_view(), name="item-list"),
]
