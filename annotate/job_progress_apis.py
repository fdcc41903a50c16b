"""The progress of a long job, in the one shape the page's progress bar reads
(frontend/static/frontend/progress.js): done of total, status, start, time left, error."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate import selectors
from annotate.job_progress import JobProgress
from annotate.job_progress_selectors import import_job_progress_get
from annotate.models import Role
from annotate.services.imports import import_job_fail_if_worker_lost
from config.api_schema import errors


class JobProgressOutputSerializer(serializers.Serializer):
    kind = serializers.CharField()
    id = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=["pending", "running", "succeeded", "failed", "cancelled"]
    )
    final = serializers.BooleanField(help_text="Whether the job has ended (no more changes).")
    phase = serializers.CharField(allow_blank=True)
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    unit = serializers.CharField(help_text="What done and total count.")
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    seconds_left = serializers.FloatField(
        allow_null=True, help_text="At the rate so far; null until there is a rate."
    )
    error = serializers.CharField(allow_blank=True)
    result_url = serializers.CharField(allow_null=True)


def job_progress_response(progress: JobProgress) -> Response:
    return Response(JobProgressOutputSerializer(progress.as_dict()).data)


class ImportJobProgressApi(APIView):
    @extend_schema(responses={200: JobProgressOutputSerializer, **errors(403, 404)})
    def get(self, request, project_id: int, job_id: int):
        project = selectors.project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        job = import_job_fail_if_worker_lost(
            selectors.import_job_get(project=project, job_id=job_id)
        )
        return job_progress_response(import_job_progress_get(job=job))
