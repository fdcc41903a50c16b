"""The agreement dashboard's figures on model suggestions, read from a project."""

import uuid

import pytest
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.conftest import client_for
from tests.exports.suggestion_helpers import suggestion_project
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)


def _annotate(project, worker, start, end, accepted=None, times=2):
    for _ in range(times):
        assignment = assignment_next(project=project, worker=worker)
        docid = text_docid(assignment)
        annotation_submit(
            assignment_id=assignment.pk,
            worker=worker,
            client_uuid=uuid.uuid4(),
            rationale_sets=[[{"docid": docid, "start_token": start, "end_token": end}]],
            suggestions_accepted=accepted(docid) if accepted else None,
        )


def _reader(project, role=Role.RESEARCHER):
    user = UserFactory()
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def test_each_variant_is_measured_against_the_suggestions_and_the_other_variant():
    project, _, _, run, shown_worker, plain_worker = suggestion_project(items=2)
    # The shown variant takes both suggestions ("rather good", 5-6); the plain one marks 0-1.
    _annotate(
        project,
        shown_worker,
        5,
        7,
        accepted=lambda docid: [{"docid": docid, "token": 5}, {"docid": docid, "token": 6}],
    )
    _annotate(project, plain_worker, 0, 2)

    response = client_for(_reader(project)).get(
        reverse("qc:agreement-suggestions", args=[project.pk])
    )

    assert response.status_code == 200
    (report,) = response.data["reports"]
    assert (report["variant"], report["run"], report["k"]) == ("shown", run.pk, 2)
    assert report["items_with_suggestions"] == 2
    rows = {row["variant"]: row for row in report["variants"]}
    assert rows["shown"]["f1_suggestions"] == 1.0
    assert rows["plain"]["f1_suggestions"] == 0.0
    # Both annotated both items, and never a token in common.
    assert rows["shown"]["f1_other_variants"] == 0.0
    assert rows["plain"]["annotations"] == 2
    (test,) = report["permutation_tests"]
    assert test["difference"] == 1.0
    # Two against two, all 1s against all 0s: only the observed split and its mirror
    # image are as extreme, a third of the six splits.
    assert test["p_value"] == pytest.approx(1 / 3, abs=0.05)


def test_a_project_without_suggestions_has_no_reports():
    project = make_project(items=1)

    response = client_for(_reader(project, Role.ADMIN)).get(
        reverse("qc:agreement-suggestions", args=[project.pk])
    )

    assert response.status_code == 200
    assert response.data == {"reports": []}


@pytest.mark.parametrize("role", [Role.ANNOTATOR, Role.REVIEWER, None])
def test_only_admins_and_researchers_read_it(role):
    project, *_ = suggestion_project(items=1)
    user = UserFactory()
    if role is not None:
        ProjectMembership.objects.create(project=project, user=user, role=role)

    response = client_for(user).get(reverse("qc:agreement-suggestions", args=[project.pk]))

    assert response.status_code == (403 if role is not None else 404)
