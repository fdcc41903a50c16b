"""Model suggestions as an instruction factor: an admin lets a variant show a finished
explainer run's top-k tokens to its annotators (annotate.suggestion_selectors reads them).

Only the run's predictions file is read (soft token scores and hard rationales, the
ERASER predictions format), so a run of any explainer, bundled or uploaded, will do.
"""

from __future__ import annotations

from django.db import transaction

from annotate.models import InstructionVariant
from annotate.services import variant_update
from config.exceptions import ApplicationError
from exports.models import ExplainerRun, RunStatus
from exports.params import BENCHMARK_LAYOUT
from rationale_metrics.suggestions import default_k, instance_scores_read

MAX_SUGGESTION_K = 1000


def _run_checked(*, variant: InstructionVariant, run_id: int) -> ExplainerRun:
    run = (
        ExplainerRun.objects.select_related("export")
        .filter(pk=run_id, export__project=variant.project)
        .first()
    )
    if run is None:
        raise ApplicationError(
            f"run: this project has no explainer run {run_id}",
            extra={"field": "run", "code": "run_not_in_project"},
        )
    if run.status != RunStatus.SUCCEEDED or not run.predictions:
        raise ApplicationError(
            f"run: explainer run {run.name!r} has not finished; suggestions come from a "
            "finished run",
            extra={"field": "run", "code": "run_not_finished"},
        )
    if run.export.params.get("layout") == BENCHMARK_LAYOUT:
        raise ApplicationError(
            "run: suggestions are read from ERASER predictions; this run is in the "
            "fine-grained benchmark's format",
            extra={"field": "run", "code": "run_format"},
        )
    return run


@transaction.atomic
def variant_suggestions_set(
    *, variant: InstructionVariant, run_id: int | None, k: int | None = None
) -> InstructionVariant:
    """Show run `run_id`'s top `k` tokens to the variant's annotators (k by default the
    run's hard rationale size), or none with `run_id` None. A variant already used gets a
    new version, as any edit of it does."""
    if run_id is None:
        return variant_update(variant=variant, suggestions=None)
    run = _run_checked(variant=variant, run_id=run_id)
    with run.predictions.open("rb") as stream:
        instances = instance_scores_read(stream)
    if not any(i.soft or any(i.hard.values()) for i in instances.values()):
        raise ApplicationError(
            f"run: explainer run {run.name!r} gives no token scores or hard rationales",
            extra={"field": "run", "code": "run_without_rationales"},
        )
    chosen = default_k(instances) if k is None else k
    if not 1 <= chosen <= MAX_SUGGESTION_K:
        raise ApplicationError(
            f"k: must be from 1 to {MAX_SUGGESTION_K}", extra={"field": "k", "code": "k_range"}
        )
    return variant_update(
        variant=variant,
        suggestions={"run": run.pk, "k": chosen, "file": run.predictions.name},
    )
