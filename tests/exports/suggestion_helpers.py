"""A project with a variant that shows model suggestions, from a finished run's file."""

import json

from django.core.files.base import ContentFile

from annotate.models import InstructionVariant, ProjectMembership, Role, WorkerVariantBinding
from exports.models import ExplainerRun, Export, RunStatus
from exports.suggestions import variant_suggestions_set
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory

# Each item's text has 14 tokens ("Item number N is a rather good film . It has a plot .");
# the run scores "rather" (5) and "good" (6) highest, then "plot" (12).
SCORES = [0.0] * 14
SCORES[5], SCORES[6], SCORES[12] = 0.9, 0.8, 0.5


def prediction_line(annotation_id: str, docid: str) -> str:
    return json.dumps(
        {
            "annotation_id": annotation_id,
            "rationales": [
                {
                    "docid": docid,
                    "hard_rationale_predictions": [{"start_token": 5, "end_token": 7}],
                    "soft_rationale_predictions": SCORES,
                }
            ],
        }
    )


def finished_run(project, *, items=4) -> ExplainerRun:
    export = Export.objects.create(project=project, params={}, status="succeeded")
    run = ExplainerRun.objects.create(export=export, name="bow", status=RunStatus.SUCCEEDED)
    lines = "\n".join(prediction_line(f"i{n}", f"d{n}") for n in range(items)) + "\n"
    run.predictions.save(f"run-{run.pk}.jsonl", ContentFile(lines.encode()), save=True)
    return run


def suggestion_project(*, k=None, items=4):
    """(project, shown variant, plain variant, run, worker on shown, worker on plain)."""
    project = make_project(items=items, variants=("plain", "shown"), quota=2)
    run = finished_run(project, items=items)
    shown = InstructionVariant.objects.get(project=project, name="shown")
    shown = variant_suggestions_set(variant=shown, run_id=run.pk, k=k)
    plain = InstructionVariant.objects.get(project=project, name="plain")
    workers = []
    for variant in (shown, plain):
        worker = UserFactory()
        ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
        WorkerVariantBinding.objects.create(project=project, worker=worker, variant=variant, seed=0)
        workers.append(worker)
    return project, shown, plain, run, workers[0], workers[1]
