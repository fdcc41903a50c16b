"""Export API: researchers and admins of a project only."""

from django.http import FileResponse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Role
from annotate.selectors import project_get_for_user, variant_get
from annotate.serializers import VariantOutputSerializer
from config.api_schema import errors
from config.exceptions import ApplicationError, ConflictError, NotFoundError
from exports import selectors, services
from exports.classifier_models import (
    classifier_model_delete,
    classifier_model_get,
    classifier_model_list,
    classifier_model_register,
)
from exports.datasheet_info import datasheet_info_update, datasheet_preview
from exports.file_names import portable_file_name
from exports.models import Export
from exports.runs import explainer_run_start, export_runs_fail_if_worker_lost
from exports.serializers import (
    ClassifierModelDeletedOutputSerializer,
    ClassifierModelDeleteInputSerializer,
    ClassifierModelOutputSerializer,
    ClassifierModelRegisterInputSerializer,
    DatasheetInfoSerializer,
    DatasheetPreviewInputSerializer,
    ExplainerRunCreateInputSerializer,
    ExplainerRunOutputSerializer,
    ExportCreateInputSerializer,
    ExportOutputSerializer,
    RunCompareInputSerializer,
    RunCompareRowSerializer,
    VariantSuggestionsInputSerializer,
)
from exports.suggestions import variant_suggestions_set

EXPORT_ROLES = (Role.ADMIN, Role.RESEARCHER)


def _project(request, project_id: int):
    return project_get_for_user(project_id=project_id, user=request.user, roles=EXPORT_ROLES)


def _export(request, project_id: int, export_id: int) -> Export:
    """The export as it really is: failed first if its worker was lost."""
    export = selectors.export_get(project=_project(request, project_id), export_id=export_id)
    return services.export_fail_if_worker_lost(export)


class ExportListCreateApi(GenericAPIView):
    # An archived project is still exported (annotate.permissions.ProjectNotArchived).
    archived_project_writable = True
    serializer_class = ExportOutputSerializer

    @extend_schema(
        operation_id="projects_exports_list",
        responses={200: ExportOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id)
        services.project_exports_fail_if_worker_lost(project=project)
        page = self.paginate_queryset(selectors.export_list(project=project))
        return self.get_paginated_response(ExportOutputSerializer(page, many=True).data)

    @extend_schema(
        request=ExportCreateInputSerializer,
        responses={202: ExportOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _project(request, project_id)
        data = ExportCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        export = services.export_start(
            project=project, acting_user=request.user, raw_params=data.validated_data
        )
        export.refresh_from_db()
        return Response(ExportOutputSerializer(export).data, status=status.HTTP_202_ACCEPTED)


class ExportDetailApi(APIView):
    @extend_schema(responses={200: ExportOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, export_id: int):
        export = _export(request, project_id, export_id)
        return Response(ExportOutputSerializer(export).data)


class ExportCancelApi(APIView):
    # An archived project is still exported (annotate.permissions.ProjectNotArchived).
    archived_project_writable = True

    @extend_schema(request=None, responses={200: ExportOutputSerializer, **errors(403, 404)})
    def post(self, request, project_id: int, export_id: int):
        export = _export(request, project_id, export_id)
        return Response(ExportOutputSerializer(services.export_cancel(export=export)).data)


class ExportDownloadApi(APIView):
    @extend_schema(responses={(200, "application/zip"): bytes, **errors(403, 404, 409)})
    def get(self, request, project_id: int, export_id: int):
        export = _export(request, project_id, export_id)
        stored = services.export_file_open(export)  # from the storage, wherever it was made
        if stored is None:
            raise ConflictError(
                f"export {export.pk} has no downloadable file (status {export.status})"
            )
        # Exports made before names were made portable may still hold a ":" in theirs.
        name = portable_file_name(export.file_path.rsplit("/", 1)[-1], fallback="export.zip")
        response = FileResponse(stored, as_attachment=True, filename=name)
        response["X-Checksum-SHA256"] = export.sha256
        return response


class ExplainerRunListCreateApi(GenericAPIView):
    # An archived project is still exported (annotate.permissions.ProjectNotArchived).
    archived_project_writable = True
    # A predictions file in a multipart body, or a bundled explainer named in JSON.
    parser_classes = [MultiPartParser, JSONParser]
    serializer_class = ExplainerRunOutputSerializer

    @extend_schema(
        operation_id="projects_exports_runs_list",
        responses={200: ExplainerRunOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int, export_id: int):
        export = _export(request, project_id, export_id)
        export_runs_fail_if_worker_lost(export=export)
        page = self.paginate_queryset(selectors.explainer_run_list(export=export))
        return self.get_paginated_response(ExplainerRunOutputSerializer(page, many=True).data)

    @extend_schema(
        request=ExplainerRunCreateInputSerializer,
        responses={202: ExplainerRunOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int, export_id: int):
        export = _export(request, project_id, export_id)
        data = ExplainerRunCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        model_id = data.validated_data.get("model")
        try:
            model = (
                None
                if model_id is None
                else classifier_model_get(project=export.project, model_id=model_id)
            )
        except NotFoundError as exc:  # a field of the body, not the address: 400
            raise ApplicationError(exc.message) from exc
        run = explainer_run_start(
            export=export,
            acting_user=request.user,
            name=data.validated_data["name"],
            split=data.validated_data["split"],
            upload=data.validated_data.get("file"),
            explainer=data.validated_data.get("explainer"),
            model=model,
            options=data.validated_data.get("options"),
        )
        run.refresh_from_db()
        return Response(ExplainerRunOutputSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class ClassifierModelListCreateApi(GenericAPIView):
    """The models registered for the project: its admins register them; researchers see
    them, to run model explainers on them."""

    # A folder named in JSON, or a zip of one in a multipart body.
    parser_classes = [MultiPartParser, JSONParser]
    serializer_class = ClassifierModelOutputSerializer

    @extend_schema(
        operation_id="projects_models_list",
        responses={200: ClassifierModelOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        page = self.paginate_queryset(classifier_model_list(project=_project(request, project_id)))
        return self.get_paginated_response(ClassifierModelOutputSerializer(page, many=True).data)

    @extend_schema(
        request=ClassifierModelRegisterInputSerializer,
        responses={201: ClassifierModelOutputSerializer, **errors(400, 403, 404, 409)},
    )
    def post(self, request, project_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        data = ClassifierModelRegisterInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        model = classifier_model_register(
            project=project,
            acting_user=request.user,
            name=data.validated_data["name"],
            folder=data.validated_data.get("folder"),
            upload=data.validated_data.get("file"),
            label_mapping=data.validated_data.get("label_mapping"),
        )
        return Response(ClassifierModelOutputSerializer(model).data, status=status.HTTP_201_CREATED)


class ClassifierModelDetailApi(APIView):
    """One registered model: its admins delete it (with its runs, when asked)."""

    @extend_schema(
        operation_id="projects_models_destroy",
        parameters=[ClassifierModelDeleteInputSerializer],
        request=None,
        responses={200: ClassifierModelDeletedOutputSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def delete(self, request, project_id: int, model_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        query = ClassifierModelDeleteInputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        runs_deleted = classifier_model_delete(
            project=project,
            model_id=model_id,
            acting_user=request.user,
            with_runs=query.validated_data["runs"] == "delete",
        )
        return Response({"model_id": model_id, "runs_deleted": runs_deleted})


class RunCompareApi(APIView):
    """The project's finished runs over every export, for the board's comparisons: the
    explainers on one model (`model`), one explainer across models (`explainer`), each run
    with the gold its export holds (reference sets, accepted sets, curated gold, ...)."""

    @extend_schema(
        operation_id="projects_runs_compare_list",
        parameters=[RunCompareInputSerializer],
        responses={200: RunCompareRowSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id)
        data = RunCompareInputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        runs = selectors.explainer_run_compare(project=project, **data.validated_data)
        return Response(RunCompareRowSerializer(runs, many=True).data)


class DatasheetInfoApi(APIView):
    """What the project's admins state for its datasheets (annotators, training, pay
    outside a crowd platform, licence and terms); researchers may read it."""

    @extend_schema(responses={200: DatasheetInfoSerializer, **errors(403, 404)})
    def get(self, request, project_id: int):
        info = selectors.datasheet_info_get(project=_project(request, project_id))
        return Response(DatasheetInfoSerializer(info).data)

    @extend_schema(
        request=DatasheetInfoSerializer,
        responses={200: DatasheetInfoSerializer, **errors(400, 403, 404)},
    )
    def patch(self, request, project_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        data = DatasheetInfoSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        info = datasheet_info_update(
            project=project, acting_user=request.user, **data.validated_data
        )
        return Response(DatasheetInfoSerializer(info).data)


class DatasheetPreviewApi(APIView):
    """The datasheet for the given export parameters, from the latest finished export of
    that dataset (none is built in the request): {"export" (its id, finished_at and
    created_by; null when none has finished, and the figures are empty), "note", "json",
    "markdown"}."""

    @extend_schema(
        parameters=[DatasheetPreviewInputSerializer], responses={200: dict, **errors(400, 403, 404)}
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id)
        data = DatasheetPreviewInputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        raw = {k: v for k, v in data.validated_data.items() if k != "archive"}
        return Response(datasheet_preview(project=project, raw_params=raw))


class VariantSuggestionsApi(APIView):
    """Which explainer run's top-k tokens a variant shows its annotators as suggestions:
    the project's admins only, as for any change of a variant."""

    @extend_schema(
        request=VariantSuggestionsInputSerializer,
        responses={200: VariantOutputSerializer, **errors(400, 403, 404)},
    )
    def put(self, request, project_id: int, variant_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        variant = variant_get(project=project, variant_id=variant_id)
        data = VariantSuggestionsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        variant = variant_suggestions_set(
            variant=variant, run_id=data.validated_data["run"], k=data.validated_data["k"]
        )
        return Response(VariantOutputSerializer(variant).data)
