"""The board's comparison: the project's finished runs over every export, filtered to the
explainers on one model or one explainer across models, each with the gold of its export."""

import pytest
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from exports.models import ClassifierModel, ExplainerRun, Export
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory


@pytest.fixture
def board(db):
    """Two exports (reference sets and accepted sets), two models and the baseline, with
    runs of several explainers; one run failed, one in another project."""
    project = ProjectFactory(labels=["neg", "pos"])
    reference = Export.objects.create(
        project=project,
        status="succeeded",
        params={"selection": "reference", "aggregation": "reference"},
    )
    accepted = Export.objects.create(
        project=project,
        status="succeeded",
        params={"selection": "accepted", "aggregation": "accepted_sets"},
    )
    small, large = (
        ClassifierModel.objects.create(project=project, name=name, folder=f"models/{name}")
        for name in ("small", "large")
    )

    def run(export, explainer, model=None, f1=0.5, status="succeeded", split="test"):
        return ExplainerRun.objects.create(
            export=export,
            name=f"{explainer}-{model.name if model else 'bow'}",
            explainer=explainer,
            model=model,
            split=split,
            status=status,
            scores={"token_prf": {"instance_macro": {"f1": f1}}},
        )

    made = {
        "ig-small-ref": run(reference, "integrated_gradients", small, 0.4),
        "ig-small-acc": run(accepted, "integrated_gradients", small, 0.45),
        "grad-small-ref": run(reference, "gradient", small, 0.3),
        "ig-large-ref": run(reference, "integrated_gradients", large, 0.6),
        "lime-bow-ref": run(reference, "lime", None, 0.2),
        "failed": run(reference, "gradient", large, status="failed"),
        "val": run(reference, "gradient", large, split="val"),
    }
    other = ProjectFactory(labels=["neg", "pos"])
    run(Export.objects.create(project=other, status="succeeded", params={}), "gradient")
    return project, small, large, made


def compare(project, role=Role.RESEARCHER, **query):
    user = UserFactory()
    ProjectMembership.objects.create(project=project, user=user, role=role)
    address = reverse("exports:run-compare", kwargs={"project_id": project.pk})
    return client_for(user).get(address, query)


def names(response):
    return sorted(
        (r["explainer"], r["model_name"], r["gold"]["aggregation"]) for r in response.json()
    )


def test_the_explainers_on_one_model_across_the_exports(board):
    project, small, _, _ = board

    response = compare(project, model=str(small.pk))

    assert response.status_code == 200
    assert names(response) == [
        ("gradient", "small", "reference"),
        ("integrated_gradients", "small", "accepted_sets"),
        ("integrated_gradients", "small", "reference"),
    ]


def test_one_explainer_across_models(board):
    project, *_ = board

    response = compare(project, explainer="integrated_gradients", split="test")

    assert names(response) == [
        ("integrated_gradients", "large", "reference"),
        ("integrated_gradients", "small", "accepted_sets"),
        ("integrated_gradients", "small", "reference"),
    ]
    row = next(r for r in response.json() if r["model_name"] == "large")
    assert row["scores"]["token_prf"]["instance_macro"]["f1"] == 0.6
    assert row["gold"]["selection"] == "reference"


def test_the_baseline_and_uploads_are_one_choice(board):
    project, *_ = board

    assert names(compare(project, model="baseline")) == [("lime", None, "reference")]


def test_only_finished_runs_of_this_project_are_compared(board):
    project, _, _, made = board

    ids = {r["id"] for r in compare(project).json()}

    assert made["failed"].pk not in ids
    assert ids == {r.pk for key, r in made.items() if key != "failed"}


@pytest.mark.parametrize(
    "query", [{"model": "small"}, {"model": "-1"}, {"split": "dev"}, {"explainer": "x" * 40}]
)
def test_bad_filters_are_refused(board, query):
    project, *_ = board

    assert compare(project, **query).status_code == 400


@pytest.mark.parametrize(
    ("role", "status"), [(Role.ADMIN, 200), (Role.REVIEWER, 403), (Role.ANNOTATOR, 403)]
)
def test_admins_and_researchers_compare(board, role, status):
    project, *_ = board

    assert compare(project, role=role).status_code == status


def test_a_stranger_does_not_find_the_project(board):
    project, *_ = board
    address = reverse("exports:run-compare", kwargs={"project_id": project.pk})

    assert client_for(UserFactory()).get(address).status_code == 404
