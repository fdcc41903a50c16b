"""Account management API: a project's admins for its members, site staff for everyone.
Thin views: permission classes check the caller's standing, the service checks whom they
may act on (annotate.account_rules) and writes the audit event."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import account_selectors, selectors
from annotate.account_serializers import (
    AccountActiveInputSerializer,
    AccountEventOutputSerializer,
    AccountIssuedOutputSerializer,
    AccountListQuerySerializer,
    AccountOutputSerializer,
    InvitationOutputSerializer,
    PasswordResetInputSerializer,
    ProjectAccountCreateInputSerializer,
    SiteAccountCreateInputSerializer,
)
from annotate.models import Project, Role
from annotate.permissions import ProjectNotArchived
from annotate.services import accounts as account_services
from annotate.services import invitations as invitation_services
from config.api_schema import errors
from config.exceptions import NotFoundError


class IsSiteStaff(BasePermission):
    message = "managing every account needs site staff status"

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user.is_authenticated and (user.is_staff or user.is_superuser))


class IsProjectAdmin(BasePermission):
    """The caller is an admin of the URL's project (a non-member is told it is not found)."""

    def has_permission(self, request, view) -> bool:
        if getattr(view, "swagger_fake_view", False):
            return True
        selectors.project_get_for_user(
            project_id=view.kwargs["project_id"], user=request.user, roles=(Role.ADMIN,)
        )
        return True


PROJECT_ADMIN = [IsAuthenticated, IsProjectAdmin, ProjectNotArchived]
SITE_STAFF = [IsAuthenticated, IsSiteStaff]


def _project(view) -> Project | None:
    project_id = view.kwargs.get("project_id")
    if project_id is None:
        return None
    return selectors.project_get_for_user(
        project_id=project_id, user=view.request.user, roles=(Role.ADMIN,)
    )


def _issued(request, issued, project: Project | None) -> dict:
    link = None
    if issued.link_token is not None:
        link = request.build_absolute_uri(
            reverse("account-link", kwargs={"uidb64": issued.link_uid, "token": issued.link_token})
        )
    (account,) = account_selectors.account_rows(
        acting_user=request.user, users=[issued.user], project=project
    )
    return {
        "account": account,
        "one_time_password": issued.one_time_password,
        "link": link,
        "link_expires_at": issued.link_expires_at,
    }


class _AccountListCreate(GenericAPIView):
    serializer_class = AccountOutputSerializer

    def list_response(self, users, project):
        page = self.paginate_queryset(users)
        rows = account_selectors.account_rows(
            acting_user=self.request.user, users=page, project=project
        )
        return self.get_paginated_response(AccountOutputSerializer(rows, many=True).data)


class ProjectAccountListCreateApi(_AccountListCreate):
    permission_classes = PROJECT_ADMIN

    @extend_schema(
        operation_id="projects_accounts_list",
        responses={200: AccountOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project(self)
        return self.list_response(
            account_selectors.project_member_accounts(project=project), project
        )

    @extend_schema(
        request=ProjectAccountCreateInputSerializer,
        responses={201: AccountIssuedOutputSerializer, **errors(400, 403, 404, 409)},
    )
    def post(self, request, project_id: int):
        project = _project(self)
        data = ProjectAccountCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        issued = account_services.account_create(
            acting_user=request.user,
            project=project,
            username=data.validated_data["username"],
            email=data.validated_data["email"],
            role=data.validated_data["role"],
            credential=account_services.Credential(data.validated_data["credential"]),
        )
        return Response(
            AccountIssuedOutputSerializer(_issued(request, issued, project)).data,
            status=status.HTTP_201_CREATED,
        )


class SiteAccountListCreateApi(_AccountListCreate):
    permission_classes = SITE_STAFF

    @extend_schema(
        operation_id="accounts_list",
        parameters=[
            OpenApiParameter("search", str, description="part of the user name or email"),
            OpenApiParameter("active", bool),
            OpenApiParameter("staff", bool),
        ],
        responses={200: AccountOutputSerializer(many=True), **errors(400, 403)},
    )
    def get(self, request):
        query = AccountListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        users = account_selectors.account_list(
            search=query.validated_data["search"],
            active=query.validated_data.get("active"),
            staff=query.validated_data.get("staff"),
        )
        return self.list_response(users, None)

    @extend_schema(
        request=SiteAccountCreateInputSerializer,
        responses={201: AccountIssuedOutputSerializer, **errors(400, 403, 404, 409)},
    )
    def post(self, request):
        data = SiteAccountCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = None
        if "project" in data.validated_data:
            project = Project.objects.filter(pk=data.validated_data["project"]).first()
            if project is None:
                raise NotFoundError(
                    f"project: no project with id {data.validated_data['project']}",
                    extra={"field": "project"},
                )
        issued = account_services.account_create(
            acting_user=request.user,
            project=project,
            username=data.validated_data["username"],
            email=data.validated_data["email"],
            role=data.validated_data.get("role"),
            credential=account_services.Credential(data.validated_data["credential"]),
        )
        return Response(
            AccountIssuedOutputSerializer(_issued(request, issued, project)).data,
            status=status.HTTP_201_CREATED,
        )


class _AccountAction(APIView):
    def subject(self, project: Project | None):
        return account_selectors.account_get(user_id=self.kwargs["user_id"], project=project)


class _PasswordReset(_AccountAction):
    @extend_schema(
        request=PasswordResetInputSerializer,
        responses={200: AccountIssuedOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, **kwargs):
        project = _project(self)
        data = PasswordResetInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        issued = account_services.account_password_reset(
            acting_user=request.user,
            subject=self.subject(project),
            project=project,
            credential=account_services.Credential(data.validated_data["credential"]),
        )
        return Response(AccountIssuedOutputSerializer(_issued(request, issued, project)).data)


class _ActiveSet(_AccountAction):
    @extend_schema(
        request=AccountActiveInputSerializer,
        responses={200: AccountOutputSerializer, **errors(400, 403, 404, 409)},
    )
    def post(self, request, **kwargs):
        project = _project(self)
        data = AccountActiveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = account_services.account_active_set(
            acting_user=request.user,
            subject=self.subject(project),
            project=project,
            active=data.validated_data["active"],
        )
        (row,) = account_selectors.account_rows(
            acting_user=request.user, users=[user], project=project
        )
        return Response(AccountOutputSerializer(row).data)


class ProjectAccountPasswordResetApi(_PasswordReset):
    permission_classes = PROJECT_ADMIN


class SiteAccountPasswordResetApi(_PasswordReset):
    permission_classes = SITE_STAFF


class ProjectAccountActiveApi(_ActiveSet):
    permission_classes = PROJECT_ADMIN


class SiteAccountActiveApi(_ActiveSet):
    permission_classes = SITE_STAFF


class SiteAccountSignInUnlockApi(_AccountAction):
    """Site staff lift an account's sign-in lock-out (audited)."""

    permission_classes = SITE_STAFF

    @extend_schema(request=None, responses={200: AccountOutputSerializer, **errors(401, 403, 404)})
    def post(self, request, user_id: int):
        user = account_services.account_sign_in_unlock(
            acting_user=request.user, subject=self.subject(None)
        )
        (row,) = account_selectors.account_rows(acting_user=request.user, users=[user])
        return Response(AccountOutputSerializer(row).data)


class _EventList(GenericAPIView):
    serializer_class = AccountEventOutputSerializer

    @extend_schema(
        responses={200: AccountEventOutputSerializer(many=True), **errors(400, 403, 404)}
    )
    def get(self, request, **kwargs):
        events = account_selectors.account_event_list(project=_project(self))
        page = self.paginate_queryset(events)
        return self.get_paginated_response(AccountEventOutputSerializer(page, many=True).data)


class ProjectAccountEventListApi(_EventList):
    permission_classes = PROJECT_ADMIN


class SiteAccountEventListApi(_EventList):
    permission_classes = SITE_STAFF


class InvitationMineListApi(GenericAPIView):
    """The caller's invitations waiting for an answer."""

    permission_classes = [IsAuthenticated]
    serializer_class = InvitationOutputSerializer

    @extend_schema(responses={200: InvitationOutputSerializer(many=True), **errors(400, 401)})
    def get(self, request):
        page = self.paginate_queryset(
            account_selectors.invitation_list_open_for_user(user=request.user)
        )
        return self.get_paginated_response(InvitationOutputSerializer(page, many=True).data)


class _InvitationAnswer(APIView):
    permission_classes = [IsAuthenticated]
    answer = None

    @extend_schema(
        request=None, responses={200: InvitationOutputSerializer, **errors(400, 401, 404)}
    )
    def post(self, request, invitation_id: int):
        invitation = self.answer(invitation_id=invitation_id, user=request.user)
        return Response(InvitationOutputSerializer(invitation).data)


class InvitationAcceptApi(_InvitationAnswer):
    answer = staticmethod(invitation_services.invitation_accept)


class InvitationDeclineApi(_InvitationAnswer):
    answer = staticmethod(invitation_services.invitation_decline)


class ProjectInvitationListApi(GenericAPIView):
    """The project's invitations waiting for an answer, for its admins."""

    permission_classes = PROJECT_ADMIN
    serializer_class = InvitationOutputSerializer

    # A bad `limit` or `offset` is a 400 (config/pagination.py).
    @extend_schema(
        responses={200: InvitationOutputSerializer(many=True), **errors(400, 401, 403, 404)}
    )
    def get(self, request, project_id: int):
        invitations = account_selectors.invitation_list_open_for_project(project=_project(self))
        page = self.paginate_queryset(invitations)
        return self.get_paginated_response(InvitationOutputSerializer(page, many=True).data)


class ProjectInvitationWithdrawApi(APIView):
    permission_classes = PROJECT_ADMIN

    @extend_schema(
        request=None, responses={200: InvitationOutputSerializer, **errors(401, 403, 404, 409)}
    )
    def post(self, request, project_id: int, invitation_id: int):
        invitation = invitation_services.invitation_withdraw(
            project=_project(self), invitation_id=invitation_id, acting_user=request.user
        )
        return Response(InvitationOutputSerializer(invitation).data)
