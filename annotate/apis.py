"""Thin API views: validate input, call a service or selector, serialize the result."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import selectors
from annotate.filters import ItemFilter
from annotate.models import Role
from annotate.permissions import CanCreateProjects
from annotate.serializers import (
    ImportJobCreateInputSerializer,
    ImportJobOutputSerializer,
    ItemOutputSerializer,
    ProjectCreateInputSerializer,
    ProjectOutputSerializer,
)
from annotate.services import import_job_create, project_create


class ProjectListCreateApi(GenericAPIView):
    permission_classes = [IsAuthenticated, CanCreateProjects]
    serializer_class = ProjectOutputSerializer

    def get_queryset(self):
        return selectors.project_list_for_user(user=self.request.user)

    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(ProjectOutputSerializer(page, many=True).data)

    @extend_schema(request=ProjectCreateInputSerializer, responses={201: ProjectOutputSerializer})
    def post(self, request):
        data = ProjectCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = project_create(acting_user=request.user, **data.validated_data)
        return Response(ProjectOutputSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    @extend_schema(responses=ProjectOutputSerializer)
    def get(self, request, project_id: int):
        project = selectors.project_get_for_user(project_id=project_id, user=request.user)
        return Response(ProjectOutputSerializer(project).data)


class ImportJobListCreateApi(GenericAPIView):
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = ImportJobOutputSerializer

    def get_queryset(self):
        return selectors.import_job_list(project=self._project())

    def _project(self):
        return selectors.project_get_for_user(
            project_id=self.kwargs["project_id"], user=self.request.user, roles=(Role.ADMIN,)
        )

    def get(self, request, project_id: int):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(ImportJobOutputSerializer(page, many=True).data)

    @extend_schema(
        request=ImportJobCreateInputSerializer, responses={202: ImportJobOutputSerializer}
    )
    def post(self, request, project_id: int):
        project = self._project()
        data = ImportJobCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = import_job_create(
            project=project,
            acting_user=request.user,
            upload=data.validated_data["file"],
            source_format=data.validated_data.get("source_format"),
        )
        job.refresh_from_db()
        return Response(ImportJobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ImportJobDetailApi(APIView):
    @extend_schema(responses=ImportJobOutputSerializer)
    def get(self, request, project_id: int, job_id: int):
        project = selectors.project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        job = selectors.import_job_get(project=project, job_id=job_id)
        return Response(ImportJobOutputSerializer(job).data)


class ItemListApi(GenericAPIView):
    serializer_class = ItemOutputSerializer
    filterset_class = ItemFilter

    def get_queryset(self):
        project = selectors.project_get_for_user(
            project_id=self.kwargs["project_id"],
            user=self.request.user,
            roles=(Role.ADMIN, Role.RESEARCHER),
        )
        return selectors.item_list(project=project)

    def get(self, request, project_id: int):
        items = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(items)
        return self.get_paginated_response(ItemOutputSerializer(page, many=True).data)
