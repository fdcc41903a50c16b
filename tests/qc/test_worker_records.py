"""Worker attributes are per project: what one project's qualification rules read comes
from that project's own CSV imports and its own review outcomes, so the admin (or the
reviewers) of another project cannot move them."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from qc.models import AuditEvent
from qc.services import quality_policy_update
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory
from tests.qc.helpers import make_review_project, next_assignment, review, submit

pytestmark = pytest.mark.django_db


def _import(user, project, body: bytes, name="workers.csv", **form):
    upload = SimpleUploadedFile(name, body, "text/csv")
    return client_for(user).post(
        reverse("qc:worker-import", args=[project.id]),
        {"file": upload, **form},
        format="multipart",
    )


def _profile_row(user, project, username):
    rows = client_for(user).get(reverse("qc:worker-list", args=[project.id])).data["workers"]
    return next(row["profile"] for row in rows if row["username"] == username)


@pytest.fixture
def two_projects():
    """Project A demands 95 % and masters; project B is run by an admin who holds no role
    in A. One worker annotates in both."""
    project_a, people = make_review_project()
    quality_policy_update(project=project_a, min_approval_rate=95, masters_only=True)
    project_b = make_project(items=2, quota=1, reviewers_per_annotation=1)
    admin_b = UserFactory(username="admin-of-b")
    ProjectMembership.objects.create(project=project_b, user=admin_b, role=Role.ADMIN)
    ProjectMembership.objects.create(
        project=project_b, user=people["annotator"], role=Role.ANNOTATOR
    )
    return project_a, project_b, people, admin_b


def test_another_projects_import_does_not_change_what_our_rules_read(two_projects):
    project_a, project_b, people, admin_b = two_projects
    worker = people["annotator"].username
    # Given project A's admin imported the worker as a 98 % master
    assert (
        _import(
            people["admin"],
            project_a,
            f"worker_id,approval_rate,master\n{worker},98,yes\n".encode(),
        ).status_code
        == 200
    )
    # When project B's admin imports the same worker id as a 10 % non-master
    response = _import(
        admin_b, project_b, f"worker_id,approval_rate,master\n{worker},10,no\n".encode()
    )
    assert response.status_code == 200, response.data

    # Then project A's rules still see A's figures and serve the worker
    served = client_for(people["annotator"]).post(
        reverse("annotate:assignment-next", args=[project_a.id])
    )
    assert served.status_code == 200, served.data
    # And each project's worker table shows its own import
    assert _profile_row(people["admin"], project_a, worker)["approval_rate"] == 98
    client_for(people["annotator"]).post(reverse("annotate:assignment-next", args=[project_b.id]))
    assert _profile_row(admin_b, project_b, worker)["approval_rate"] == 10


def test_another_projects_reviews_do_not_change_what_our_rules_read(
    two_projects, django_capture_on_commit_callbacks
):
    project_a, project_b, people, admin_b = two_projects
    annotator = people["annotator"]
    # 24 of 25 approved (96 %): one more rejection anywhere would drop it under 95 %
    _import(
        people["admin"],
        project_a,
        f"worker_id,approval_rate,master\n{annotator.username},96% (24/25),yes\n".encode(),
    )
    # When B's admin, reviewing in B, rejects the worker's annotation there
    with django_capture_on_commit_callbacks(execute=True):
        annotation_id = submit(next_assignment(project_b, annotator), annotator)["annotation_id"]
    verdict = review(admin_b, annotation_id, sufficiency=1).data["verdict"]
    assert verdict["outcome"] == "revise"

    # Then A's figures are untouched and A serves the worker
    served = client_for(annotator).post(reverse("annotate:assignment-next", args=[project_a.id]))
    assert served.status_code == 200, served.data
    assert _profile_row(people["admin"], project_a, annotator.username)["approved_count"] == 24
    # While B's own figures count B's verdict
    assert _profile_row(admin_b, project_b, annotator.username)["approved_count"] == 0


def test_an_import_is_audited_with_who_what_and_where(two_projects):
    project_a, project_b, people, _ = two_projects
    body = b"worker_id,approval_rate\nW1,97\nW2,91\n"
    _import(people["admin"], project_a, body, name="batch-7.csv", platform="mturk")

    event = AuditEvent.objects.get(action="import")
    assert (event.project, event.actor, event.worker) == (project_a, people["admin"], None)
    assert "batch-7.csv" in event.reason and "mturk" in event.reason
    assert "2 rows" in event.reason
    assert not AuditEvent.objects.filter(project=project_b).exists()
    audit = client_for(people["admin"]).get(reverse("qc:audit", args=[project_a.id])).data
    assert audit["events"][0]["action"] == "import"
    assert audit["events"][0]["actor"] == people["admin"].username


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("admin of A", 200),
        ("admin of B", 404),
        ("staff", 404),
        ("superuser", 200),
        ("researcher of A", 403),
        ("annotator of A", 403),
    ],
)
def test_only_a_projects_admins_import_into_it(two_projects, who, expected):
    project_a, project_b, people, admin_b = two_projects
    users = {
        "admin of A": people["admin"],
        "admin of B": admin_b,
        "staff": UserFactory(username="site-staff", is_staff=True),
        "superuser": UserFactory(username="root", is_staff=True, is_superuser=True),
        "researcher of A": people["researcher"],
        "annotator of A": people["annotator"],
    }
    worker = people["annotator"].username

    response = _import(users[who], project_a, f"worker_id,approval_rate\n{worker},99\n".encode())

    assert response.status_code == expected, response.data
    # Whoever imports into A, B's rules never see it
    client_for(people["annotator"]).post(reverse("annotate:assignment-next", args=[project_b.id]))
    assert _profile_row(admin_b, project_b, worker)["approval_rate"] is None
    imported = AuditEvent.objects.filter(action="import", project=project_a).count()
    assert imported == (1 if expected == 200 else 0)
