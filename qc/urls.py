from django.urls import path

from qc import (
    apis,
    chart_apis,
    curation_apis,
    data_manager_apis,
    item_detail_apis,
    job_progress_apis,
    lifecycle_apis,
)

app_name = "qc"

urlpatterns = [
    path(
        "projects/<id:project_id>/agreement/", apis.AgreementReportApi.as_view(), name="agreement"
    ),
    path(
        "projects/<id:project_id>/agreement/suggestions/",
        apis.SuggestionPullApi.as_view(),
        name="agreement-suggestions",
    ),
    path(
        "projects/<id:project_id>/agreement/refresh/",
        apis.AgreementRefreshApi.as_view(),
        name="agreement-refresh",
    ),
    path(
        "projects/<id:project_id>/agreement/csv/",
        apis.AgreementCsvApi.as_view(),
        name="agreement-csv",
    ),
]

urlpatterns += [
    path(
        "projects/<id:project_id>/setup-checklist/",
        apis.SetupChecklistApi.as_view(),
        name="setup-checklist",
    ),
    path(
        "projects/<id:project_id>/reviews/next/", apis.ReviewNextApi.as_view(), name="review-next"
    ),
    path(
        "projects/<id:project_id>/reviews/queue/",
        apis.ReviewQueueApi.as_view(),
        name="review-queue",
    ),
    path(
        "annotations/<id:annotation_id>/review/",
        apis.ReviewDetailApi.as_view(),
        name="review-detail",
    ),
    path(
        "annotations/<id:annotation_id>/reviews/",
        apis.ReviewSubmitApi.as_view(),
        name="review-submit",
    ),
    path(
        "assignments/<id:assignment_id>/feedback/",
        apis.RevisionFeedbackApi.as_view(),
        name="revision-feedback",
    ),
    path("projects/<id:project_id>/pipeline/", apis.PipelineApi.as_view(), name="pipeline"),
    path(
        "projects/<id:project_id>/quality-policy/",
        apis.QualityPolicyApi.as_view(),
        name="quality-policy",
    ),
    path("projects/<id:project_id>/gold-items/", apis.GoldItemsApi.as_view(), name="gold-items"),
    path(
        "projects/<id:project_id>/gold-items/choices/",
        apis.GoldItemChoiceListApi.as_view(),
        name="gold-item-choices",
    ),
    path("projects/<id:project_id>/workers/", apis.WorkerListApi.as_view(), name="worker-list"),
    path(
        "projects/<id:project_id>/workers/import/",
        apis.WorkerCsvImportApi.as_view(),
        name="worker-import",
    ),
    path(
        "projects/<id:project_id>/workers/<id:worker_id>/block/",
        apis.WorkerBlockApi.as_view(),
        {"action": "block"},
        name="worker-block",
    ),
    path(
        "projects/<id:project_id>/workers/<id:worker_id>/unblock/",
        apis.WorkerBlockApi.as_view(),
        {"action": "unblock"},
        name="worker-unblock",
    ),
    path(
        "projects/<id:project_id>/candidates/",
        apis.CandidateListApi.as_view(),
        name="candidate-list",
    ),
    path(
        "projects/<id:project_id>/candidates/<id:worker_id>/decision/",
        apis.CandidateDecisionApi.as_view(),
        name="candidate-decision",
    ),
    path("projects/<id:project_id>/audit/", apis.AuditListApi.as_view(), name="audit"),
    path(
        "projects/<id:project_id>/qualification/",
        apis.QualificationStatusApi.as_view(),
        name="qualification-status",
    ),
    path(
        "projects/<id:project_id>/qualification/next/",
        apis.QualificationNextApi.as_view(),
        name="qualification-next",
    ),
    path(
        "projects/<id:project_id>/qualification/answers/",
        apis.QualificationAnswerApi.as_view(),
        name="qualification-answer",
    ),
]

# The progress bar's view of the agreement report's computation (qc/job_progress_apis.py).
urlpatterns += [
    path(
        "projects/<id:project_id>/agreement/progress/",
        job_progress_apis.AgreementProgressApi.as_view(),
        name="agreement-progress",
    ),
    path(
        "projects/<id:project_id>/charts/pipeline/",
        chart_apis.PipelineTimelineApi.as_view(),
        name="chart-pipeline",
    ),
    path(
        "projects/<id:project_id>/charts/seconds-per-item/",
        chart_apis.SecondsPerItemApi.as_view(),
        name="chart-seconds-per-item",
    ),
    path(
        "projects/<id:project_id>/workers/import-jobs/",
        job_progress_apis.WorkerImportJobCreateApi.as_view(),
        name="worker-import-job-list",
    ),
    path(
        "projects/<id:project_id>/workers/import-jobs/<id:job_id>/",
        job_progress_apis.WorkerImportJobDetailApi.as_view(),
        name="worker-import-job-detail",
    ),
    path(
        "projects/<id:project_id>/workers/import-jobs/<id:job_id>/progress/",
        job_progress_apis.WorkerImportProgressApi.as_view(),
        name="worker-import-progress",
    ),
]

# The data manager: its item list, bulk actions and saved views.
urlpatterns += [
    path(
        "projects/<id:project_id>/items/", data_manager_apis.ItemListApi.as_view(), name="item-list"
    ),
    path(
        "projects/<id:project_id>/items/bulk/",
        data_manager_apis.ItemBulkApi.as_view(),
        name="item-bulk",
    ),
    path(
        "projects/<id:project_id>/item-views/",
        data_manager_apis.ItemViewListCreateApi.as_view(),
        name="item-view-list",
    ),
    path(
        "projects/<id:project_id>/item-views/<id:view_id>/",
        data_manager_apis.ItemViewDetailApi.as_view(),
        name="item-view-detail",
    ),
]

# The data manager's item page (qc/item_detail_apis.py).
urlpatterns += [
    path(
        "projects/<id:project_id>/items/<id:item_id>/",
        item_detail_apis.ItemDetailApi.as_view(),
        name="item-detail",
    ),
]

# Curation: adjudicated gold rationale sets (qc/curation_apis.py).
urlpatterns += [
    path(
        "projects/<id:project_id>/curation/queue/",
        curation_apis.CurationQueueApi.as_view(),
        name="curation-queue",
    ),
    path(
        "projects/<id:project_id>/curation/items/<id:item_id>/",
        curation_apis.CurationItemApi.as_view(),
        name="curation-item",
    ),
    path(
        "projects/<id:project_id>/curation/items/<id:item_id>/confirm/",
        curation_apis.CurationItemConfirmApi.as_view(),
        name="curation-item-confirm",
    ),
    path(
        "projects/<id:project_id>/curation/auto-merge/",
        curation_apis.CurationAutoMergeApi.as_view(),
        name="curation-auto-merge",
    ),
]

# A project's lifecycle: members, deletion with restore, archive (qc/lifecycle_apis.py).
urlpatterns += [
    path(
        "projects/<id:project_id>/members/<id:user_id>/",
        lifecycle_apis.MemberDetailApi.as_view(),
        name="member-detail",
    ),
    path(
        "projects/<id:project_id>/imports/<id:job_id>/delete/",
        lifecycle_apis.ImportDeleteApi.as_view(),
        name="import-delete",
    ),
    path(
        "projects/<id:project_id>/imports/<id:job_id>/restore/",
        lifecycle_apis.ImportRestoreApi.as_view(),
        name="import-restore",
    ),
    path(
        "projects/<id:project_id>/items/delete/",
        lifecycle_apis.ItemsDeleteApi.as_view(),
        name="items-delete",
    ),
    path(
        "projects/<id:project_id>/items/restore/",
        lifecycle_apis.ItemsRestoreApi.as_view(),
        name="items-restore",
    ),
    path(
        "projects/<id:project_id>/deleted/",
        lifecycle_apis.DeletedDataApi.as_view(),
        name="deleted-data",
    ),
    path(
        "projects/<id:project_id>/delete/",
        lifecycle_apis.ProjectDeleteApi.as_view(),
        name="project-delete",
    ),
    path(
        "projects/<id:project_id>/restore/",
        lifecycle_apis.ProjectRestoreApi.as_view(),
        name="project-restore",
    ),
    path(
        "projects/<id:project_id>/archive/",
        lifecycle_apis.ProjectArchiveApi.as_view(),
        name="project-archive",
    ),
    path(
        "projects/<id:project_id>/unarchive/",
        lifecycle_apis.ProjectUnarchiveApi.as_view(),
        name="project-unarchive",
    ),
    path(
        "deleted-projects/", lifecycle_apis.DeletedProjectListApi.as_view(), name="deleted-projects"
    ),
]
