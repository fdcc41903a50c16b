"""Explainer runs on a registered model: started from the board's API, refused clearly when
they cannot run (no torch, a baseline-only explainer, bad options, another project's model),
routed to the explainer queue, and run end to end on a tiny model (eager Celery)."""

import json

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from config import job_queue
from exports import classifier_models, runs
from exports.models import ClassifierModel, ExplainerRun
from exports.runs import explainer_run_start
from tests.conftest import client_for
from tests.exports.test_export_chunks import FakeChord
from tests.exports.test_run_chunks import labelled_study, predictions_of
from tests.factories import UserFactory

MAPPING = {"neg": "NEG", "pos": "POS"}


@pytest.fixture
def study_export(db, settings, tmp_path, django_capture_on_commit_callbacks):
    from exports.services import export_start

    settings.MEDIA_ROOT = str(tmp_path / "media")
    project = labelled_study()
    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(project=project, acting_user=None, raw_params={})
    export.refresh_from_db()
    assert export.status == "succeeded", export.error
    return export


@pytest.fixture
def model_row(study_export):
    """A registered model as its row: what the checks before a run read."""
    return ClassifierModel.objects.create(
        project=study_export.project,
        name="tiny",
        folder="models/tiny",
        labels=["NEG", "POS"],
        label_mapping=MAPPING,
    )


def post_run(export, body, role=Role.RESEARCHER):
    user = UserFactory()
    ProjectMembership.objects.create(project=export.project, user=user, role=role)
    address = reverse(
        "exports:run-list", kwargs={"project_id": export.project_id, "export_id": export.pk}
    )
    return client_for(user).post(address, body, format="json")


def test_without_torch_a_model_explainer_is_refused_clearly(study_export, model_row, monkeypatch):
    monkeypatch.setattr(runs, "models_extra_missing", lambda: ["torch", "transformers"])

    response = post_run(study_export, {"name": "g", "explainer": "gradient", "model": model_row.pk})

    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "need the 'models' extra" in detail and "missing: torch, transformers" in detail
    assert not ExplainerRun.objects.exists()


def test_without_torch_the_baseline_explainers_still_run(
    study_export, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(runs, "models_extra_missing", lambda: ["torch"])

    with django_capture_on_commit_callbacks(execute=True):
        response = post_run(study_export, {"name": "r", "explainer": "random", "split": "train"})

    assert response.status_code == 202
    assert ExplainerRun.objects.get().status == "succeeded"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"explainer": "gradient"}, "explains a registered model; choose one"),
        ({"explainer": "linear", "model": "MODEL"}, "'linear' is not one of"),
        ({"model": "MODEL"}, "a predictions file or a bundled explainer"),
        ({"explainer": "random", "options": {"steps": 5}}, "only a model explainer's run"),
        (
            {"explainer": "integrated_gradients", "model": "MODEL", "options": {"samples": 5}},
            "integrated_gradients takes no 'samples' (it takes steps, baseline)",
        ),
        (
            {"explainer": "integrated_gradients", "model": "MODEL", "options": {"baseline": 0}},
            "baseline must be one of mask, pad, zero",
        ),
        (
            {"explainer": "integrated_gradients", "model": "MODEL", "options": {"steps": 0}},
            "steps must be a whole number from 1 to 1000",
        ),
        (
            {"explainer": "lime", "model": "MODEL", "options": {"samples": "many"}},
            "samples must be a whole number",
        ),
        ({"explainer": "gradient", "model": 999999}, "no model 999999 in this project"),
    ],
)
def test_a_run_that_cannot_explain_the_model_is_refused(study_export, model_row, body, says):
    body = {"name": "x", **{k: model_row.pk if v == "MODEL" else v for k, v in body.items()}}

    response = post_run(study_export, body)

    assert response.status_code == 400, response.content
    assert says in json.dumps(response.json())
    assert not ExplainerRun.objects.exists()


@pytest.mark.parametrize("body", [{"model": "one"}, {"model": 0}, {"options": [1, 2]}])
def test_bad_input_to_a_model_run_is_refused(study_export, model_row, body):
    response = post_run(study_export, {"name": "x", "explainer": "gradient", **body})

    assert response.status_code == 400
    assert not ExplainerRun.objects.exists()


def test_another_projects_model_is_not_found_in_this_one(study_export, model_row):
    from tests.factories import ProjectFactory

    theirs = ClassifierModel.objects.create(
        project=ProjectFactory(labels=["neg", "pos"]), name="theirs", folder="models/x"
    )

    response = post_run(study_export, {"name": "x", "explainer": "gradient", "model": theirs.pk})

    assert response.status_code == 400
    assert f"no model {theirs.pk} in this project" in response.json()["detail"]


@pytest.fixture
def sent(monkeypatch):
    """The signatures sent to the broker (the run's task) and to the workers (its chunks),
    with the queue each was given."""
    signatures = []
    real = job_queue.task_signature

    def recorded(name, *args, **kwargs):
        signature = real(name, *args, **kwargs)
        signatures.append(signature)
        return signature

    monkeypatch.setattr(job_queue, "task_signature", recorded)
    monkeypatch.setattr(runs, "task_signature", recorded)
    monkeypatch.setattr(runs, "chunks_go_to_workers", lambda chunks, **_: chunks > 1)
    FakeChord.sent = []
    monkeypatch.setattr("celery.chord", FakeChord)
    return signatures


def queues(signatures, task):
    return [s.options.get("queue") for s in signatures if s.task == task]


def test_a_models_run_and_its_chunks_go_to_the_explainer_queue(
    study_export, model_row, settings, sent, django_capture_on_commit_callbacks
):
    settings.RW_EXPLAINER_QUEUE = "gpu"
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3

    with django_capture_on_commit_callbacks(execute=True):
        explainer_run_start(
            export=study_export,
            acting_user=None,
            name="g",
            split="train",
            explainer="gradient",
            model=model_row,
        )
        explainer_run_start(
            export=study_export, acting_user=None, name="r", split="train", explainer="random"
        )

    assert queues(sent, "exports.tasks.explainer_run_execute") == ["gpu", None]
    model_chunks = queues(sent, "exports.tasks.explainer_run_chunk")[:3]
    assert model_chunks == ["gpu"] * 3
    # The assembly and the scoring need no model: they stay on the default queue.
    assert set(queues(sent, "exports.tasks.explainer_run_assemble")) == {None}


def test_without_the_setting_a_models_run_goes_to_the_default_queue(
    study_export, model_row, settings, sent, django_capture_on_commit_callbacks
):
    settings.RW_EXPLAINER_QUEUE = ""
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 3

    with django_capture_on_commit_callbacks(execute=True):
        explainer_run_start(
            export=study_export,
            acting_user=None,
            name="g",
            split="train",
            explainer="gradient",
            model=model_row,
        )

    assert queues(sent, "exports.tasks.explainer_run_execute") == [None]
    assert set(queues(sent, "exports.tasks.explainer_run_chunk")) == {None}


# ---------------------------------------------------------------- end to end on a tiny model


@pytest.fixture
def tiny_model(study_export, settings):
    """A tiny Transformers model trained on the export's train split, with its own labels
    (NEG, POS), registered for the project with the mapping to the project's."""
    pytest.importorskip("torch", reason="the models extra (torch) is not installed")
    from rationale_metrics.models import train_tiny_model

    dataset = runs._dataset_of(study_export)
    train = dataset.splits["train"]
    tokens = [
        [t for d in inst.resolved_docids() for t in dataset.documents[d].tokens] for inst in train
    ]
    labels = [MAPPING[inst.classification] for inst in train]
    folder = default_storage.path("models/tiny")
    train_tiny_model(tokens, labels, folder, seed=0)
    classifier_models.classifier_cache_clear()
    return classifier_models.classifier_model_register(
        project=study_export.project,
        acting_user=None,
        name="tiny",
        folder="tiny",
        label_mapping=MAPPING,
    )


def start(export, model, capture, explainer, **options) -> ExplainerRun:
    with capture(execute=True):
        created = explainer_run_start(
            export=export,
            acting_user=None,
            name=explainer,
            split="train",
            explainer=explainer,
            model=model,
            options=options,
        )
    return ExplainerRun.objects.get(pk=created.pk)


@pytest.mark.parametrize(
    ("explainer", "options"),
    [
        ("gradient", {}),
        ("integrated_gradients", {"steps": 8, "baseline": "pad"}),
        ("lime", {"samples": 40}),
    ],
)
def test_a_model_explainer_runs_end_to_end_chunked_as_whole(
    study_export, tiny_model, settings, django_capture_on_commit_callbacks, explainer, options
):
    done = []
    for size in (1000, 3):
        settings.EXPLAINER_RUN_CHUNK_INSTANCES = size
        done.append(
            start(
                study_export, tiny_model, django_capture_on_commit_callbacks, explainer, **options
            )
        )

    assert [r.status for r in done] == ["succeeded"] * 2, [r.error for r in done]
    # Chunked as whole, byte for byte: an instance's forward passes never share a batch
    # with another instance's (rationale_metrics.explain), so where the chunks are cut
    # cannot move a bit.
    assert predictions_of(done[0]) == predictions_of(done[1])
    assert [json.loads(line)["annotation_id"] for line in predictions_of(done[1]).splitlines()] == [
        json.loads(line)["annotation_id"] for line in predictions_of(done[0]).splitlines()
    ]
    lines = [json.loads(line) for line in predictions_of(done[0]).splitlines()]
    assert len(lines) == 8
    # Written in the project's labels, not the model's.
    assert {line["classification"] for line in lines} <= {"neg", "pos"}
    assert set(lines[0]["classification_scores"]) == {"neg", "pos"}
    assert "comprehensiveness" in done[0].scores["classification_scores"]
    assert done[0].model == tiny_model and done[0].options == options


def test_a_worker_process_loads_a_model_once_for_its_runs(
    study_export, tiny_model, settings, monkeypatch, django_capture_on_commit_callbacks
):
    import rationale_metrics.models as models_package

    loads = []
    real = models_package.load_classifier

    def counted(*args, **kwargs):
        loads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(models_package, "load_classifier", counted)
    settings.EXPLAINER_RUN_CHUNK_INSTANCES = 2

    first = start(study_export, tiny_model, django_capture_on_commit_callbacks, "gradient")
    second = start(study_export, tiny_model, django_capture_on_commit_callbacks, "attention_last")

    assert (first.status, second.status) == ("succeeded", "succeeded"), (first.error, second.error)
    assert len(loads) == 1


def test_a_model_retrained_into_its_folder_is_loaded_again(tiny_model, monkeypatch):
    """A worker keeps the model it loaded, until its files change (a retraining saved
    into the same folder): then it loads them again."""
    import os

    from django.core.files.storage import default_storage

    import rationale_metrics.models as models_package
    from exports.classifier_models import classifier_cache_clear, classifier_loaded

    loads = []
    real = models_package.load_classifier

    def counted(*args, **kwargs):
        loads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(models_package, "load_classifier", counted)
    classifier_cache_clear()

    first = classifier_loaded(tiny_model)
    assert classifier_loaded(tiny_model) is first
    config = default_storage.path(f"{tiny_model.folder}/config.json")
    later = os.stat(config).st_mtime + 60
    os.utime(config, (later, later))
    again = classifier_loaded(tiny_model)

    assert len(loads) == 2
    assert again is not first
