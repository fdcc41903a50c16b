"""The demo's whole path with a real model: a tiny Transformers model trained on a project's
own data (a configuration and a tokenizer trained on that data: nothing is downloaded),
registered for the project, and a run of each model explainer started on its test split.
`manage.py demo_model` calls it; it needs the `models` extra."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.test.utils import override_settings

from annotate.models import Project
from config.exceptions import ApplicationError
from exports import services
from exports.classifier_models import (
    MODELS_EXTRA_MISSING,
    classifier_model_register,
    model_explainer_names,
    models_extra_missing,
)
from exports.models import ClassifierModel, ExplainerRun, Export, ExportStatus
from exports.runs import explainer_run_start
from exports.storage import open_stored_dataset
from rationale_metrics.eraser import EraserDataset, read_eraser_dataset

DEMO_MODEL_NAME = "demo tiny model"
ERASER_LAYOUTS = ("docs", "docs.jsonl")
# Small enough for the demo's seconds, large enough to show what each option does.
DEMO_OPTIONS = {
    "integrated_gradients": {"steps": 20},
    "lime": {"samples": 200},
    "shap": {"samples": 200},
}


@dataclass
class DemoModelResult:
    export: Export
    model: ClassifierModel
    trained: bool
    runs: list[ExplainerRun]


def _export_finished(project: Project, acting_user) -> Export:
    """The project's newest finished export in the ERASER layout, or one made here, in this
    process (the runs need it finished before they start)."""
    finished = Export.objects.filter(project=project, status=ExportStatus.SUCCEEDED)
    for found in finished.order_by("-finished_at", "-pk"):
        if found.params.get("layout", "docs") in ERASER_LAYOUTS:
            return found
    export = services.export_start(project=project, acting_user=acting_user, raw_params={})
    with override_settings(EXPORT_CHUNKED=False):
        export = services.export_run(export_id=export.pk)
    if export.status != ExportStatus.SUCCEEDED:
        raise ApplicationError(f"the demo's export {export.pk} failed: {export.error}")
    return export


def _training_data(dataset: EraserDataset) -> tuple[list[list[str]], list[str], list[str | None]]:
    instances = [i for split in ("train", "val") for i in dataset.splits[split] if i.classification]
    tokens = [
        [t for docid in inst.resolved_docids() for t in dataset.documents[docid].tokens]
        for inst in instances
    ]
    return tokens, [i.classification for i in instances], [i.query for i in instances]


def _trained_into_storage(dataset: EraserDataset, folder: str, seed: int) -> None:
    from rationale_metrics.models import train_tiny_model

    tokens, labels, queries = _training_data(dataset)
    if len(set(labels)) < 2:
        raise ApplicationError("the export's train and val splits need two labelled classes")
    queries_given = queries if any(queries) else None
    try:
        local = Path(default_storage.path(folder))
    except NotImplementedError:
        local = None
    if local is not None:
        train_tiny_model(tokens, labels, local, queries=queries_given, seed=seed)
        return
    with tempfile.TemporaryDirectory(prefix="demo-model-") as tmp:
        train_tiny_model(tokens, labels, Path(tmp), queries=queries_given, seed=seed)
        for path in sorted(Path(tmp).rglob("*")):
            if path.is_file():
                with open(path, "rb") as handle:
                    default_storage.save(
                        f"{folder}/{path.relative_to(tmp).as_posix()}", File(handle)
                    )


def demo_model_prepare(
    *, project: Project, acting_user, split: str = "test", seed: int = 0, retrain: bool = False
) -> DemoModelResult:
    """Train (unless it is there), register and explain: each model explainer's run on the
    split is started unless the model has one already."""
    missing = models_extra_missing()
    if missing:
        raise ApplicationError(f"{MODELS_EXTRA_MISSING} (missing: {', '.join(missing)})")
    export = _export_finished(project, acting_user)
    model = ClassifierModel.objects.filter(project=project, name=DEMO_MODEL_NAME).first()
    trained = False
    if model is None or retrain:
        relative = f"demo/project-{project.pk}"
        folder = f"{settings.RW_MODELS_ROOT.strip('/')}/{relative}"
        with open_stored_dataset(export.file_path) as source:
            dataset = read_eraser_dataset(source)
        _trained_into_storage(dataset, folder, seed)
        trained = True
        if model is None:
            model = classifier_model_register(
                project=project, acting_user=acting_user, name=DEMO_MODEL_NAME, folder=relative
            )
    started = []
    for explainer in model_explainer_names():
        if (
            model.runs.filter(explainer=explainer, export=export, split=split).exists()
            and not retrain
        ):
            continue
        started.append(
            explainer_run_start(
                export=export,
                acting_user=acting_user,
                name=f"{DEMO_MODEL_NAME}: {explainer}",
                split=split,
                explainer=explainer,
                model=model,
                options=DEMO_OPTIONS.get(explainer, {}),
            )
        )
    return DemoModelResult(export=export, model=model, trained=trained, runs=started)
