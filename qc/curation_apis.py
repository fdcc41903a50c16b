"""Curation API: the queue, one item's annotations side by side and its curated gold, saving
the gold, and curating a batch by rule. Curators and admins; the services do the work."""

from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Item, Role
from annotate.selectors import project_get_for_user
from config.api_schema import errors
from config.exceptions import ApplicationError
from qc.curation_rules import AutoMergeRule
from qc.curation_selectors import (
    curation_queue,
    curation_state,
    page_from,
    queue_filter_from,
    queue_items,
)
from qc.curation_serializers import (
    AutoMergeInputSerializer,
    AutoMergeOutputSerializer,
    CuratedConfirmInputSerializer,
    CuratedSaveInputSerializer,
)
from qc.services.curation import (
    curated_annotation_confirm,
    curated_annotation_save,
    curation_auto_merge,
)
from qc.services.item_bulk import item_bulk_selection
from qc.services.item_summaries import item_summaries_refresh

CURATORS = (Role.ADMIN, Role.CURATOR)


def _project(request, project_id: int):
    return project_get_for_user(project_id=project_id, user=request.user, roles=CURATORS)


class CurationQueueApi(APIView):
    """Items to curate, most disagreement first by default, with the progress counts."""

    @extend_schema(
        operation_id="projects_curation_queue_retrieve",
        parameters=[
            OpenApiParameter("order", str, enum=["disagreement", "id"]),
            OpenApiParameter("state", str, enum=["uncurated", "curated", "stale", "all"]),
            OpenApiParameter(
                "variant",
                str,
                description="variant ids, comma-separated (at most 20): items with annotations "
                "under any of them, their agreement (and its order) among those alone",
            ),
            OpenApiParameter("flag", str, description="flag kinds, comma-separated, or 'any'"),
            OpenApiParameter("queued", bool, description="only items put into a curation pass"),
            OpenApiParameter("page", int),
            OpenApiParameter("page_size", int),
        ],
        responses={200: dict, **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id)
        chosen = queue_filter_from(request.query_params)
        page, size = page_from(request.query_params)
        # The queue sorts by the summaries' agreement: brought up to date first, as the
        # data manager's list does (a handful of index lookups when nothing changed).
        item_summaries_refresh(project=project)
        return Response(curation_queue(project=project, chosen=chosen, page=page, page_size=size))


class CurationItemApi(APIView):
    @extend_schema(
        operation_id="projects_curation_items_retrieve", responses={200: dict, **errors(403, 404)}
    )
    def get(self, request, project_id: int, item_id: int):
        project = _project(request, project_id)
        return Response(curation_state(project=project, item_id=item_id))

    @extend_schema(
        operation_id="projects_curation_items_update",
        request=CuratedSaveInputSerializer,
        responses={200: dict, **errors(400, 403, 404, 409)},
    )
    def put(self, request, project_id: int, item_id: int):
        """Save the item's curated gold. A stale `version` answers 409 with the current one."""
        project = _project(request, project_id)
        data = CuratedSaveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        curated_annotation_save(
            project=project,
            item_id=item_id,
            curator=request.user,
            **data.validated_data,
        )
        return Response(curation_state(project=project, item_id=item_id))


class CurationItemConfirmApi(APIView):
    @extend_schema(
        operation_id="projects_curation_items_confirm_create",
        request=CuratedConfirmInputSerializer,
        responses={200: dict, **errors(400, 403, 404, 409)},
    )
    def post(self, request, project_id: int, item_id: int):
        """Confirm the item's curated gold as it is after its annotations changed: it is
        no longer stale. A stale `version` answers 409 with the current one."""
        project = _project(request, project_id)
        data = CuratedConfirmInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        curated_annotation_confirm(
            project=project, item_id=item_id, curator=request.user, **data.validated_data
        )
        return Response(curation_state(project=project, item_id=item_id))


def _items_by_filter(project, query: str):
    """The items the data manager's filter (its query string) matches: the same selection
    as its bulk actions, every item the filter matches, not one page."""
    chosen = item_bulk_selection(project=project, ids=None, item_filter=QueryDict(query))
    return Item.objects.filter(pk__in=chosen)


class CurationAutoMergeApi(APIView):
    @extend_schema(
        operation_id="projects_curation_auto_merge_create",
        request=AutoMergeInputSerializer,
        responses={200: AutoMergeOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        """Curate by rule the chosen items whose annotators agree; items already curated
        are left alone. Says how many merged and how many were skipped, and why."""
        project = _project(request, project_id)
        data = AutoMergeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        chosen = data.validated_data
        if "ids" in chosen:
            items, chosen_by = chosen["ids"], {"ids": chosen["ids"]}
        elif "filter" in chosen:
            items = _items_by_filter(project, chosen["filter"])
            chosen_by = {"filter": chosen["filter"]}
        else:
            query = QueryDict(chosen["queue"])
            item_summaries_refresh(project=project)  # the queue reads the summaries
            try:
                items = queue_items(project=project, chosen=queue_filter_from(query))
            except ApplicationError as problem:
                raise ApplicationError(f"queue: {problem.message}") from None
            chosen_by = {"queue": chosen["queue"]}
        report = curation_auto_merge(
            project=project,
            curator=request.user,
            items=items,
            rule=AutoMergeRule(**chosen["rule"]),
            chosen_by=chosen_by,
        )
        return Response(AutoMergeOutputSerializer(report).data)
