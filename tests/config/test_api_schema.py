"""The OpenAPI schema describes what the API does: pages of lists, null values, and the
error codes each operation answers."""

import pytest
from drf_spectacular.generators import SchemaGenerator

# Every list the API answers in pages (DRF's LimitOffsetPagination); the data manager's
# item list pages by number instead (its own test below).
PAGINATED = {
    "projects_list",
    "projects_imports_list",
    "projects_exports_list",
    "projects_exports_runs_list",
    "projects_perturbations_list",
    "projects_perturbations_originals_list",
    "projects_perturbations_queue_list",
}
# Someone else's: the crowd app documents its own operations.
NOT_OURS = ("/api/crowd/", "/crowd/")


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema):
    for path, item in schema["paths"].items():
        if any(part in path for part in NOT_OURS):
            continue
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield path, method, operation


def _resolve(schema, node):
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def test_every_paginated_list_takes_limit_and_offset_and_answers_a_page(schema):
    found = set()
    for _, _, operation in _operations(schema):
        if operation["operationId"] not in PAGINATED:
            continue
        found.add(operation["operationId"])
        query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        page = _resolve(
            schema, operation["responses"]["200"]["content"]["application/json"]["schema"]
        )

        assert {"limit", "offset"} <= query, operation["operationId"]
        assert "400" in operation["responses"], operation["operationId"]  # a bad limit
        assert set(page["required"]) >= {"count", "results"}, operation["operationId"]
        assert page["properties"]["results"]["type"] == "array"
        assert page["properties"]["next"]["nullable"] is True

    assert found == PAGINATED


def test_the_item_list_describes_its_filters_and_pages_by_number(schema):
    operation = schema["paths"]["/api/projects/{project_id}/items/"]["get"]
    page = _resolve(schema, operation["responses"]["200"]["content"]["application/json"]["schema"])

    assert {"split", "label", "status", "search", "ordering", "kappa_min", "page", "page_size"} <= {
        p["name"] for p in operation["parameters"]
    }
    assert set(page["required"]) >= {"count", "count_is_estimate", "results"}


def test_bodies_are_json_or_multipart_and_text_says_when_it_may_be_blank(schema):
    for path, method, operation in _operations(schema):
        content = set(operation.get("requestBody", {}).get("content", {}))
        assert content <= {"application/json", "multipart/form-data"}, (method, path, content)
    request = schema["components"]["schemas"]["ProjectCreateInputRequest"]

    assert request["properties"]["name"]["minLength"] == 1


def test_nullable_fields_say_so(schema):
    components = schema["components"]["schemas"]

    assert components["ProjectOutput"]["properties"]["item_count"]["nullable"] is True
    assert components["ImportJobOutput"]["properties"]["created_by"]["nullable"] is True
    assert components["ExportOutput"]["properties"]["created_by"]["nullable"] is True
    assert components["DatasheetInfo"]["properties"]["updated_by"]["nullable"] is True
    assert components["AssignmentOutput"]["properties"]["draft"]["nullable"] is True


def test_every_operation_declares_its_error_codes_with_the_shared_error_body(schema):
    for path, method, operation in _operations(schema):
        where = f"{method.upper()} {path}"
        codes = set(operation["responses"])
        assert "401" in codes, where
        if "{project_id}" in path or "{assignment_id}" in path or "{annotation_id}" in path:
            assert "404" in codes, where
        # Any member may read the project itself; every other project operation names roles.
        if "{project_id}" in path and operation["operationId"] != "projects_retrieve":
            assert "403" in codes, where
        takes_input = "requestBody" in operation or any(
            p["in"] == "query" and p["name"] not in ("limit", "offset")
            for p in operation.get("parameters", [])
        )
        if takes_input:
            assert "400" in codes, where
        for code in codes & {"400", "401", "403", "404", "409"}:
            body = operation["responses"][code]["content"]["application/json"]["schema"]
            assert body == {"$ref": "#/components/schemas/Error"}, (where, code)
