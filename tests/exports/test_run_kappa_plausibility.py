"""The results board's instruction-study plausibility: the explainer's top-k tokens against each
annotation of a variant by kappa (docs/reference/metrics.md#explainer-plausibility-per-variant),
on a case worked by hand, read back through the runs API."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from exports.services import export_start
from tests.conftest import client_for
from tests.exports.test_export import annotated  # noqa: F401 - fixture
from tests.exports.test_runs import run
from tests.factories import ProjectFactory, UserFactory
from tests.rationale_metrics.test_plausibility import SCORES

# The `annotated` fixture: items i0, i1, one document each of eleven tokens; variant a's
# annotators mark {0,1,2}, {1,2,3}, {2,6,7} and variant b's one annotator {9}, on both items.
# With item i0 scored like "s" and i1 like "t" of the library test: a = (13/24 + 1) / 2 and
# b = -0.1 (worked in tests/rationale_metrics/test_plausibility.py).


def soft_line(n: int, scores: list[float]) -> str:
    return json.dumps(
        {
            "annotation_id": f"i{n}",
            "rationales": [{"docid": f"d{n}", "soft_rationale_predictions": scores}],
        }
    )


@pytest.fixture
def scored(annotated, django_capture_on_commit_callbacks):  # noqa: F811
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(
            project=annotated, acting_user=None, raw_params={"aggregation": "union"}
        )
    export.refresh_from_db()
    assert export.status == "succeeded", export.error
    body = soft_line(0, SCORES["s"]) + "\n" + soft_line(1, SCORES["t"]) + "\n"
    result = run(
        export,
        django_capture_on_commit_callbacks,
        name="soft",
        split="train",
        upload=SimpleUploadedFile("soft.jsonl", body.encode()),
    )
    assert result.status == "succeeded", (result.error, result.problems)
    return export


def runs_url(export):
    return reverse("exports:run-list", args=[export.project_id, export.id])


def test_the_board_reports_it_beside_the_majority_figures(scored):
    researcher = UserFactory(username="kappa-researcher")
    ProjectMembership.objects.create(project=scored.project, user=researcher, role=Role.RESEARCHER)

    response = client_for(researcher).get(runs_url(scored))

    assert response.status_code == 200
    by_variant = response.data["results"][0]["plausibility_by_variant"]
    a, b = by_variant["a"], by_variant["b"]
    assert "auprc" in a and a["items"] == 2  # the majority-vote figures stay
    assert a["kappa_top_k"]["plausibility"] == pytest.approx(37 / 48)
    assert b["kappa_top_k"]["plausibility"] == pytest.approx(-0.1)
    assert (a["kappa_top_k"]["items"], a["kappa_top_k"]["items_without_scores"]) == (2, 0)


def test_without_soft_scores_the_board_says_why(annotated, django_capture_on_commit_callbacks):  # noqa: F811
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=annotated, acting_user=None, raw_params={})
    export.refresh_from_db()
    hard = json.dumps(
        {
            "annotation_id": "i0",
            "rationales": [
                {"docid": "d0", "hard_rationale_predictions": [{"start_token": 1, "end_token": 3}]}
            ],
        }
    )

    result = run(
        export,
        django_capture_on_commit_callbacks,
        name="hard",
        split="train",
        upload=SimpleUploadedFile("hard.jsonl", (hard + "\n").encode()),
    )

    assert result.status == "succeeded", result.error
    assert result.plausibility_by_variant["a"]["kappa_top_k"] == {
        "plausibility": None,
        "reason": "the predictions give no soft token scores",
    }


@pytest.mark.parametrize(
    ("role", "code"),
    [(Role.ADMIN, 200), (Role.RESEARCHER, 200), (Role.REVIEWER, 403), (Role.ANNOTATOR, 403)],
)
def test_who_reads_the_board(scored, role, code):
    user = UserFactory(username=f"kappa-{role}")
    ProjectMembership.objects.create(project=scored.project, user=user, role=role)

    response = client_for(user).get(runs_url(scored))

    assert response.status_code == code
    if code == 403:
        assert "plausibility_by_variant" not in json.dumps(response.data)


def test_outsiders_anonymous_and_another_projects_export(scored, api_client):
    outsider = UserFactory(username="kappa-outsider")
    other_admin = UserFactory(username="kappa-other-admin")
    other = ProjectFactory()
    ProjectMembership.objects.create(project=other, user=other_admin, role=Role.ADMIN)

    assert client_for(outsider).get(runs_url(scored)).status_code == 404
    assert api_client.get(runs_url(scored)).status_code == 401
    # The export through a project the caller administers, which it does not belong to.
    crossed = reverse("exports:run-list", args=[other.id, scored.id])
    assert client_for(other_admin).get(crossed).status_code == 404
