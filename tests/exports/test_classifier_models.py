"""Registering a model for a project: a folder under the storage's models root or a zip of
one, the label mapping checked against the project's labels, and who may do it."""

import io
import json
import os
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from exports.models import ClassifierModel
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory

CONFIG = {
    "model_type": "bert",
    "architectures": ["BertForSequenceClassification"],
    "id2label": {"0": "NEG", "1": "POS"},
    "label2id": {"NEG": 0, "POS": 1},
}
MAPPING = {"neg": "NEG", "pos": "POS"}


@pytest.fixture
def models_root(settings, tmp_path):
    """The storage in a folder of the test's own, its models root holding one checkpoint's
    config (what registration reads) in `tiny/`."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.RW_MODELS_ROOT = "models"
    root = tmp_path / "media" / "models"
    (root / "tiny").mkdir(parents=True)
    (root / "tiny" / "config.json").write_text(json.dumps(CONFIG))
    return root


@pytest.fixture
def project(db):
    return ProjectFactory(labels=["neg", "pos"])


def member(project, role):
    user = UserFactory()
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def url(project):
    return reverse("exports:model-list", kwargs={"project_id": project.pk})


def register(project, body, role=Role.ADMIN, fmt="json"):
    return client_for(member(project, role)).post(url(project), body, format=fmt)


def zipped(entries: dict) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return SimpleUploadedFile("model.zip", buffer.getvalue(), content_type="application/zip")


def test_an_admin_registers_a_folder_with_its_label_mapping(project, models_root):
    response = register(project, {"name": "tiny", "folder": "tiny", "label_mapping": MAPPING})

    assert response.status_code == 201, response.content
    model = ClassifierModel.objects.get()
    assert (model.project, model.folder, model.labels) == (project, "models/tiny", ["NEG", "POS"])
    assert model.label_mapping == MAPPING
    assert response.json()["label_mapping"] == MAPPING


def test_an_absolute_path_inside_the_root_is_taken(project, models_root):
    response = register(
        project, {"name": "tiny", "folder": str(models_root / "tiny"), "label_mapping": MAPPING}
    )

    assert response.status_code == 201, response.content
    assert ClassifierModel.objects.get().folder == "models/tiny"


def test_the_same_labels_need_no_mapping(project, models_root):
    same = {**CONFIG, "id2label": {"0": "neg", "1": "pos"}}
    (models_root / "same").mkdir()
    (models_root / "same" / "config.json").write_text(json.dumps(same))

    response = register(project, {"name": "same", "folder": "same"})

    assert response.status_code == 201, response.content
    assert ClassifierModel.objects.get().label_mapping == {"neg": "neg", "pos": "pos"}


@pytest.mark.parametrize(
    ("mapping", "says"),
    [
        (None, "the project's labels ('neg', 'pos') are not the model's ('NEG', 'POS')"),
        ({"neg": "NEG"}, "project label(s) 'pos' not mapped"),
        ({"neg": "NEG", "pos": "MAYBE"}, "'MAYBE' not a label of the model"),
        ({"neg": "NEG", "pos": "NEG"}, "'neg', 'pos' all mapped to model label 'NEG'"),
    ],
)
def test_a_mapping_that_does_not_line_up_is_refused_naming_the_labels(
    project, models_root, mapping, says
):
    response = register(project, {"name": "tiny", "folder": "tiny", "label_mapping": mapping})

    assert response.status_code == 400
    assert says in response.json()["detail"]
    assert not ClassifierModel.objects.exists()


@pytest.mark.parametrize("folder", ["../elsewhere", "tiny/../../elsewhere", "/etc", "/tmp"])
def test_a_folder_outside_the_root_is_refused(project, models_root, folder):
    (models_root.parent.parent / "elsewhere").mkdir()
    (models_root.parent.parent / "elsewhere" / "config.json").write_text(json.dumps(CONFIG))

    response = register(project, {"name": "x", "folder": folder, "label_mapping": MAPPING})

    assert response.status_code == 400
    assert "models root" in response.json()["detail"]
    assert not ClassifierModel.objects.exists()


def test_a_link_out_of_the_root_is_refused(project, models_root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text(json.dumps(CONFIG))
    os.symlink(outside, models_root / "linked")
    os.symlink(outside / "config.json", models_root / "tiny" / "weights.bin")

    folder_link = register(project, {"name": "a", "folder": "linked", "label_mapping": MAPPING})
    file_link = register(project, {"name": "b", "folder": "tiny", "label_mapping": MAPPING})

    assert folder_link.status_code == 400
    assert "links out of the models root" in folder_link.json()["detail"]
    assert file_link.status_code == 400
    assert "'weights.bin' in 'tiny' links out" in file_link.json()["detail"]
    assert not ClassifierModel.objects.exists()


def test_a_folder_without_a_checkpoint_is_refused(project, models_root):
    (models_root / "empty").mkdir()

    missing = register(project, {"name": "a", "folder": "nowhere", "label_mapping": MAPPING})
    empty = register(project, {"name": "b", "folder": "empty", "label_mapping": MAPPING})

    assert missing.status_code == 400 and "no folder 'nowhere'" in missing.json()["detail"]
    assert empty.status_code == 400 and "no config.json" in empty.json()["detail"]


def test_a_zip_of_a_folder_is_unpacked_into_the_models_root(project, models_root):
    upload = zipped({"tiny/config.json": json.dumps(CONFIG), "tiny/vocab.txt": "a\nb\n"})

    response = register(
        project,
        {"name": "zipped", "file": upload, "label_mapping": json.dumps(MAPPING)},
        fmt="multipart",
    )

    assert response.status_code == 201, response.content
    model = ClassifierModel.objects.get()
    assert model.folder.startswith(f"models/uploads/project-{project.pk}/zipped-")
    stored = models_root.parent / model.folder
    assert sorted(p.name for p in stored.iterdir()) == ["config.json", "vocab.txt"]


@pytest.mark.parametrize(
    ("entries", "says"),
    [
        ({"config.json": json.dumps(CONFIG), "../evil.txt": "x"}, "leaves its folder"),
        ({"weights.bin": "x"}, "no config.json"),
        ({"config.json": "{not json"}, "config.json"),
    ],
)
def test_a_bad_zip_is_refused_and_nothing_is_stored(project, models_root, entries, says):
    response = register(
        project,
        {"name": "zipped", "file": zipped(entries), "label_mapping": json.dumps(MAPPING)},
        fmt="multipart",
    )

    assert response.status_code == 400
    assert says in response.json()["detail"]
    assert not (models_root / "uploads").exists() or not any((models_root / "uploads").rglob("*.*"))


def test_a_refused_mapping_leaves_no_unpacked_zip(project, models_root):
    upload = zipped({"config.json": json.dumps(CONFIG)})

    response = register(
        project,
        {"name": "zipped", "file": upload, "label_mapping": json.dumps({"neg": "NEG"})},
        fmt="multipart",
    )

    assert response.status_code == 400
    assert not (models_root / "uploads").exists()


@pytest.mark.parametrize(
    "body",
    [
        {"folder": "tiny"},
        {"name": "x"},
        {"name": "x", "folder": "tiny", "label_mapping": ["neg", "NEG"]},
        {"name": "x", "folder": "tiny", "label_mapping": {"neg": 1}},
        {"name": 5, "folder": "tiny"},
        {"name": "x", "folder": 5},
    ],
)
def test_bad_input_is_refused(project, models_root, body):
    response = register(project, body)

    assert response.status_code == 400
    assert not ClassifierModel.objects.exists()


def test_a_folder_and_a_zip_together_are_refused(project, models_root):
    upload = zipped({"config.json": json.dumps(CONFIG)})

    response = register(project, {"name": "x", "folder": "tiny", "file": upload}, fmt="multipart")

    assert response.status_code == 400
    assert "not both" in response.json()["detail"]


def test_a_name_is_registered_once_per_project(project, models_root):
    first = register(project, {"name": "tiny", "folder": "tiny", "label_mapping": MAPPING})
    again = register(project, {"name": "tiny", "folder": "tiny", "label_mapping": MAPPING})

    assert first.status_code == 201
    assert again.status_code == 409


@pytest.mark.parametrize("role", [Role.RESEARCHER, Role.REVIEWER, Role.ANNOTATOR, Role.CURATOR])
def test_only_the_projects_admins_register(project, models_root, role):
    response = register(
        project, {"name": "tiny", "folder": "tiny", "label_mapping": MAPPING}, role=role
    )

    assert response.status_code == 403
    assert not ClassifierModel.objects.exists()


def test_admins_and_researchers_list_the_projects_models_only(project, models_root):
    register(project, {"name": "tiny", "folder": "tiny", "label_mapping": MAPPING})
    other = ProjectFactory(labels=["neg", "pos"])
    register(other, {"name": "theirs", "folder": "tiny", "label_mapping": MAPPING})

    listed = client_for(member(project, Role.RESEARCHER)).get(url(project))
    refused = client_for(member(project, Role.ANNOTATOR)).get(url(project))
    stranger = client_for(UserFactory()).get(url(project))

    assert listed.status_code == 200
    assert [m["name"] for m in listed.json()["results"]] == ["tiny"]
    assert (refused.status_code, stranger.status_code) == (403, 404)


def test_a_deleted_project_takes_its_models_and_their_runs(project):
    from exports.models import ExplainerRun, Export

    export = Export.objects.create(project=project, status="succeeded", params={})
    model = ClassifierModel.objects.create(project=project, name="m", folder="models/m")
    ExplainerRun.objects.create(export=export, name="r", explainer="gradient", model=model)

    project.delete()

    assert not ClassifierModel.objects.exists() and not ExplainerRun.objects.exists()
