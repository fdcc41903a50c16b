"""Thin API views: validate input, call a service or selector, serialize the result."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import selectors, services
from annotate.api_token_access import api_token_project_limit
from annotate.models import Role
from annotate.permissions import CanCreateProjects
from annotate.serializers import (
    AssignmentOutputSerializer,
    DraftInputSerializer,
    HfMappingInputSerializer,
    HfMappingOutputSerializer,
    ImportJobCreateInputSerializer,
    ImportJobOutputSerializer,
    MemberInvitedOutputSerializer,
    MembershipInputSerializer,
    ProjectCreateInputSerializer,
    ProjectOutputSerializer,
    ProjectPolicyInputSerializer,
    SubmitInputSerializer,
    SubmitOutputSerializer,
    VariantCreateInputSerializer,
    VariantOutputSerializer,
    VariantPresetsInputSerializer,
    VariantUpdateInputSerializer,
    submit_input_validated,
)
from annotate.services.import_job_liveness import project_import_jobs_fail_if_worker_lost
from annotate.services.imports import import_job_fail_if_worker_lost
from config.api_schema import errors
from config.request_body_limits import ANNOTATOR


class ProjectListCreateApi(GenericAPIView):
    permission_classes = [IsAuthenticated, CanCreateProjects]
    serializer_class = ProjectOutputSerializer

    def get_queryset(self):
        return selectors.project_list_for_user(
            user=self.request.user, only_ids=api_token_project_limit(self.request)
        )

    @extend_schema(
        operation_id="projects_list",
        responses={200: ProjectOutputSerializer(many=True), **errors(400)},
    )
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(ProjectOutputSerializer(page, many=True).data)

    @extend_schema(
        request=ProjectCreateInputSerializer,
        responses={201: ProjectOutputSerializer, **errors(400, 403)},
    )
    def post(self, request):
        data = ProjectCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = services.project_create(acting_user=request.user, **data.validated_data)
        return Response(ProjectOutputSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    @extend_schema(responses={200: ProjectOutputSerializer, **errors(404)})
    def get(self, request, project_id: int):
        project = selectors.project_get_for_user(project_id=project_id, user=request.user)
        return Response(ProjectOutputSerializer(project).data)


class ImportJobListCreateApi(GenericAPIView):
    # A file travels in a multipart body only; an urlencoded form cannot carry one.
    parser_classes = [MultiPartParser]
    serializer_class = ImportJobOutputSerializer

    def get_queryset(self):
        return selectors.import_job_list(project=self._project())

    def _project(self):
        return selectors.project_get_for_user(
            project_id=self.kwargs["project_id"], user=self.request.user, roles=(Role.ADMIN,)
        )

    @extend_schema(
        operation_id="projects_imports_list",
        responses={200: ImportJobOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = self._project()
        project_import_jobs_fail_if_worker_lost(project=project)
        page = self.paginate_queryset(selectors.import_job_list(project=project))
        return self.get_paginated_response(ImportJobOutputSerializer(page, many=True).data)

    @extend_schema(
        request=ImportJobCreateInputSerializer,
        responses={202: ImportJobOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = self._project()
        data = ImportJobCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = services.import_job_create(
            project=project,
            acting_user=request.user,
            upload=data.validated_data["file"],
            source_format=data.validated_data.get("source_format"),
            mapping=data.validated_data.get("mapping"),
        )
        job.refresh_from_db()
        return Response(ImportJobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ImportHfMappingApi(APIView):
    """A Hugging Face dataset's columns and the mapping an import would read it with,
    checked on its first rows; nothing is written."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="projects_imports_hf_mapping_create",
        request=HfMappingInputSerializer,
        responses={200: HfMappingOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = selectors.project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        data = HfMappingInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        preview = services.hf_mapping_preview_upload(
            upload=data.validated_data["file"],
            mapping=data.validated_data.get("mapping"),
            task_type=project.task_type,
        )
        return Response(HfMappingOutputSerializer(preview).data)


class ImportJobDetailApi(APIView):
    @extend_schema(responses={200: ImportJobOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, job_id: int):
        project = selectors.project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        job = import_job_fail_if_worker_lost(
            selectors.import_job_get(project=project, job_id=job_id)
        )
        return Response(ImportJobOutputSerializer(job).data)


def _admin_project(request, project_id: int):
    return selectors.project_get_for_user(
        project_id=project_id, user=request.user, roles=(Role.ADMIN,)
    )


class ProjectPolicyApi(APIView):
    @extend_schema(
        request=ProjectPolicyInputSerializer,
        responses={200: ProjectOutputSerializer, **errors(400, 403, 404)},
    )
    def patch(self, request, project_id: int):
        project = _admin_project(request, project_id)
        data = ProjectPolicyInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        project = services.project_update_policy(project=project, **data.validated_data)
        return Response(ProjectOutputSerializer(project).data)


MEMBER_INVITED_IF_EXISTS = "If an account with this user name exists, it has been invited."


class MembershipCreateApi(APIView):
    """Adds a person directly when the caller may (annotate.account_rules), else invites."""

    @extend_schema(
        request=MembershipInputSerializer,
        responses={
            201: MembershipInputSerializer,
            202: MemberInvitedOutputSerializer,
            **errors(400, 403, 404),
        },
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        data = MembershipInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = services.membership_add_by_username(
            project=project, acting_user=request.user, **data.validated_data
        )
        if outcome is services.MemberAddOutcome.ADDED:
            return Response(data.validated_data, status=status.HTTP_201_CREATED)
        # The same answer whether or not the name is an account's.
        return Response({"detail": MEMBER_INVITED_IF_EXISTS}, status=status.HTTP_202_ACCEPTED)


class VariantListCreateApi(APIView):
    @extend_schema(responses={200: VariantOutputSerializer(many=True), **errors(403, 404)})
    def get(self, request, project_id: int):
        project = selectors.project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.RESEARCHER)
        )
        return Response(
            VariantOutputSerializer(selectors.variant_list(project=project), many=True).data
        )

    @extend_schema(
        request=VariantCreateInputSerializer,
        responses={201: VariantOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        data = VariantCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        variant = services.variant_create(project=project, **data.validated_data)
        return Response(VariantOutputSerializer(variant).data, status=status.HTTP_201_CREATED)


class VariantDetailApi(APIView):
    @extend_schema(
        request=VariantUpdateInputSerializer,
        responses={200: VariantOutputSerializer, **errors(400, 403, 404)},
    )
    def patch(self, request, project_id: int, variant_id: int):
        project = _admin_project(request, project_id)
        variant = selectors.variant_get(project=project, variant_id=variant_id)
        data = VariantUpdateInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        variant = services.variant_update(variant=variant, **data.validated_data)
        return Response(VariantOutputSerializer(variant).data)


class VariantPresetsApi(APIView):
    @extend_schema(
        request=VariantPresetsInputSerializer,
        responses={201: VariantOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        data = VariantPresetsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        created = services.variant_presets_install(project=project, **data.validated_data)
        return Response(
            VariantOutputSerializer(created, many=True).data, status=status.HTTP_201_CREATED
        )


class ProjectProgressApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = selectors.project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.RESEARCHER)
        )
        return Response(selectors.project_progress(project=project))


class AssignmentNextApi(APIView):
    """Lease the next item for the calling annotator (or return their open lease)."""

    request_body_kind = ANNOTATOR
    # Refused in words by assignment_next when archived, at no cost to the hot path.
    archived_project_writable = True

    @extend_schema(
        request=None,
        responses={200: AssignmentOutputSerializer, 204: None, **errors(403, 404)},
    )
    def post(self, request, project_id: int):
        access = selectors.project_get_for_annotating(project_id=project_id, user=request.user)
        assignment = services.assignment_next(project=access.project, worker=request.user)
        if assignment is None:
            return Response(
                selectors.no_work_reason(project=access.project, worker=request.user).as_dict()
            )
        return Response(_assignment_out(assignment, access))


def _assignment_out(assignment, access: selectors.AnnotatorAccess) -> dict:
    return AssignmentOutputSerializer(
        assignment, context={"variant_hidden": access.variant_hidden}
    ).data


class WorkerProgressApi(APIView):
    """The calling annotator's progress; kept out of "next" so the hot path stays lean."""

    request_body_kind = ANNOTATOR

    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        access = selectors.project_get_for_annotating(project_id=project_id, user=request.user)
        return Response(selectors.worker_progress(access=access, worker=request.user))


class AssignmentDetailApi(APIView):
    request_body_kind = ANNOTATOR

    @extend_schema(responses={200: AssignmentOutputSerializer, **errors(403, 404)})
    def get(self, request, assignment_id: int):
        assignment = selectors.assignment_get_for_worker(
            assignment_id=assignment_id, worker=request.user
        )
        access = selectors.annotator_access_get(project=assignment.item.project, user=request.user)
        return Response(_assignment_out(assignment, access))


def _owned_body(validate, *, assignment_id: int, worker):
    """`validate()`'s result. A body that does not parse or validate is about someone
    else's assignment answered 404, as a valid one is: nobody learns more of another
    worker's assignment than that it is not found. Ownership is checked only then, so a
    valid submit costs no query more; the service checks it for valid bodies."""
    try:
        return validate()
    except (ParseError, ValidationError):
        selectors.assignment_check_owned(assignment_id=assignment_id, worker=worker)
        raise


def _draft_validated(data) -> dict:
    serializer = DraftInputSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class AssignmentDraftApi(APIView):
    request_body_kind = ANNOTATOR

    @extend_schema(
        request=DraftInputSerializer, responses={204: None, **errors(400, 403, 404, 409)}
    )
    def put(self, request, assignment_id: int):
        data = _owned_body(
            lambda: _draft_validated(request.data), assignment_id=assignment_id, worker=request.user
        )
        services.assignment_draft_save(
            assignment_id=assignment_id, worker=request.user, draft=data["draft"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class AssignmentSkipApi(APIView):
    request_body_kind = ANNOTATOR

    @extend_schema(request=None, responses={204: None, **errors(403, 404, 409)})
    def post(self, request, assignment_id: int):
        services.assignment_skip(assignment_id=assignment_id, worker=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AssignmentSubmitApi(APIView):
    """Idempotent: a retry with the same client_uuid returns the stored annotation (200)."""

    request_body_kind = ANNOTATOR

    @extend_schema(
        request=SubmitInputSerializer,
        responses={
            201: SubmitOutputSerializer,
            200: SubmitOutputSerializer,
            **errors(400, 403, 404, 409),
        },
    )
    def post(self, request, assignment_id: int):
        body = _owned_body(
            lambda: submit_input_validated(request.data),
            assignment_id=assignment_id,
            worker=request.user,
        )
        result = services.annotation_submit(
            assignment_id=assignment_id, worker=request.user, **body
        )
        code = status.HTTP_200_OK if result.replayed else status.HTTP_201_CREATED
        return Response(SubmitOutputSerializer(result).data, status=code)
