"""The data manager's API: the item list, saved views and bulk actions
(documented in the OpenAPI schema). Views check the caller's role, then call a selector or a
service."""

from __future__ import annotations

from django.http import QueryDict
from drf_spectacular.utils import extend_schema
from rest_framework import pagination, status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from annotate.models import Item, Role
from annotate.selectors import project_get_for_user
from config.api_schema import errors
from qc import item_list_selectors as selectors
from qc.data_manager_serializers import (
    ItemBulkInputSerializer,
    ItemBulkOutputSerializer,
    ItemListRowOutputSerializer,
    ItemViewInputSerializer,
    ItemViewOutputSerializer,
)
from qc.filters import ItemListFilter
from qc.item_list_selectors import item_view_get, item_view_list
from qc.services.item_bulk import item_bulk_run
from qc.services.item_summaries import item_summaries_refresh
from qc.services.item_views import item_view_create, item_view_delete, item_view_update

PAGE_SIZE_DEFAULT = 50
PAGE_SIZE_MAX = 200


class ItemListPagination(pagination.BasePagination):
    """Pages by number (`page`, 1-based, and `page_size`), counted exactly up to a limit
    and estimated above it (`count_is_estimate`)."""

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.page = self._whole_number(request, "page", 1, None)
        self.page_size = self._whole_number(request, "page_size", PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX)
        start = (self.page - 1) * self.page_size
        rows = list(queryset[start : start + self.page_size + 1])
        self.has_next = len(rows) > self.page_size
        rows = rows[: self.page_size]
        if self.page == 1 and not self.has_next:
            self.count, self.count_is_estimate = len(rows), False
        else:
            self.count, self.count_is_estimate = selectors.item_list_count(
                queryset, project=view.project
            )
        return rows

    @staticmethod
    def _whole_number(request, name: str, default: int, highest: int | None) -> int:
        given = request.query_params.get(name)
        if given is None:
            return default
        if not given.isdigit() or int(given) < 1 or (highest and int(given) > highest):
            limit = f"from 1 to {highest}" if highest else "from 1"
            raise ValidationError({name: [f"one whole number {limit}"]})
        return int(given)

    def get_paginated_response(self, data):
        url = self.request.build_absolute_uri()
        return Response(
            {
                "count": self.count,
                "count_is_estimate": self.count_is_estimate,
                "next": replace_query_param(url, "page", self.page + 1) if self.has_next else None,
                "previous": None
                if self.page == 1
                else (
                    remove_query_param(url, "page")
                    if self.page == 2
                    else replace_query_param(url, "page", self.page - 1)
                ),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["count", "count_is_estimate", "results"],
            "properties": {
                "count": {"type": "integer"},
                "count_is_estimate": {
                    "type": "boolean",
                    "description": "The count is estimated from a sample of the project's items (a large result).",
                },
                "next": {"type": "string", "format": "uri", "nullable": True},
                "previous": {"type": "string", "format": "uri", "nullable": True},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": "page",
                "required": False,
                "in": "query",
                "description": "The page, from 1.",
                "schema": {"type": "integer", "minimum": 1},
            },
            {
                "name": "page_size",
                "required": False,
                "in": "query",
                "description": f"Rows per page (default {PAGE_SIZE_DEFAULT}).",
                "schema": {"type": "integer", "minimum": 1, "maximum": PAGE_SIZE_MAX},
            },
        ]


class ItemListApi(GenericAPIView):
    """The data manager's list of a project's items: filters, search, sorting and pages."""

    serializer_class = ItemListRowOutputSerializer
    filterset_class = ItemListFilter
    pagination_class = ItemListPagination

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            # The schema generator reads the filters with no project.
            return Item.objects.none()
        return selectors.item_list_items(project=self.project)

    @extend_schema(
        operation_id="projects_items_list",
        responses={200: ItemListRowOutputSerializer(many=True), **errors(400, 403, 404)},
    )
    def get(self, request, project_id: int):
        self.project = selectors.item_list_project(project_id=project_id, user=request.user)
        item_summaries_refresh(project=self.project)
        items = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(items)
        rows = selectors.item_list_rows(page)
        return self.get_paginated_response(ItemListRowOutputSerializer(rows, many=True).data)


# ---------------------------------------------------------------- saved views


def _list_reader_project(request, project_id: int):
    return selectors.item_list_project(project_id=project_id, user=request.user)


class ItemViewListCreateApi(APIView):
    @extend_schema(
        operation_id="projects_item_views_list",
        responses={200: ItemViewOutputSerializer(many=True), **errors(403, 404)},
    )
    def get(self, request, project_id: int):
        project = _list_reader_project(request, project_id)
        views = item_view_list(project=project, user=request.user)
        return Response(ItemViewOutputSerializer(views, many=True).data)

    @extend_schema(
        operation_id="projects_item_views_create",
        request=ItemViewInputSerializer,
        responses={201: ItemViewOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = _list_reader_project(request, project_id)
        data = ItemViewInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        view = item_view_create(project=project, creator=request.user, **data.validated_data)
        return Response(ItemViewOutputSerializer(view).data, status=status.HTTP_201_CREATED)


class ItemViewDetailApi(APIView):
    @extend_schema(
        operation_id="projects_item_views_partial_update",
        request=ItemViewInputSerializer(partial=True),
        responses={200: ItemViewOutputSerializer, **errors(400, 403, 404)},
    )
    def patch(self, request, project_id: int, view_id: int):
        project = _list_reader_project(request, project_id)
        view = item_view_get(project=project, user=request.user, view_id=view_id)
        data = ItemViewInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        view = item_view_update(view=view, acting_user=request.user, **data.validated_data)
        return Response(ItemViewOutputSerializer(view).data)

    @extend_schema(
        operation_id="projects_item_views_destroy",
        responses={204: None, **errors(403, 404)},
    )
    def delete(self, request, project_id: int, view_id: int):
        project = _list_reader_project(request, project_id)
        view = item_view_get(project=project, user=request.user, view_id=view_id)
        item_view_delete(view=view, acting_user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# ---------------------------------------------------------------- bulk actions


class ItemBulkApi(APIView):
    @extend_schema(
        operation_id="projects_items_bulk_create",
        request=ItemBulkInputSerializer,
        responses={200: ItemBulkOutputSerializer, **errors(400, 403, 404)},
    )
    def post(self, request, project_id: int):
        project = project_get_for_user(
            project_id=project_id, user=request.user, roles=(Role.ADMIN,)
        )
        data = ItemBulkInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        chosen = data.validated_data
        query = chosen.get("filter")
        outcome = item_bulk_run(
            project=project,
            acting_user=request.user,
            action=chosen["action"],
            ids=chosen.get("ids"),
            item_filter=None if query is None else QueryDict(query),
            args=chosen["args"],
        )
        return Response(ItemBulkOutputSerializer(outcome).data)
