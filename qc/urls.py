from django.urls import path

from qc import apis, chart_apis, job_progress_apis

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

urlpatterns += [
    path(
        "projects/<int:project_id>/setup-checklist/",
        apis.SetupChecklistApi.as_view(),
        name="setup-checklist",
    ),
    path(
        "projects/<int:project_id>/reviews/next/", apis.ReviewNextApi.as_view(), name="review-next"
    ),
    path(
        "projects/<int:project_id>/reviews/queue/",
        apis.ReviewQueueApi.as_view(),
        name="review-queue",
    ),
    path(
        "annotations/<int:annotation_id>/review/",
        apis.ReviewDetailApi.as_view(),
        name="review-detail",
    ),
    path(
        "annotations/<int:annotation_id>/reviews/",
        apis.ReviewSubmitApi.as_view(),
        name="review-submit",
    ),
    path(
        "assignments/<int:assignment_id>/feedback/",
        apis.RevisionFeedbackApi.as_view(),
        name="revision-feedback",
    ),
    path("projects/<int:project_id>/pipeline/", apis.PipelineApi.as_view(), name="pipeline"),
    path(
        "projects/<int:project_id>/quality-policy/",
        apis.QualityPolicyApi.as_view(),
        name="quality-policy",
    ),
    path("projects/<int:project_id>/gold-items/", apis.GoldItemsApi.as_view(), name="gold-items"),
    path(
        "projects/<int:project_id>/gold-items/choices/",
        apis.GoldItemChoiceListApi.as_view(),
        name="gold-item-choices",
    ),
    path("projects/<int:project_id>/workers/", apis.WorkerListApi.as_view(), name="worker-list"),
    path(
        "projects/<int:project_id>/workers/import/",
        apis.WorkerCsvImportApi.as_view(),
        name="worker-import",
    ),
    path(
        "projects/<int:project_id>/workers/<int:worker_id>/block/",
        apis.WorkerBlockApi.as_view(),
        {"action": "block"},
        name="worker-block",
    ),
    path(
        "projects/<int:project_id>/workers/<int:worker_id>/unblock/",
        apis.WorkerBlockApi.as_view(),
        {"action": "unblock"},
        name="worker-unblock",
    ),
    path(
        "projects/<int:project_id>/candidates/",
        apis.CandidateListApi.as_view(),
        name="candidate-list",
    ),
    path(
        "projects/<int:project_id>/candidates/<int:worker_id>/decision/",
        apis.CandidateDecisionApi.as_view(),
        name="candidate-decision",
    ),
    path("projects/<int:project_id>/audit/", apis.AuditListApi.as_view(), name="audit"),
    path(
        "projects/<int:project_id>/qualification/",
        apis.QualificationStatusApi.as_view(),
        name="qualification-status",
    ),
    path(
        "projects/<int:project_id>/qualification/next/",
        apis.QualificationNextApi.as_view(),
        name="qualification-next",
    ),
    path(
        "projects/<int:project_id>/qualification/answers/",
        apis.QualificationAnswerApi.as_view(),
        name="qualification-answer",
    ),
]

# The progress bar's view of the agreement report's computation (qc/job_progress_apis.py).
urlpatterns += [
    path(
        "projects/<int:project_id>/agreement/progress/",
        job_progress_apis.AgreementProgressApi.as_view(),
        name="agreement-progress",
    ),
    path(
        "projects/<int:project_id>/charts/pipeline/",
        chart_apis.PipelineTimelineApi.as_view(),
        name="chart-pipeline",
    ),
    path(
        "projects/<int:project_id>/charts/seconds-per-item/",
        chart_apis.SecondsPerItemApi.as_view(),
        name="chart-seconds-per-item",
    ),
    path(
        "projects/<int:project_id>/workers/import-jobs/",
        job_progress_apis.WorkerImportJobCreateApi.as_view(),
        name="worker-import-job-list",
    ),
    path(
        "projects/<int:project_id>/workers/import-jobs/<int:job_id>/",
        job_progress_apis.WorkerImportJobDetailApi.as_view(),
        name="worker-import-job-detail",
    ),
    path(
        "projects/<int:project_id>/workers/import-jobs/<int:job_id>/progress/",
        job_progress_apis.WorkerImportProgressApi.as_view(),
        name="worker-import-progress",
    ),
]
