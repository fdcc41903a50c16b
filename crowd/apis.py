"""Crowd API. Admin endpoints check the caller's role in the project and that the study
link belongs to that project; a worker's session endpoints answer only its worker."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import InstructionVariant, Role
from annotate.selectors import project_get_for_user
from config.exceptions import ApplicationError
from config.request_body_limits import ANNOTATOR
from crowd import selectors, services
from crowd.models import SessionStatus
from crowd.platforms import MTURK, external_question_xml
from crowd.serializers import (
    CrowdSessionOutputSerializer,
    SessionFinishInputSerializer,
    StudyLinkInputSerializer,
    StudyLinkOutputSerializer,
    TokenCheckInputSerializer,
    entry_url,
)

ADMIN_ROLES = (Role.ADMIN,)
REPORT_ROLES = (Role.ADMIN, Role.RESEARCHER)


def _project(request, project_id: int, roles=ADMIN_ROLES):
    return project_get_for_user(project_id=project_id, user=request.user, roles=roles)


def _link(request, project_id: int, link_id: int):
    return selectors.study_link_get(project=_project(request, project_id), link_id=link_id)


def _with_variant(project, data: dict) -> dict:
    """The variant id of the input, resolved within this project only."""
    if data.get("variant") is None:
        return data
    variant = InstructionVariant.objects.filter(pk=data["variant"], project=project).first()
    if variant is None:
        raise ApplicationError("variant: not a variant of this project", extra={"field": "variant"})
    return {**data, "variant": variant}


def _out(link, request) -> dict:
    return StudyLinkOutputSerializer(link, context={"request": request}).data


class StudyLinkListCreateApi(APIView):
    @extend_schema(responses=StudyLinkOutputSerializer(many=True))
    def get(self, request, project_id: int):
        links = selectors.study_link_list(project=_project(request, project_id))
        return Response(
            StudyLinkOutputSerializer(links, many=True, context={"request": request}).data
        )

    @extend_schema(request=StudyLinkInputSerializer, responses={201: StudyLinkOutputSerializer})
    def post(self, request, project_id: int):
        project = _project(request, project_id)
        data = StudyLinkInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        link = services.study_link_create(
            project=project, acting_user=request.user, **_with_variant(project, data.validated_data)
        )
        link = selectors.study_link_get(project=project, link_id=link.pk)
        return Response(_out(link, request), status=status.HTTP_201_CREATED)


class StudyLinkDetailApi(APIView):
    @extend_schema(responses=StudyLinkOutputSerializer)
    def get(self, request, project_id: int, link_id: int):
        return Response(_out(_link(request, project_id, link_id), request))

    @extend_schema(request=StudyLinkInputSerializer, responses=StudyLinkOutputSerializer)
    def patch(self, request, project_id: int, link_id: int):
        link = _link(request, project_id, link_id)
        data = StudyLinkInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        services.study_link_update(
            link=link, acting_user=request.user, **_with_variant(link.project, data.validated_data)
        )
        return Response(_out(_link(request, project_id, link_id), request))


class ExternalQuestionApi(APIView):
    """MTurk's ExternalQuestion XML for the link, to paste into CreateHIT's Question."""

    @extend_schema(responses={(200, "application/xml"): str})
    def get(self, request, project_id: int, link_id: int):
        link = _link(request, project_id, link_id)
        if link.platform != MTURK:
            raise ApplicationError(f"this is a {link.platform} link; only MTurk HITs use the XML")
        body = external_question_xml(entry_url(link, request), frame_height=link.frame_height)
        response = HttpResponse(body, content_type="application/xml; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="external-question-link-{link.pk}.xml"'
        )
        return response


class StudyLinkSessionsApi(GenericAPIView):
    serializer_class = CrowdSessionOutputSerializer

    def get(self, request, project_id: int, link_id: int):
        sessions = selectors.session_list(link=_link(request, project_id, link_id))
        page = self.paginate_queryset(sessions)
        return self.get_paginated_response(CrowdSessionOutputSerializer(page, many=True).data)


class BonusFileApi(APIView):
    """The platform's bulk-bonus file for the link (see `selectors.bonus_file`)."""

    @extend_schema(responses={(200, "text/csv"): str})
    def get(self, request, project_id: int, link_id: int):
        name, body = selectors.bonus_file(link=_link(request, project_id, link_id))
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class CompletionTokenCheckApi(APIView):
    """Whether a token the platform shows for an assignment is one this site issued."""

    @extend_schema(request=TokenCheckInputSerializer, responses=dict)
    def post(self, request, project_id: int, link_id: int):
        link = _link(request, project_id, link_id)
        data = TokenCheckInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(selectors.completion_token_check(link=link, **data.validated_data))


class CrowdEarningsApi(APIView):
    @extend_schema(responses=dict)
    def get(self, request, project_id: int):
        project = _project(request, project_id)
        return Response({"workers": selectors.worker_earnings(project=project)})


class CrowdPayReportApi(APIView):
    @extend_schema(responses=dict)
    def get(self, request, project_id: int):
        project = _project(request, project_id, REPORT_ROLES)
        return Response(selectors.pay_report(project=project))


# ---------------------------------------------------------------- the worker's session


def session_page_url(session) -> str:
    """Where the session's worker belongs now."""
    if session.status == SessionStatus.STARTED:
        return reverse("crowd:consent", args=[session.pk])
    if session.status == SessionStatus.WORKING:
        return reverse("crowd:work", args=[session.pk])
    if session.status == SessionStatus.COMPLETED:
        return reverse("crowd:done", args=[session.pk])
    return reverse("crowd:end", args=[session.pk])


def _progress(session) -> dict:
    return {**selectors.session_progress(session), "next_url": session_page_url(session)}


class CrowdSessionApi(APIView):
    request_body_kind = ANNOTATOR

    @extend_schema(responses=dict)
    def get(self, request, session_id: int):
        session = selectors.crowd_session_get_for_worker(session_id=session_id, worker=request.user)
        return Response(_progress(session))


class CrowdSessionFinishApi(APIView):
    """Called by the workspace after each submit (and when it finds no item or is
    refused): ends the session when the server's records say it is over."""

    request_body_kind = ANNOTATOR

    @extend_schema(request=SessionFinishInputSerializer, responses=dict)
    def post(self, request, session_id: int):
        session = selectors.crowd_session_get_for_worker(session_id=session_id, worker=request.user)
        data = SessionFinishInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        session = services.crowd_session_finish(session=session, **data.validated_data)
        return Response(_progress(session))
