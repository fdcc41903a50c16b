"""Each kind of request has its body limit, answered 413 with the limit before the body is
read: the annotators' requests a small one, admins' JSON a larger one, uploads the upload
limit; a chunked body (no length given) is not read at all: 411."""

import io
import json
import uuid
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import WSGIRequest
from django.urls import reverse
from rest_framework.parsers import JSONParser

from annotate.models import ProjectMembership, Role
from config.request_body_limits import RequestBodyLimitMiddleware
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory

MB = 1024 * 1024


@pytest.fixture
def annotator_lease(db):
    project = make_project(items=1, quota=1)
    worker = UserFactory(username="body-annotator")
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    client = client_for(worker)
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    return client, lease


def _padded(body: dict, size: int) -> bytes:
    """`body` as JSON of `size` bytes, padded with spaces (valid JSON all the same)."""
    encoded = json.dumps(body).encode()
    return encoded + b" " * (size - len(encoded))


def _submit_body(lease) -> dict:
    docid = lease["item"]["documents"][0]["docid"]
    return {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 2}]],
        "label": "pos",
    }


@pytest.mark.parametrize("name", ["annotate:assignment-submit", "annotate:assignment-draft"])
def test_an_annotators_body_over_its_limit_is_413_before_it_is_parsed(annotator_lease, name):
    client, lease = annotator_lease
    body = _padded(_submit_body(lease), MB + 1)
    method = client.post if name.endswith("submit") else client.put

    with mock.patch.object(JSONParser, "parse", side_effect=AssertionError("parsed")):
        response = method(reverse(name, args=[lease["id"]]), body, content_type="application/json")

    assert response.status_code == 413
    assert response.json()["limit_bytes"] == MB
    assert str(MB) in response.json()["detail"]


def test_an_annotators_body_at_its_limit_is_served(annotator_lease):
    client, lease = annotator_lease

    response = client.post(
        reverse("annotate:assignment-submit", args=[lease["id"]]),
        _padded(_submit_body(lease), MB),
        content_type="application/json",
    )

    assert response.status_code == 201, response.content


def test_admin_json_has_a_larger_limit_of_its_own(db, settings):
    settings.REQUEST_MAX_BYTES = 3 * MB
    admin = UserFactory(username="body-admin", is_staff=True)
    client = client_for(admin)
    url = reverse("annotate:project-list")

    served = client.post(url, _padded({"name": "p"}, 2 * MB), content_type="application/json")
    refused = client.post(url, _padded({"name": "p"}, 3 * MB + 1), content_type="application/json")

    assert served.status_code != 413
    assert refused.status_code == 413 and refused.json()["limit_bytes"] == 3 * MB


class _CountingStream(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.read_bytes = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.read_bytes += len(chunk)
        return chunk


def _chunked_request(body: bytes) -> tuple[WSGIRequest, _CountingStream]:
    stream = _CountingStream(body)
    request = WSGIRequest(
        {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/api/assignments/1/submit/",
            "HTTP_TRANSFER_ENCODING": "chunked",
            "CONTENT_TYPE": "application/json",
            "wsgi.input": stream,
            "wsgi.input_terminated": True,
        }
    )
    return request, stream


def _annotator_view(request):
    raise AssertionError("not called by process_view")


_annotator_view.request_body_kind = "annotator"


def test_a_chunked_body_is_411_and_not_read():
    request, stream = _chunked_request(b" " * 10 * MB)

    response = RequestBodyLimitMiddleware(None).process_view(request, _annotator_view, (), {})

    assert response.status_code == 411
    assert stream.read_bytes == 0


@pytest.mark.parametrize("size", [70 * 1024, 2000])
def test_an_upload_over_the_limit_is_413_naming_the_limit(db, project, role_users, settings, size):
    """Over the limit and the form's margin: refused before it is read; over the limit
    only: refused by the import when it sees the file's size. The same answer."""
    settings.IMPORT_MAX_UPLOAD_BYTES = 1000

    response = client_for(role_users["admin"]).post(
        reverse("annotate:import-list", args=[project.id]),
        {"file": SimpleUploadedFile("big.jsonl", b"x" * size)},
        format="multipart",
    )

    assert response.status_code == 413, response.content
    assert response.json()["limit_bytes"] == 1000
    assert "1000 bytes" in response.json()["detail"]
