"""The data behind the review pipeline and seconds-per-item charts (admins and
researchers; reviewers see the pipeline they work in)."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Role
from annotate.selectors import project_get_for_user
from config.api_schema import errors
from qc.chart_selectors import pipeline_timeline, seconds_per_item


class PipelineTimelineApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = project_get_for_user(
            project_id=project_id,
            user=request.user,
            roles=(Role.ADMIN, Role.RESEARCHER, Role.REVIEWER),
        )
        return Response(pipeline_timeline(project=project))


class SecondsPerItemApi(APIView):
    @extend_schema(responses={200: dict, **errors(403, 404)})
    def get(self, request, project_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN, Role.RESEARCHER)
        )
        return Response(seconds_per_item(project=project))
