"""A project's lifecycle in the API: members' roles and removal, deleting and restoring an
import, chosen items or the project, archiving. Admins only (a deleted project: its admins
and site staff); thin views over qc.services.members and qc.services.lifecycle."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.account_selectors import account_get
from annotate.models import Role
from annotate.selectors import project_get_for_user
from config.api_schema import errors
from qc.lifecycle_selectors import deleted_data
from qc.serializers import (
    DeletedDataOutputSerializer,
    ItemIdsInputSerializer,
    ItemsChangedOutputSerializer,
    MemberRemovedOutputSerializer,
    MemberRolesInputSerializer,
    MemberRolesOutputSerializer,
    ProjectDeleteInputSerializer,
    ProjectStateOutputSerializer,
)
from qc.services import lifecycle, members


def _admin_project(request, project_id: int):
    return project_get_for_user(project_id=project_id, user=request.user, roles=(Role.ADMIN,))


def _validated(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _project_state(project) -> dict:
    return {
        "id": project.pk,
        "name": project.name,
        "archived_at": project.archived_at,
        "deleted_at": project.deleted_at,
        "restorable_until": (
            lifecycle.restorable_until(project.deleted_at) if project.deleted_at else None
        ),
    }


class MemberDetailApi(APIView):
    """A member of the project: their roles set, or every role taken away."""

    @extend_schema(
        request=MemberRolesInputSerializer,
        responses={200: MemberRolesOutputSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def put(self, request, project_id: int, user_id: int):
        project = _admin_project(request, project_id)
        user = account_get(user_id=user_id, project=project)
        data = _validated(MemberRolesInputSerializer, request.data)
        roles = members.membership_roles_set(
            project=project, user=user, roles=data["roles"], acting_user=request.user
        )
        return Response({"user_id": user.pk, "username": user.get_username(), "roles": roles})

    @extend_schema(
        request=None,
        responses={200: MemberRemovedOutputSerializer, **errors(401, 403, 404, 409)},
    )
    def delete(self, request, project_id: int, user_id: int):
        project = _admin_project(request, project_id)
        user = account_get(user_id=user_id, project=project)
        released = members.membership_remove(project=project, user=user, acting_user=request.user)
        return Response(
            {"user_id": user.pk, "username": user.get_username(), "leases_released": released}
        )


class ImportDeleteApi(APIView):
    @extend_schema(
        request=None, responses={200: ItemsChangedOutputSerializer, **errors(401, 403, 404, 409)}
    )
    def post(self, request, project_id: int, job_id: int):
        project = _admin_project(request, project_id)
        deleted = lifecycle.import_delete(project=project, job_id=job_id, acting_user=request.user)
        return Response({"items": deleted})


class ImportRestoreApi(APIView):
    @extend_schema(
        request=None, responses={200: ItemsChangedOutputSerializer, **errors(401, 403, 404, 409)}
    )
    def post(self, request, project_id: int, job_id: int):
        project = _admin_project(request, project_id)
        restored = lifecycle.import_restore(
            project=project, job_id=job_id, acting_user=request.user
        )
        return Response({"items": restored})


class ItemsDeleteApi(APIView):
    @extend_schema(
        request=ItemIdsInputSerializer,
        responses={200: ItemsChangedOutputSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        data = _validated(ItemIdsInputSerializer, request.data)
        deleted = lifecycle.items_delete(
            project=project, item_ids=data["ids"], acting_user=request.user
        )
        return Response({"items": deleted})


class ItemsRestoreApi(APIView):
    @extend_schema(
        request=ItemIdsInputSerializer,
        responses={200: ItemsChangedOutputSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        data = _validated(ItemIdsInputSerializer, request.data)
        restored = lifecycle.items_restore(
            project=project, item_ids=data["ids"], acting_user=request.user
        )
        return Response({"items": restored})


class DeletedDataApi(APIView):
    @extend_schema(responses={200: DeletedDataOutputSerializer, **errors(401, 403, 404)})
    def get(self, request, project_id: int):
        project = _admin_project(request, project_id)
        return Response(DeletedDataOutputSerializer(deleted_data(project=project)).data)


class ProjectDeleteApi(APIView):
    # An archived project can be deleted too.
    archived_project_writable = True

    @extend_schema(
        request=ProjectDeleteInputSerializer,
        responses={200: ProjectStateOutputSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        data = _validated(ProjectDeleteInputSerializer, request.data)
        project = lifecycle.project_delete(
            project=project, confirm_name=data["confirm_name"], acting_user=request.user
        )
        return Response(_project_state(project))


class ProjectRestoreApi(APIView):
    @extend_schema(
        request=None, responses={200: ProjectStateOutputSerializer, **errors(401, 403, 404, 409)}
    )
    def post(self, request, project_id: int):
        project = lifecycle.project_restore(project_id=project_id, acting_user=request.user)
        return Response(_project_state(project))


class DeletedProjectListApi(GenericAPIView):
    """The deleted projects the caller may restore: theirs as admin, every one for staff."""

    serializer_class = ProjectStateOutputSerializer

    @extend_schema(
        operation_id="deleted_projects_list",
        responses={200: ProjectStateOutputSerializer(many=True), **errors(400, 401)},
    )
    def get(self, request):
        projects = lifecycle.deleted_projects_for_user(user=request.user)
        page = self.paginate_queryset(projects)
        return self.get_paginated_response([_project_state(p) for p in page])


class ProjectArchiveApi(APIView):
    @extend_schema(
        request=None, responses={200: ProjectStateOutputSerializer, **errors(401, 403, 404, 409)}
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        project = lifecycle.project_archive(project=project, acting_user=request.user)
        return Response(_project_state(project))


class ProjectUnarchiveApi(APIView):
    # The one write an archived project is there for.
    archived_project_writable = True

    @extend_schema(
        request=None, responses={200: ProjectStateOutputSerializer, **errors(401, 403, 404)}
    )
    def post(self, request, project_id: int):
        project = _admin_project(request, project_id)
        project = lifecycle.project_unarchive(project=project, acting_user=request.user)
        return Response(_project_state(project))
