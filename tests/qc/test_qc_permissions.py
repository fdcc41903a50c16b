"""Every quality-control endpoint against every role: members without the role get 403,
non-members 404 (project ids do not leak), the allowed roles get through."""

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.services import annotation_submit, assignment_next, variant_create
from tests.conftest import client_for
from tests.factories import ItemFactory

ROLES = ("admin", "researcher", "reviewer", "annotator", "outsider")


@pytest.fixture
def setup(project, role_users):
    ItemFactory(project=project)
    variant_create(project=project, name="plain", text="Highlight.")
    lease = assignment_next(project=project, worker=role_users["annotator"])
    annotation = annotation_submit(
        assignment_id=lease.pk,
        worker=role_users["annotator"],
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 1}]
        ],
    ).annotation
    return project, role_users, annotation, lease


def endpoints(project, users, annotation, lease):
    set_id = annotation.rationale_sets.get().pk
    worker_id = users["annotator"].pk
    return [
        ("post", reverse("qc:review-next", args=[project.id]), None, {"admin", "reviewer"}),
        ("get", reverse("qc:review-detail", args=[annotation.pk]), None, {"admin", "reviewer"}),
        ("get", reverse("qc:review-queue", args=[project.id]), None, {"admin", "reviewer"}),
        (
            "post",
            reverse("qc:review-submit", args=[annotation.pk]),
            {
                "comprehensiveness": 3,
                "set_scores": [{"rationale_set": set_id, "sufficiency": 3, "compactness": 4}],
            },
            {"admin", "reviewer"},
        ),
        ("get", reverse("qc:revision-feedback", args=[lease.pk]), None, {"annotator"}),
        ("get", reverse("qc:pipeline", args=[project.id]), None, {"admin", "researcher"}),
        ("get", reverse("qc:quality-policy", args=[project.id]), None, {"admin"}),
        ("patch", reverse("qc:quality-policy", args=[project.id]), {"min_seconds": 5}, {"admin"}),
        ("put", reverse("qc:gold-items", args=[project.id]), {"annotation_ids": ["x"]}, {"admin"}),
        ("get", reverse("qc:worker-list", args=[project.id]), None, {"admin", "researcher"}),
        (
            "post",
            reverse("qc:worker-block", args=[project.id, worker_id]),
            {"reason": "r"},
            {"admin"},
        ),
        (
            "post",
            reverse("qc:worker-unblock", args=[project.id, worker_id]),
            {"reason": "r"},
            {"admin"},
        ),
        ("get", reverse("qc:candidate-list", args=[project.id]), None, {"admin"}),
        (
            "post",
            reverse("qc:candidate-decision", args=[project.id, worker_id]),
            {"accept": True},
            {"admin"},
        ),
        ("get", reverse("qc:audit", args=[project.id]), None, {"admin"}),
        ("get", reverse("qc:qualification-status", args=[project.id]), None, {"annotator"}),
        ("post", reverse("qc:qualification-next", args=[project.id]), None, {"annotator"}),
        (
            "post",
            reverse("qc:qualification-answer", args=[project.id]),
            {"gold_item": 1, "rationale_sets": []},
            {"annotator"},
        ),
    ]


def test_every_endpoint_checks_the_role(setup):
    project, users, annotation, lease = setup
    checked = 0
    for method, url, body, allowed in endpoints(project, users, annotation, lease):
        for role in ROLES:
            client = client_for(users[role])
            response = getattr(client, method)(url, body, format="json")
            where = f"{method.upper()} {url} as {role}: {response.status_code} {getattr(response, 'data', '')}"
            if role in allowed:
                assert response.status_code not in (401, 403, 404), where
            elif role == "outsider" or url.endswith("/feedback/"):
                assert response.status_code == 404, where
            else:
                assert response.status_code == 403, where
            checked += 1
    assert checked == 18 * len(ROLES)


def test_worker_csv_import_is_for_project_admins(setup):
    project, users, _, _ = setup
    url = reverse("qc:worker-import", args=[project.id])
    for role in ROLES:
        upload = SimpleUploadedFile("w.csv", b"worker_id\nW1\n", "text/csv")
        response = client_for(users[role]).post(url, {"file": upload}, format="multipart")
        expected = {"admin": 200, "outsider": 404}.get(role, 403)
        assert response.status_code == expected, role


def test_anonymous_requests_are_refused(setup, api_client):
    project, users, annotation, lease = setup
    for method, url, body, _ in endpoints(project, users, annotation, lease):
        response = getattr(api_client, method)(url, body, format="json")
        assert response.status_code == 401, url
        assert response["WWW-Authenticate"].startswith("Basic "), url
