"""Recruitment bands: qualification rules with upper bounds, so that one approval level of
the crowd study (80-90 %) can be recruited on its own."""

import pytest
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from config.exceptions import ApplicationError
from qc.models import ProjectWorker, QualificationStatus, QualityPolicy
from qc.rule_bands import approval_rate_failure, approved_count_failure, band_problem
from qc.services import quality_policy_update
from tests.conftest import client_for
from tests.factories import UserFactory
from tests.qc.helpers import make_review_project
from tests.qc.test_qualification import worker

# ---------------------------------------------------------------- the pure checks


@pytest.mark.parametrize(
    ("rate", "low", "high", "expected"),
    [
        (85, 80, 90, None),
        (80, 80, 90, None),  # both bounds are inclusive
        (90, 80, 90, None),
        (95, 80, 90, "approval rate 95% is outside the band 80-90%"),
        (79.5, 80, 90, "approval rate 79.5% is outside the band 80-90%"),
        (95, None, 90, "approval rate 95% is over 90%"),
        (70, 80, None, "approval rate 70% is under 80%"),
        (None, 80, 90, "approval rate unknown, not in the band 80-90%"),
        (None, None, None, None),
    ],
)
def test_approval_rate_band(rate, low, high, expected):
    assert approval_rate_failure(rate, low, high) == expected


def test_approved_count_band():
    assert approved_count_failure(500, 100, 1000) is None
    assert approved_count_failure(5000, 100, 1000) == (
        "5000 approved tasks, outside the band 100-1000"
    )
    assert approved_count_failure(5000, None, 1000) == "5000 approved tasks, over 1000"


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (80, 90, None),
        (90, 90, None),
        (None, 90, None),
        (90, 80, ("hi", "80 is below lo 90: a band needs lo ≤ hi")),
        (-1, None, ("lo", "-1 is out of range: it must be 0 to 100")),
        (None, 101, ("hi", "101 is out of range: it must be 0 to 100")),
    ],
)
def test_band_problems_name_the_field(low, high, expected):
    found = band_problem(low_field="lo", high_field="hi", low=low, high=high, limits=(0, 100))
    assert found == expected


# ---------------------------------------------------------------- applied at the gate


def test_a_band_admits_its_level_and_refuses_the_level_above_naming_the_band(db):
    project, people = make_review_project()
    client_for(people["admin"]).patch(
        reverse("qc:quality-policy", args=[project.id]),
        {"min_approval_rate": 80, "max_approval_rate": 90},
        format="json",
    )
    inside = worker(project, "in-band", approval_rate=85, approved_count=85, judged_count=100)
    above = worker(project, "above-band", approval_rate=95, approved_count=95, judged_count=100)

    served = client_for(inside).post(reverse("annotate:assignment-next", args=[project.id]))
    refused = client_for(above).post(reverse("annotate:assignment-next", args=[project.id]))

    assert served.status_code == 200 and served.data["id"]
    assert refused.status_code == 403 and refused.data["code"] == "not_qualified"
    assert refused.data["reason"] == "approval rate 95% is outside the band 80-90%"
    standing = ProjectWorker.objects.get(project=project, worker=above)
    assert standing.status == QualificationStatus.REJECTED and "80-90%" in standing.reason


def test_an_approved_count_ceiling_is_applied(db):
    project, _ = make_review_project()
    quality_policy_update(project=project, max_approved_count=1000)
    veteran = worker(project, "veteran", approval_rate=99, approved_count=5000, judged_count=5050)

    refused = client_for(veteran).post(reverse("annotate:assignment-next", args=[project.id]))

    assert refused.data["reason"] == "5000 approved tasks, over 1000"


# ---------------------------------------------------------------- bad input


@pytest.fixture
def setup(db):
    return make_review_project()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"min_approval_rate": 90, "max_approval_rate": 80}, "max_approval_rate"),
        ({"max_approval_rate": 150}, "max_approval_rate"),
        ({"max_approval_rate": -5}, "max_approval_rate"),
        ({"max_approval_rate": "high"}, "max_approval_rate"),
        ({"min_approved_count": 100, "max_approved_count": 10}, "max_approved_count"),
        ({"max_approved_count": -1}, "max_approved_count"),
    ],
)
def test_bad_bands_are_refused_naming_the_field_and_nothing_is_written(setup, body, field):
    project, people = setup

    response = client_for(people["admin"]).patch(
        reverse("qc:quality-policy", args=[project.id]), body, format="json"
    )

    assert response.status_code == 400
    assert field in response.data or response.data.get("field") == field, response.data
    assert not QualityPolicy.objects.filter(project=project).exists()


def test_a_partial_update_cannot_cross_the_stored_bound(setup):
    project, people = setup
    quality_policy_update(project=project, min_approval_rate=80, max_approval_rate=90)

    response = client_for(people["admin"]).patch(
        reverse("qc:quality-policy", args=[project.id]), {"min_approval_rate": 95}, format="json"
    )

    assert response.status_code == 400 and response.data["field"] == "max_approval_rate"
    assert "min_approval_rate ≤ max_approval_rate" in response.data["detail"]
    policy = QualityPolicy.objects.get(project=project)
    assert (policy.min_approval_rate, policy.max_approval_rate) == (80, 90)


def test_the_service_refuses_a_bad_band_too(setup):
    project, _ = setup
    with pytest.raises(ApplicationError, match="max_approval_rate: 70 is below"):
        quality_policy_update(project=project, min_approval_rate=80, max_approval_rate=70)


# ---------------------------------------------------------------- who may set a band


@pytest.mark.parametrize(
    ("who", "code"),
    [
        ("admin", 200),
        ("researcher", 403),
        ("reviewer1", 403),
        ("annotator", 403),
        ("outsider", 404),
    ],
)
def test_only_the_projects_admins_set_bands(setup, who, code):
    project, people = setup
    url = reverse("qc:quality-policy", args=[project.id])

    response = client_for(people[who]).patch(url, {"max_approval_rate": 90}, format="json")

    assert response.status_code == code
    if code == 200:
        assert response.data["max_approval_rate"] == 90
        assert client_for(people[who]).get(url).data["max_approval_rate"] == 90


def test_anonymous_and_another_projects_admin_cannot_set_bands(setup, api_client):
    project, _ = setup
    other, _ = make_review_project()
    other_admin = UserFactory(username="other-admin")
    ProjectMembership.objects.create(project=other, user=other_admin, role=Role.ADMIN)
    url = reverse("qc:quality-policy", args=[project.id])

    assert api_client.patch(url, {"max_approval_rate": 90}, format="json").status_code == 401
    assert (
        client_for(other_admin).patch(url, {"max_approval_rate": 90}, format="json").status_code
        == 404
    )
    assert not QualityPolicy.objects.filter(project=project).exists()
