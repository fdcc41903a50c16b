"""`manage.py demo_model`: a tiny model trained on a project's data, registered, and a run
of each model explainer, refused clearly without the models extra."""

import pytest
from django.core.management import CommandError, call_command

from exports import demo_model
from exports.models import ClassifierModel, ExplainerRun
from tests.exports.test_model_runs import study_export  # noqa: F401 - fixture


def test_without_the_models_extra_the_demo_says_so(study_export, monkeypatch):  # noqa: F811
    monkeypatch.setattr(demo_model, "models_extra_missing", lambda: ["torch"])

    with pytest.raises(CommandError, match=r"need the 'models' extra.*missing: torch"):
        call_command("demo_model", "--force", "--project", str(study_export.project_id))

    assert not ClassifierModel.objects.exists()


def test_without_a_demo_project_the_demo_says_what_to_run(db):
    with pytest.raises(CommandError, match="run demo_setup first"):
        call_command("demo_model", "--force")


def test_the_demo_trains_registers_and_explains_once(
    study_export,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    pytest.importorskip("torch", reason="the models extra (torch) is not installed")
    project = study_export.project.pk

    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_model", "--force", "--project", str(project))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_model", "--force", "--project", str(project))

    model = ClassifierModel.objects.get()
    assert (model.name, model.label_mapping) == ("demo tiny model", {"neg": "neg", "pos": "pos"})
    runs = ExplainerRun.objects.filter(model=model)
    assert sorted(runs.values_list("explainer", flat=True)) == sorted(
        demo_model.model_explainer_names()
    )
    assert {(r.status, r.export_id, r.split) for r in runs} == {
        ("succeeded", study_export.pk, "test")
    }, [r.error for r in runs]
