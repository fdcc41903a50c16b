"""DRF's limit/offset pages, with a bad `limit` or `offset` refused (400) instead of
silently replaced by the default: a client that asks for `offset=abc` has a bug, and a
page from the start would hide it."""

from __future__ import annotations

from rest_framework import pagination
from rest_framework.exceptions import ValidationError

from config.api_fields import BIGINT_MAX


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    def get_limit(self, request):
        if self.limit_query_param not in request.query_params:
            return self.default_limit
        limit = self._whole_number(request, self.limit_query_param, lowest=1)
        return min(limit, self.max_limit) if self.max_limit else limit

    def get_offset(self, request):
        if self.offset_query_param not in request.query_params:
            return 0
        return self._whole_number(request, self.offset_query_param, lowest=0)

    @staticmethod
    def _whole_number(request, name: str, *, lowest: int) -> int:
        given = request.query_params.getlist(name)
        if len(given) != 1 or not given[0].isdigit() or not lowest <= int(given[0]) <= BIGINT_MAX:
            raise ValidationError({name: [f"one whole number from {lowest} to {BIGINT_MAX}"]})
        return int(given[0])

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            lowest = 1 if parameter["name"] == self.limit_query_param else 0
            parameter["schema"] = {**parameter["schema"], "minimum": lowest, "maximum": BIGINT_MAX}
        return parameters
