"""Deleting a registered model: its admins only, never while its runs are going or shown as
suggestions, with its runs only when asked, the uploaded files removed and the admin's own
folder kept, and an audit row."""

import json

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import TestCase
from django.urls import reverse

from annotate.models import InstructionVariant, ProjectMembership, Role
from exports.models import ClassifierModel, ExplainerRun, Export
from qc.models import AuditAction, AuditEvent
from tests.conftest import client_for
from tests.exports.test_classifier_models import CONFIG, MAPPING, register, zipped
from tests.factories import ProjectFactory, UserFactory


@pytest.fixture
def models_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.RW_MODELS_ROOT = "models"
    root = tmp_path / "media" / "models"
    (root / "tiny").mkdir(parents=True)
    (root / "tiny" / "config.json").write_text(json.dumps(CONFIG))
    return root


@pytest.fixture
def project(db):
    return ProjectFactory(labels=["neg", "pos"])


@pytest.fixture
def admin(project):
    user = UserFactory()
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    return user


@pytest.fixture
def model(project, models_root):
    response = register(project, {"name": "tiny", "folder": "tiny", "label_mapping": MAPPING})
    assert response.status_code == 201, response.content
    return ClassifierModel.objects.get(pk=response.json()["id"])


def delete(user, model, runs=None):
    url = reverse(
        "exports:model-detail", kwargs={"project_id": model.project_id, "model_id": model.pk}
    )
    return client_for(user).delete(url + (f"?runs={runs}" if runs else ""))


def run_of(model, status="succeeded", predictions=True):
    export = Export.objects.create(project=model.project, params={}, status="succeeded")
    run = ExplainerRun.objects.create(
        export=export, name=f"run {status}", model=model, explainer="gradient", status=status
    )
    if predictions:
        run.predictions.save("predictions.jsonl", ContentFile(b"{}\n"))
    return run


def test_an_admin_deletes_a_model_without_runs_and_its_named_folder_stays(
    admin, model, models_root
):
    response = delete(admin, model)

    assert response.status_code == 200, response.content
    assert response.json() == {"model_id": model.pk, "runs_deleted": 0}
    assert not ClassifierModel.objects.exists()
    assert (models_root / "tiny" / "config.json").exists()  # the admin's folder, not ours
    event = AuditEvent.objects.get(project=model.project)
    assert (event.action, event.actor, event.details["name"]) == (AuditAction.DELETE, admin, "tiny")


def test_a_model_uploaded_as_a_zip_takes_its_files_with_it(project, admin, models_root):
    upload = zipped({"tiny/config.json": json.dumps(CONFIG), "tiny/vocab.txt": "a\nb\n"})
    response = register(
        project,
        {"name": "zipped", "file": upload, "label_mapping": json.dumps(MAPPING)},
        fmt="multipart",
    )
    model = ClassifierModel.objects.get(pk=response.json()["id"])
    stored = models_root.parent / model.folder
    assert sorted(p.name for p in stored.iterdir()) == ["config.json", "vocab.txt"]

    with TestCase.captureOnCommitCallbacks(execute=True):
        assert delete(admin, model).status_code == 200

    assert not any(p.is_file() for p in stored.rglob("*"))


def test_a_model_with_runs_is_refused_unless_they_go_with_it(admin, model):
    run = run_of(model)

    refused = delete(admin, model)

    assert refused.status_code == 409
    body = refused.json()
    assert (body["code"], body["runs"]) == ("model_has_runs", 1)
    assert "1 run(s)" in body["detail"]
    assert ClassifierModel.objects.filter(pk=model.pk).exists()

    with TestCase.captureOnCommitCallbacks(execute=True):
        response = delete(admin, model, runs="delete")

    assert response.status_code == 200, response.content
    assert response.json()["runs_deleted"] == 1
    assert not ExplainerRun.objects.filter(pk=run.pk).exists()
    assert not default_storage.exists(run.predictions.name)
    assert AuditEvent.objects.get(project=model.project).details["runs"] == [run.pk]


@pytest.mark.parametrize("status", ["pending", "running"])
def test_a_model_whose_run_is_going_is_refused_even_with_its_runs(admin, model, status):
    run_of(model, status=status, predictions=False)

    response = delete(admin, model, runs="delete")

    assert response.status_code == 409
    assert response.json()["code"] == "model_runs_going"
    assert ClassifierModel.objects.filter(pk=model.pk).exists()
    assert not AuditEvent.objects.exists()


def test_a_model_whose_run_a_variant_shows_as_suggestions_is_refused(admin, model):
    run = run_of(model)
    variant = InstructionVariant.objects.create(
        project=model.project,
        name="suggested",
        text="Highlight.",
        suggestions={"run": run.pk, "k": 3, "file": run.predictions.name},
    )

    response = delete(admin, model, runs="delete")

    assert response.status_code == 409
    assert response.json()["code"] == "model_runs_suggested"
    assert variant.name in response.json()["detail"]
    assert ExplainerRun.objects.filter(pk=run.pk).exists()
    assert default_storage.exists(run.predictions.name)


def test_an_unknown_runs_choice_is_refused_naming_the_parameter(admin, model):
    response = delete(admin, model, runs="maybe")

    assert response.status_code == 400
    assert "runs" in response.json()


@pytest.mark.parametrize("role", [Role.RESEARCHER, Role.REVIEWER, Role.ANNOTATOR])
def test_other_roles_may_not_delete_a_model(project, model, role):
    user = UserFactory()
    ProjectMembership.objects.create(project=project, user=user, role=role)

    assert delete(user, model).status_code == 403
    assert ClassifierModel.objects.filter(pk=model.pk).exists()


def test_the_admin_of_another_project_gets_404_for_its_models(model):
    stranger = UserFactory()
    ProjectMembership.objects.create(project=ProjectFactory(), user=stranger, role=Role.ADMIN)

    assert delete(stranger, model).status_code == 404


def test_a_model_of_another_project_is_not_found_through_this_one(admin, project, models_root):
    other = ProjectFactory(labels=["neg", "pos"])
    theirs = ClassifierModel.objects.create(
        project=other, name="theirs", folder="models/tiny", labels=["NEG", "POS"]
    )
    url = reverse("exports:model-detail", kwargs={"project_id": project.pk, "model_id": theirs.pk})

    response = client_for(admin).delete(url)

    assert response.status_code == 404
    assert ClassifierModel.objects.filter(pk=theirs.pk).exists()
