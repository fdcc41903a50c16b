"""Quality-control API: agreement reports, the review loop, workers and qualification.
Each view checks the caller's role in the project; services and selectors do the work."""

import csv
import io

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Item, Role
from annotate.selectors import project_get_for_annotating, project_get_for_user
from annotate.serializers import item_for_annotator
from annotate.task_types import text_names_shown
from config.api_schema import errors
from config.exceptions import ApplicationError, NotFoundError
from qc import models as qc_models
from qc import selectors as qc_selectors
from qc import services as qc_services
from qc.agreement import agreement_report_get, agreement_report_request, agreement_report_with_news
from qc.curation_selectors import curated_gold_agreement
from qc.project_setup import project_setup_checklist
from qc.serializers import (
    DecisionInputSerializer,
    GoldItemChoiceOutputSerializer,
    GoldItemsInputSerializer,
    QualityPolicySerializer,
    ReasonInputSerializer,
    ReviewInputSerializer,
    SetupStepOutputSerializer,
    TestAnswerInputSerializer,
    WorkerCsvInputSerializer,
)
from qc.suggestion_selectors import suggestion_pull_report

REPORT_ROLES = (Role.ADMIN, Role.RESEARCHER)
CSV_TABLES = ("variants", "workers", "matrix", "permutation_tests", "cohorts", "cohort_matrix")


def _project_as(request, project_id: int, roles):
    return project_get_for_user(project_id=project_id, user=request.user, roles=roles)


def _project_for_annotating(request, project_id: int):
    """The project for its annotator, whose consent (as a study's participant) allows work."""
    return project_get_for_annotating(project_id=project_id, user=request.user).project


def _payload(report, news: int) -> dict:
    return {
        "status": report.status,
        "progress": report.progress,
        "phase": report.phase,
        "progress_done": report.progress_done,
        "progress_total": report.progress_total,
        "stale": news != 0,
        # Submitted since the report was computed, for the page's "12 annotations since".
        "annotations_since": news,
        "annotations_seen": report.annotations_seen,
        "computed_at": report.computed_at,
        "error": report.error,
        "report": report.data,
    }


class AgreementReportApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, REPORT_ROLES)
        report, news = agreement_report_with_news(project=project)
        # Against the curated gold, as it stands now (curation does not wait for a report).
        return Response(
            {**_payload(report, news), "curated_gold": curated_gold_agreement(project=project)}
        )


class SuggestionPullApi(APIView):
    """How much model suggestions pull annotators toward the model, per variant that shows
    them: token F1 against the suggestions and against the other variants, with bootstrap
    intervals and permutation tests. Computed on request from the first-round annotations."""

    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, REPORT_ROLES)
        return Response(suggestion_pull_report(project=project))


class AgreementRefreshApi(APIView):
    # Computes a report from what is there; an archived project's figures stay readable.
    archived_project_writable = True

    @extend_schema(request=None, responses={202: dict, **errors(403, 404)})
    def post(self, request, project_id: int):
        project = _project_as(request, project_id, REPORT_ROLES)
        agreement_report_request(project=project)
        report, news = agreement_report_with_news(project=project)
        return Response(_payload(report, news), status=status.HTTP_202_ACCEPTED)


def _rows(data: dict, table: str) -> list[dict]:
    if table in ("matrix", "cohort_matrix"):
        group = "variant" if table == "matrix" else "cohort"
        cells = (data.get(table) or {}).get("cells", {})
        return [
            {f"{group}_a": key.split("|")[0], f"{group}_b": key.split("|")[1], **cell}
            for key, cell in cells.items()
        ]
    rows = []
    for row in data.get(table) or []:
        flat = {}
        for key, value in row.items():
            if isinstance(value, dict):
                flat.update({f"{key}_{k}": v for k, v in value.items()})
            elif isinstance(value, list):
                flat[key] = " ".join(str(v) for v in value)
            else:
                flat[key] = value
        rows.append(flat)
    return rows


class AgreementCsvApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("table", str, enum=list(CSV_TABLES))],
        responses={(200, "text/csv"): str, **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        report, _ = agreement_report_get(project=_project_as(request, project_id, REPORT_ROLES))
        table = request.query_params.get("table", "variants")
        if table not in CSV_TABLES:
            raise ApplicationError(f"table: {table!r} is not one of {', '.join(CSV_TABLES)}")
        if not report.data:
            raise ApplicationError("no agreement report has been computed yet; refresh it first")
        rows = _rows(report.data, table)
        buffer = io.StringIO()
        fields = list(dict.fromkeys(k for row in rows for k in row))
        writer = csv.DictWriter(buffer, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="agreement-{table}.csv"'
        return response


# ---------------------------------------------------------------- quality control

REVIEW_ROLES = (Role.REVIEWER, Role.ADMIN)
ADMIN_ROLES = (Role.ADMIN,)


class ReviewNextApi(APIView):
    """The next annotation for the calling reviewer, blind: nothing names the annotator."""

    @extend_schema(request=None, responses={200: dict, **errors(403, 404)})
    def post(self, request, project_id: int):
        project = _project_as(request, project_id, REVIEW_ROLES)
        annotation = qc_selectors.review_queue_next(project=project, reviewer=request.user)
        if annotation is None:
            return Response({"detail": "nothing is waiting for your review", "queue": 0})
        detail = qc_selectors.review_detail(annotation_id=annotation.pk, reviewer=request.user)
        detail["queue"] = qc_selectors.review_queue_size(project=project, reviewer=request.user)
        return Response(detail)


class ReviewQueueApi(APIView):
    """The calling reviewer's queue (at most 100 entries), oldest first."""

    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, REVIEW_ROLES)
        return Response(
            {
                "count": qc_selectors.review_queue_size(project=project, reviewer=request.user),
                "results": qc_selectors.review_queue_list(project=project, reviewer=request.user),
            }
        )


def _annotation_project(request, annotation_id: int, roles):
    project_id = qc_selectors.annotation_project_id(annotation_id=annotation_id)
    return _project_as(request, project_id, roles)


class ReviewDetailApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, annotation_id: int):
        _annotation_project(request, annotation_id, REVIEW_ROLES)
        return Response(
            qc_selectors.review_detail(annotation_id=annotation_id, reviewer=request.user)
        )


class ReviewSubmitApi(APIView):
    """Reviewers score; they cannot change highlights (this takes scores only)."""

    @extend_schema(
        request=ReviewInputSerializer, responses={201: dict, **errors(400, 403, 404, 409)}
    )
    def post(self, request, annotation_id: int):
        _annotation_project(request, annotation_id, REVIEW_ROLES)
        data = ReviewInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        review = qc_services.review_submit(
            annotation_id=annotation_id,
            reviewer=request.user,
            comprehensiveness=data.validated_data["comprehensiveness"],
            set_scores=[dict(s) for s in data.validated_data["set_scores"]],
            comment=data.validated_data["comment"],
        )
        verdict = qc_models.ReviewVerdict.objects.filter(annotation_id=annotation_id).first()
        return Response(
            {
                "review": review.pk,
                "verdict": None
                if verdict is None
                else {"outcome": verdict.outcome, "failed": verdict.failed_properties},
            },
            status=status.HTTP_201_CREATED,
        )


class RevisionFeedbackApi(APIView):
    """For the annotator of a revision: the scores, comments and failed properties."""

    @extend_schema(responses={200: dict, **errors(404)})
    def get(self, request, assignment_id: int):
        return Response(
            qc_selectors.revision_feedback(assignment_id=assignment_id, worker=request.user)
        )


class PipelineApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, REPORT_ROLES)
        return Response(qc_selectors.pipeline_counts(project=project))


class SetupChecklistApi(APIView):
    """What the project still needs before annotators can work on it (admins)."""

    @extend_schema(responses={200: SetupStepOutputSerializer(many=True), **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        steps = project_setup_checklist(project=project)
        return Response(SetupStepOutputSerializer(steps, many=True).data)


class QualityPolicyApi(APIView):
    @extend_schema(responses={200: QualityPolicySerializer, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        policy = qc_services.quality_policy_get(project)
        payload = QualityPolicySerializer(policy).data
        payload["gold_items"] = qc_selectors.gold_item_ids(project=project)
        return Response(payload)

    @extend_schema(
        request=QualityPolicySerializer,
        responses={200: QualityPolicySerializer, **errors(400, 403, 404)},
    )
    def patch(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        data = QualityPolicySerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        policy = qc_services.quality_policy_update(project=project, **data.validated_data)
        payload = QualityPolicySerializer(policy).data
        payload["gold_items"] = qc_selectors.gold_item_ids(project=project)
        return Response(payload)


class GoldItemsApi(APIView):
    @extend_schema(
        request=GoldItemsInputSerializer, responses={200: dict, **errors(400, 403, 404, 409)}
    )
    def put(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        data = GoldItemsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        qc_services.gold_items_set(project=project, **data.validated_data)
        return Response({"gold_items": qc_selectors.gold_item_ids(project=project)})


class GoldItemChoiceListApi(GenericAPIView):
    """The project's items to pick gold from, searched by id or text, a page at a time."""

    @extend_schema(
        parameters=[OpenApiParameter("search", str, description="words of the id or the text")],
        responses={200: GoldItemChoiceOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        search = request.query_params.get("search", "")
        if len(search) > qc_selectors.GOLD_SEARCH_MAX_LENGTH:
            raise ApplicationError(
                f"search: at most {qc_selectors.GOLD_SEARCH_MAX_LENGTH} characters"
            )
        items = qc_selectors.gold_item_choices(project=project, search=search)
        page = self.paginate_queryset(items)
        return self.get_paginated_response(GoldItemChoiceOutputSerializer(page, many=True).data)


class WorkerListApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, REPORT_ROLES)
        return Response({"workers": qc_selectors.worker_table(project=project)})


def _worker_in(project, worker_id: int):
    from django.contrib.auth import get_user_model

    worker = (
        get_user_model().objects.filter(pk=worker_id, project_standings__project=project).first()
    )
    if worker is None:
        raise NotFoundError("this worker has not worked on this project")
    return worker


class WorkerBlockApi(APIView):
    @extend_schema(request=ReasonInputSerializer, responses={200: dict, **errors(400, 403, 404)})
    def post(self, request, project_id: int, worker_id: int, action: str):
        project = _project_as(request, project_id, ADMIN_ROLES)
        worker = _worker_in(project, worker_id)
        data = ReasonInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        change = (
            qc_services.project_worker_block
            if action == "block"
            else qc_services.project_worker_unblock
        )
        standing = change(
            project=project, worker=worker, reason=data.validated_data["reason"], actor=request.user
        )
        return Response({"worker_id": worker.pk, "status": standing.status})


class CandidateListApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        return Response({"candidates": qc_selectors.candidate_list(project=project)})


class CandidateDecisionApi(APIView):
    @extend_schema(
        request=DecisionInputSerializer, responses={200: dict, **errors(400, 403, 404, 409)}
    )
    def post(self, request, project_id: int, worker_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        worker = _worker_in(project, worker_id)
        data = DecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        standing = qc_services.candidate_decide(
            project=project, worker=worker, actor=request.user, **data.validated_data
        )
        return Response({"worker_id": worker.pk, "status": standing.status})


class AuditListApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        return Response({"events": qc_selectors.audit_list(project=project)})


class WorkerCsvImportApi(APIView):
    """A crowd platform's worker CSV, imported into this project's records only: its
    admins run its crowd campaigns, and no other project's rules read what they import."""

    # A file travels in a multipart body only; an urlencoded form cannot carry one.
    parser_classes = [MultiPartParser]

    @extend_schema(request=WorkerCsvInputSerializer, responses={200: dict, **errors(400, 403, 404)})
    def post(self, request, project_id: int):
        project = _project_as(request, project_id, ADMIN_ROLES)
        data = WorkerCsvInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        summary = qc_services.worker_profiles_import_csv(
            project=project,
            acting_user=request.user,
            data=upload.read(),
            source=upload.name,
            platform=data.validated_data["platform"],
        )
        return Response(
            {"created": summary.created, "updated": summary.updated, "linked": summary.linked}
        )


class QualificationStatusApi(APIView):
    """The calling worker's standing in the project."""

    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project_as(request, project_id, (Role.ANNOTATOR,))
        standing = qc_services.qualification_standing(project=project, worker=request.user)
        refusal = qc_services.qualification_gate(project=project, worker=request.user)
        return Response(
            {
                "status": standing.status,
                "reason": standing.reason
                if standing.status != qc_models.QualificationStatus.BLOCKED
                else "",
                "code": refusal.code if refusal else None,
                "message": refusal.message if refusal else None,
            }
        )


class QualificationNextApi(APIView):
    """The next test item: the item's text and tokens, never its gold rationale."""

    @extend_schema(request=None, responses={200: dict, **errors(403, 404, 409)})
    def post(self, request, project_id: int):
        # Test items are work too: not served before a participant's consent.
        project = _project_for_annotating(request, project_id)
        gold, attempt, total = qc_services.qualification_test_next(
            project=project, worker=request.user
        )
        policy = qc_services.quality_policy_get(project)
        item = Item.objects.prefetch_related("item_documents__document").get(pk=gold.item_id)
        answered = attempt.answers.count()
        return Response(
            {
                "id": gold.pk,
                "test": {
                    "attempt": attempt.number,
                    "max_attempts": policy.test_max_attempts,
                    "position": answered + 1,
                    "total": total,
                    "previous_failed": qc_selectors.attempt_before_failed(
                        attempt=attempt,
                        pass_mark=policy.test_pass_f1,
                        max_attempts=policy.test_max_attempts,
                    ),
                },
                "status": "test",
                "round": 1,
                "draft": None,
                "project": {
                    "id": project.id,
                    "name": project.name,
                    "labels": project.labels,
                    "min_highlight": 0,
                    "task_type": project.task_type,
                    "language": project.language,
                    "text_names": text_names_shown(project.task_type, project.text_names),
                    "question_rationales": project.question_rationales,
                },
                "variant": {
                    "name": "qualification test",
                    "version": 1,
                    "text": policy.test_instructions,
                    "examples": [],
                },
                "item": item_for_annotator(item),
            }
        )


class QualificationAnswerApi(APIView):
    @extend_schema(
        request=TestAnswerInputSerializer, responses={201: dict, **errors(400, 403, 404, 409)}
    )
    def post(self, request, project_id: int):
        project = _project_for_annotating(request, project_id)
        data = TestAnswerInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        qc_services.qualification_answer_submit(
            project=project,
            worker=request.user,
            gold_item_id=data.validated_data["gold_item"],
            rationale_sets=data.validated_data["rationale_sets"],
            time_spent_ms=data.validated_data["time_spent_ms"],
        )
        # The score is not returned: answers stay blind until the attempt is decided.
        standing = qc_services.qualification_standing(project=project, worker=request.user)
        return Response({"status": standing.status}, status=status.HTTP_201_CREATED)
