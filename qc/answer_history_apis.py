"""An annotator's previous answers: the list, one answer, and a change to it. Each caller
sees only their own; the services and selectors do the work."""

from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.selectors import annotator_access_get, project_get_for_annotating
from config.api_schema import errors
from config.request_body_limits import ANNOTATOR
from qc.answer_history_selectors import (
    answer_closed,
    previous_answer_detail,
    previous_answer_get,
    previous_answers,
)
from qc.answer_history_serializers import (
    AnswerChangeInputSerializer,
    AnswerDetailOutputSerializer,
    AnswerRowOutputSerializer,
)
from qc.services.answer_changes import annotation_change


class AnswerListApi(GenericAPIView):
    """The caller's submitted answers in the project, newest first, a page at a time."""

    serializer_class = AnswerRowOutputSerializer

    # A bad `limit` or `offset` is a 400 (config/pagination.py).
    @extend_schema(
        responses={200: AnswerRowOutputSerializer(many=True), **errors(400, 401, 403, 404)}
    )
    def get(self, request, project_id: int):
        access = project_get_for_annotating(project_id=project_id, user=request.user)
        page = self.paginate_queryset(previous_answers(project=access.project, worker=request.user))
        for row in page:
            row.closed = answer_closed(row, project=access.project, participant=access.participant)
        return self.get_paginated_response(AnswerRowOutputSerializer(page, many=True).data)


def _detail(request, answer_id: int) -> dict:
    row = previous_answer_get(worker=request.user, assignment_id=answer_id)
    access = annotator_access_get(project=row.item.project, user=request.user)
    detail = previous_answer_detail(row=row, worker=request.user, participant=access.participant)
    return AnswerDetailOutputSerializer(detail).data


class AnswerDetailApi(APIView):
    """One of the caller's answers: the item, the latest version, every version, and
    whether it may still change."""

    request_body_kind = ANNOTATOR

    @extend_schema(responses={200: AnswerDetailOutputSerializer, **errors(401, 403, 404)})
    def get(self, request, answer_id: int):
        return Response(_detail(request, answer_id))


class AnswerChangeApi(APIView):
    """A new version of the caller's answer, while it is open to them (409 with a `code`
    saying why not, or `stale` when it changed since `base_version`)."""

    request_body_kind = ANNOTATOR

    @extend_schema(
        request=AnswerChangeInputSerializer,
        responses={200: AnswerDetailOutputSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, answer_id: int):
        # Someone else's answer is not found whatever the body says.
        previous_answer_get(worker=request.user, assignment_id=answer_id)
        serializer = AnswerChangeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        annotation_change(assignment_id=answer_id, worker=request.user, **serializer.validated_data)
        return Response(_detail(request, answer_id))
