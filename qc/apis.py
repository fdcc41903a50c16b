"""Agreement report API: admins and researchers of the project only."""

import csv
import io

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Role
from annotate.selectors import project_get_for_user
from config.exceptions import ApplicationError
from qc.agreement import agreement_report_get, agreement_report_request

REPORT_ROLES = (Role.ADMIN, Role.RESEARCHER)
CSV_TABLES = ("variants", "workers", "matrix", "permutation_tests")


def _project(request, project_id: int):
    return project_get_for_user(project_id=project_id, user=request.user, roles=REPORT_ROLES)


def _payload(report, stale: bool) -> dict:
    return {
        "status": report.status,
        "progress": report.progress,
        "stale": stale,
        "annotations_seen": report.annotations_seen,
        "computed_at": report.computed_at,
        "error": report.error,
        "report": report.data,
    }


class AgreementReportApi(APIView):
    @extend_schema(responses=dict)
    def get(self, request, project_id: int):
        report, stale = agreement_report_get(project=_project(request, project_id))
        return Response(_payload(report, stale))


class AgreementRefreshApi(APIView):
    @extend_schema(request=None, responses={202: dict})
    def post(self, request, project_id: int):
        project = _project(request, project_id)
        agreement_report_request(project=project)
        report, stale = agreement_report_get(project=project)
        return Response(_payload(report, stale), status=status.HTTP_202_ACCEPTED)


def _rows(data: dict, table: str) -> list[dict]:
    if table == "matrix":
        return [
            {"variant_a": key.split("|")[0], "variant_b": key.split("|")[1], **cell}
            for key, cell in data["matrix"]["cells"].items()
        ]
    rows = []
    for row in data[table]:
        flat = {}
        for key, value in row.items():
            if isinstance(value, dict):
                flat.update({f"{key}_{k}": v for k, v in value.items()})
            elif isinstance(value, list):
                flat[key] = " ".join(str(v) for v in value)
            else:
                flat[key] = value
        rows.append(flat)
    return rows


class AgreementCsvApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("table", str, enum=list(CSV_TABLES))],
        responses={(200, "text/csv"): str},
    )
    def get(self, request, project_id: int):
        report, _ = agreement_report_get(project=_project(request, project_id))
        table = request.query_params.get("table", "variants")
        if table not in CSV_TABLES:
            raise ApplicationError(f"table: {table!r} is not one of {', '.join(CSV_TABLES)}")
        if not report.data:
            raise ApplicationError("no agreement report has been computed yet; refresh it first")
        rows = _rows(report.data, table)
        buffer = io.StringIO()
        fields = list(dict.fromkeys(k for row in rows for k in row))
        writer = csv.DictWriter(buffer, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="agreement-{table}.csv"'
        return response
