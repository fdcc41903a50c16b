from django.urls import path

from annotate import apis, job_progress_apis, perturbation_apis

app_name = "annotate"

# The annotators' routes come first: Django tries patterns in order, and "next" and
# "submit" are most of the traffic.
urlpatterns = [
    path(
        "projects/<id:project_id>/assignments/next/",
        apis.AssignmentNextApi.as_view(),
        name="assignment-next",
    ),
    path(
        "assignments/<id:assignment_id>/",
        apis.AssignmentDetailApi.as_view(),
        name="assignment-detail",
    ),
    path(
        "assignments/<id:assignment_id>/draft/",
        apis.AssignmentDraftApi.as_view(),
        name="assignment-draft",
    ),
    path(
        "assignments/<id:assignment_id>/skip/",
        apis.AssignmentSkipApi.as_view(),
        name="assignment-skip",
    ),
    path(
        "assignments/<id:assignment_id>/submit/",
        apis.AssignmentSubmitApi.as_view(),
        name="assignment-submit",
    ),
    path("projects/", apis.ProjectListCreateApi.as_view(), name="project-list"),
    path("projects/<id:project_id>/", apis.ProjectDetailApi.as_view(), name="project-detail"),
    path(
        "projects/<id:project_id>/policy/", apis.ProjectPolicyApi.as_view(), name="project-policy"
    ),
    path(
        "projects/<id:project_id>/members/",
        apis.MembershipCreateApi.as_view(),
        name="member-create",
    ),
    path(
        "projects/<id:project_id>/progress/",
        apis.ProjectProgressApi.as_view(),
        name="project-progress",
    ),
    path(
        "projects/<id:project_id>/progress/mine/",
        apis.WorkerProgressApi.as_view(),
        name="worker-progress",
    ),
    path(
        "projects/<id:project_id>/imports/",
        apis.ImportJobListCreateApi.as_view(),
        name="import-list",
    ),
    path(
        "projects/<id:project_id>/imports/hf-mapping/",
        apis.ImportHfMappingApi.as_view(),
        name="import-hf-mapping",
    ),
    path(
        "projects/<id:project_id>/imports/<id:job_id>/",
        apis.ImportJobDetailApi.as_view(),
        name="import-detail",
    ),
    path(
        "projects/<id:project_id>/imports/<id:job_id>/progress/",
        job_progress_apis.ImportJobProgressApi.as_view(),
        name="import-progress",
    ),
    path("projects/<id:project_id>/items/", apis.ItemListApi.as_view(), name="item-list"),
    path(
        "projects/<id:project_id>/variants/",
        apis.VariantListCreateApi.as_view(),
        name="variant-list",
    ),
    path(
        "projects/<id:project_id>/variants/presets/",
        apis.VariantPresetsApi.as_view(),
        name="variant-presets",
    ),
    path(
        "projects/<id:project_id>/variants/<id:variant_id>/",
        apis.VariantDetailApi.as_view(),
        name="variant-detail",
    ),
    path(
        "projects/<id:project_id>/perturbations/",
        perturbation_apis.PerturbationListCreateApi.as_view(),
        name="perturbation-list",
    ),
    path(
        "projects/<id:project_id>/perturbations/settings/",
        perturbation_apis.PerturbationSettingsApi.as_view(),
        name="perturbation-settings",
    ),
    path(
        "projects/<id:project_id>/perturbations/progress/",
        perturbation_apis.PerturbationProgressApi.as_view(),
        name="perturbation-progress",
    ),
    path(
        "projects/<id:project_id>/perturbations/originals/",
        perturbation_apis.PerturbationOriginalListApi.as_view(),
        name="perturbation-originals",
    ),
    path(
        "projects/<id:project_id>/perturbations/originals/<id:item_id>/",
        perturbation_apis.PerturbationOriginalDetailApi.as_view(),
        name="perturbation-original-detail",
    ),
    path(
        "projects/<id:project_id>/perturbations/queue/",
        perturbation_apis.PerturbationCheckQueueApi.as_view(),
        name="perturbation-queue",
    ),
    path(
        "projects/<id:project_id>/perturbations/<id:perturbation_id>/",
        perturbation_apis.PerturbationDetailApi.as_view(),
        name="perturbation-detail",
    ),
    path(
        "projects/<id:project_id>/perturbations/<id:perturbation_id>/check/",
        perturbation_apis.PerturbationCheckApi.as_view(),
        name="perturbation-check",
    ),
]
