"""Explainer runs on exports: reference-exact scores, per-line problems, per-variant plausibility."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import TestCase, override_settings
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import dataset_import
from config.exceptions import ApplicationError
from exports.models import ExplainerRun, Export
from exports.runs import explainer_run_start
from exports.services import export_start
from tests.conftest import SHARED_REFERENCE, client_for
from tests.exports.test_export import annotated  # noqa: F401 - fixture
from tests.factories import ProjectFactory, UserFactory


@pytest.fixture(scope="module")
def movies_export_of_module(django_db_setup, django_db_blocker, tmp_path_factory):
    """The ERASER movies data imported and exported once for the module's tests (seconds
    each time), in a transaction rolled back after the last of them, its files in a
    folder of the module's own. Each test's own transaction is a savepoint inside it."""
    if not SHARED_REFERENCE.is_dir():
        yield None  # each test's `eraser_reference` says why it cannot run
        return
    media = tmp_path_factory.mktemp("movies-export-media")
    with (
        django_db_blocker.unblock(),
        override_settings(MEDIA_ROOT=str(media)),
        transaction.atomic(),
    ):
        project = ProjectFactory(labels=[])
        dataset_import(project=project, path=SHARED_REFERENCE / "movies" / "data")
        with TestCase.captureOnCommitCallbacks(execute=True):
            export = export_start(
                project=project,
                acting_user=None,
                raw_params={"selection": "reference", "aggregation": "reference"},
            )
        export.refresh_from_db()
        assert export.status == "succeeded", export.error
        yield export.pk, media
        transaction.set_rollback(True)


@pytest.fixture
def movies_export(movies_export_of_module, eraser_reference, db, settings):
    export_id, media = movies_export_of_module
    settings.MEDIA_ROOT = str(media)
    return Export.objects.get(pk=export_id)


def run(export, capture, **kwargs):
    with capture(execute=True):
        created = explainer_run_start(export=export, acting_user=None, **kwargs)
    return ExplainerRun.objects.get(pk=created.pk)


def test_uploaded_predictions_score_like_the_reference(
    movies_export, eraser_reference, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile(
        "oracle.jsonl", (eraser_reference / "movies" / "preds" / "oracle.jsonl").read_bytes()
    )

    result = run(
        movies_export, django_capture_on_commit_callbacks, name="oracle", split="val", upload=upload
    )

    reference = json.loads((eraser_reference / "movies" / "scores" / "oracle.json").read_text())
    assert result.status == "succeeded", (result.error, result.problems[:3])
    assert result.scores["token_prf"] == reference["token_prf"]
    assert result.scores["classification_scores"]["comprehensiveness"] == pytest.approx(
        reference["classification_scores"]["comprehensiveness"], abs=1e-9
    )


def test_a_bad_file_reports_every_line(movies_export, django_capture_on_commit_callbacks):
    bad = b'{"annotation_id": "negR_800.txt", "rationales": [{"docid": "nope"}]}\nnot json\n'

    result = run(
        movies_export,
        django_capture_on_commit_callbacks,
        name="bad",
        split="val",
        upload=SimpleUploadedFile("b.jsonl", bad),
    )

    assert result.status == "failed" and result.scores is None
    assert [(p["line"], p["field"]) for p in result.problems] == [
        (1, "rationales[0].docid"),
        (2, None),
    ]


def test_a_bundled_explainer_runs_on_the_baseline(
    movies_export, django_capture_on_commit_callbacks
):
    result = run(
        movies_export,
        django_capture_on_commit_callbacks,
        name="random",
        split="test",
        explainer="random",
    )

    assert result.status == "succeeded", result.error
    assert 0 <= result.scores["classification_scores"]["accuracy"] <= 1
    assert result.predictions.name.endswith(".jsonl")


def test_plausibility_per_variant(annotated, tmp_path, django_capture_on_commit_callbacks):  # noqa: F811
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(
            project=annotated, acting_user=None, raw_params={"aggregation": "union"}
        )
    export.refresh_from_db()
    lines = [
        json.dumps(
            {
                "annotation_id": f"i{n}",
                "rationales": [
                    {
                        "docid": f"d{n}",
                        "hard_rationale_predictions": [{"start_token": 1, "end_token": 3}],
                    }
                ],
            }
        )
        for n in range(2)
    ]
    upload = SimpleUploadedFile("p.jsonl", ("\n".join(lines) + "\n").encode())

    result = run(export, django_capture_on_commit_callbacks, name="p", split="train", upload=upload)

    assert result.status == "succeeded", (result.error, result.problems)
    # Variant a's majority is tokens 1-2: a perfect match; variant b's is token 9.
    assert result.plausibility_by_variant["a"]["token_f1"] == 1.0
    assert result.plausibility_by_variant["b"]["token_f1"] == 0.0
    assert result.plausibility_by_variant["a"]["items"] == 2


def test_runs_need_a_finished_export_and_one_source(movies_export):
    with pytest.raises(ApplicationError, match="either a predictions file or a bundled explainer"):
        explainer_run_start(export=movies_export, acting_user=None, name="x", split="val")
    with pytest.raises(ApplicationError, match="explainer: 'gradcam'"):
        explainer_run_start(
            export=movies_export, acting_user=None, name="x", split="val", explainer="gradcam"
        )


@pytest.mark.parametrize(
    ("role", "code"),
    [
        (Role.RESEARCHER, 202),
        (Role.ADMIN, 202),
        (Role.ANNOTATOR, 403),
        (Role.REVIEWER, 403),
        (None, 404),
    ],
)
def test_run_api_permissions(movies_export, role, code):
    user = UserFactory(username=f"run-{role}")
    if role:
        ProjectMembership.objects.create(project=movies_export.project, user=user, role=role)
    url = reverse("exports:run-list", args=[movies_export.project_id, movies_export.id])

    response = client_for(user).post(
        url, {"name": "r", "split": "val", "explainer": "random"}, format="multipart"
    )

    assert response.status_code == code
    assert client_for(user).get(url).status_code == (200 if code == 202 else code)


def test_run_api_bad_input(movies_export):
    user = UserFactory(username="r-bad")
    ProjectMembership.objects.create(project=movies_export.project, user=user, role=Role.RESEARCHER)
    url = reverse("exports:run-list", args=[movies_export.project_id, movies_export.id])

    response = client_for(user).post(url, {"split": "dev"}, format="multipart")

    assert response.status_code == 400 and {"name", "split"} <= set(response.data)
