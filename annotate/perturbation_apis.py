"""The perturbation step's API: authoring, the check queue, progress and settings.

Each view names the roles it allows and is thin: validate, call a service or selector,
serialize. Authors write; checkers decide (never on their own drafts); admins do both.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import selectors, services
from annotate.models import Role
from annotate.perturbation_serializers import (
    OriginalDetailOutputSerializer,
    OriginalListFilterSerializer,
    OriginalListOutputSerializer,
    PerturbationCheckInputSerializer,
    PerturbationCreateInputSerializer,
    PerturbationDetailOutputSerializer,
    PerturbationListFilterSerializer,
    PerturbationOutputSerializer,
    PerturbationProgressOutputSerializer,
    PerturbationSettingsInputSerializer,
    PerturbationSettingsOutputSerializer,
)
from annotate.perturbation_types import available_types
from config.api_schema import errors

AUTHORS = (Role.ADMIN, Role.AUTHOR)
CHECKERS = (Role.ADMIN, Role.CHECKER)
PERTURBATION_STEP = (Role.ADMIN, Role.AUTHOR, Role.CHECKER)
PROGRESS_READERS = (Role.ADMIN, Role.RESEARCHER, Role.AUTHOR, Role.CHECKER)


def _project(request, project_id: int, roles):
    return selectors.project_get_for_user(project_id=project_id, user=request.user, roles=roles)


def _settings(project) -> dict:
    return {
        "task_type": project.task_type,
        "language": project.language,
        "labels": project.labels,
        "types": available_types(project.perturbation_types),
        "project_types": project.perturbation_types,
        "perturbations_per_original": project.perturbations_per_original,
        "perturbations_per_type": project.perturbations_per_type,
    }


class PerturbationSettingsApi(APIView):
    @extend_schema(responses={200: PerturbationSettingsOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project(request, project_id, PROGRESS_READERS)
        return Response(PerturbationSettingsOutputSerializer(_settings(project)).data)

    @extend_schema(
        request=PerturbationSettingsInputSerializer,
        responses={200: PerturbationSettingsOutputSerializer, **errors(400, 403, 404)},
    )
    def patch(self, request, project_id: int):
        project = _project(request, project_id, (Role.ADMIN,))
        data = PerturbationSettingsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = services.perturbation_settings_update(project=project, **data.validated_data)
        return Response(PerturbationSettingsOutputSerializer(_settings(project)).data)


class PerturbationProgressApi(APIView):
    @extend_schema(responses={200: PerturbationProgressOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = _project(request, project_id, PROGRESS_READERS)
        progress = selectors.perturbation_progress(project=project)
        return Response(PerturbationProgressOutputSerializer(progress).data)


class PerturbationOriginalListApi(GenericAPIView):
    serializer_class = OriginalListOutputSerializer

    @extend_schema(
        operation_id="projects_perturbations_originals_list",
        parameters=[OriginalListFilterSerializer],
        responses={200: OriginalListOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id, PERTURBATION_STEP)
        query = OriginalListFilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        items = selectors.perturbation_original_list(project=project, **query.validated_data)
        page = self.paginate_queryset(items)
        return self.get_paginated_response(OriginalListOutputSerializer(page, many=True).data)


class PerturbationOriginalDetailApi(APIView):
    @extend_schema(responses={200: OriginalDetailOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, item_id: int):
        project = _project(request, project_id, PERTURBATION_STEP)
        item = selectors.perturbation_original_get(project=project, item_id=item_id)
        return Response(OriginalDetailOutputSerializer(item, context={"project": project}).data)


class PerturbationListCreateApi(GenericAPIView):
    serializer_class = PerturbationOutputSerializer

    @extend_schema(
        operation_id="projects_perturbations_list",
        parameters=[PerturbationListFilterSerializer],
        responses={200: PerturbationOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id, PERTURBATION_STEP)
        query = PerturbationListFilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        perturbations = selectors.perturbation_list(
            project=project,
            user=request.user,
            status=query.validated_data.get("status") or None,
            original_id=query.validated_data.get("original"),
        )
        page = self.paginate_queryset(perturbations)
        return self.get_paginated_response(PerturbationOutputSerializer(page, many=True).data)

    @extend_schema(
        request=PerturbationCreateInputSerializer,
        responses={201: PerturbationDetailOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _project(request, project_id, AUTHORS)
        data = PerturbationCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        perturbation = services.perturbation_create(
            project=project,
            original_id=fields.pop("original"),
            acting_user=request.user,
            **fields,
        )
        perturbation = selectors.perturbation_get(
            project=project, perturbation_id=perturbation.pk, user=request.user
        )
        return Response(
            PerturbationDetailOutputSerializer(perturbation, context={"project": project}).data,
            status=status.HTTP_201_CREATED,
        )


class PerturbationCheckQueueApi(GenericAPIView):
    """Pending perturbations the caller may decide: everyone's but their own."""

    serializer_class = PerturbationOutputSerializer

    @extend_schema(
        operation_id="projects_perturbations_queue_list",
        responses={200: PerturbationOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id, CHECKERS)
        queue = selectors.perturbation_check_queue(project=project, checker=request.user)
        page = self.paginate_queryset(queue)
        return self.get_paginated_response(PerturbationOutputSerializer(page, many=True).data)


class PerturbationDetailApi(APIView):
    @extend_schema(responses={200: PerturbationDetailOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, perturbation_id: int):
        project = _project(request, project_id, PERTURBATION_STEP)
        perturbation = selectors.perturbation_get(
            project=project, perturbation_id=perturbation_id, user=request.user
        )
        return Response(
            PerturbationDetailOutputSerializer(perturbation, context={"project": project}).data
        )


class PerturbationCheckApi(APIView):
    """Accept (optionally with edits) or reject; accepting makes the perturbed item."""

    @extend_schema(
        request=PerturbationCheckInputSerializer,
        responses={200: PerturbationDetailOutputSerializer, **errors(400, 403, 404, 409)},
    )
    def post(self, request, project_id: int, perturbation_id: int):
        project = _project(request, project_id, CHECKERS)
        data = PerturbationCheckInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.perturbation_check(
            project=project,
            perturbation_id=perturbation_id,
            acting_user=request.user,
            decision=data.validated_data["decision"],
            comment=data.validated_data["comment"],
            edits=data.validated_data["edits"],
        )
        perturbation = selectors.perturbation_get(
            project=project, perturbation_id=perturbation_id, user=request.user
        )
        return Response(
            PerturbationDetailOutputSerializer(perturbation, context={"project": project}).data
        )
