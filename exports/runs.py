"""Explainer runs: score a predictions file against an export, overall and per variant.

An export in the fine-grained benchmark's layout is scored with that benchmark's metrics
instead: its predictions file is the benchmark's, and the board shows MAP and New-P.

The scoring is `rationale_metrics`'; this module only feeds it the export's dataset, a
predictions file (uploaded, or written by a bundled explainer) and, for plausibility per
instruction variant, each variant's majority-vote rationales as the gold, and each
variant's annotations for the instruction study's top-k kappa plausibility.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from annotate.benchmark_mapping import benchmark_task
from annotate.models import Assignment, AssignmentStatus, RationaleSpan
from config.exceptions import ApplicationError
from config.storage import local_path
from exports.aggregation import AnnotationRow, evidences_for
from exports.benchmark import benchmark_file_name
from exports.models import ExplainerRun, Export, ExportStatus, RunStatus
from exports.params import BENCHMARK_LAYOUT
from exports.storage import open_stored_dataset
from rationale_metrics.agreement import TokenAnnotation, explainer_plausibility_by_variant
from rationale_metrics.benchmark_format import (
    BenchmarkInstance,
    read_benchmark_gold,
    read_benchmark_predictions,
)
from rationale_metrics.eraser import SPLITS, EraserDataset, Evidence, read_eraser_dataset
from rationale_metrics.explain import EXPLAINERS, explain_benchmark, explain_split
from rationale_metrics.fine_grained import FineGrainedOptions, gold_ratios, score_fine_grained
from rationale_metrics.prediction_table import PredictionTable
from rationale_metrics.predictions import read_predictions
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.scoring import ScoreOptions, score_predictions

logger = logging.getLogger(__name__)
MAX_PROBLEMS_SHOWN = 200


def _dataset_of(export: Export) -> EraserDataset:
    with open_stored_dataset(export.file_path) as source:  # the storage, not a local path
        return read_eraser_dataset(source)


@transaction.atomic
def explainer_run_start(
    *, export: Export, acting_user, name: str, split: str, upload=None, explainer: str | None = None
) -> ExplainerRun:
    if export.status != ExportStatus.SUCCEEDED:
        raise ApplicationError(
            f"export {export.pk} is {export.status}; runs need a finished export"
        )
    if split not in SPLITS:
        raise ApplicationError(f"split: {split!r} is not one of {', '.join(SPLITS)}")
    if (upload is None) == (explainer is None):
        raise ApplicationError("give either a predictions file or a bundled explainer, not both")
    if explainer is not None and explainer not in EXPLAINERS:
        raise ApplicationError(
            f"explainer: {explainer!r} is not one of {', '.join(sorted(EXPLAINERS))}"
        )
    run = ExplainerRun.objects.create(
        export=export, name=name, split=split, explainer=explainer or "", created_by=acting_user
    )
    if upload is not None:
        run.predictions.save(f"run-{run.pk}.jsonl", upload, save=True)
    from exports.tasks import explainer_run_execute

    transaction.on_commit(lambda: explainer_run_execute.delay(run.pk))
    return run


def _variant_annotations(
    export: Export, dataset: EraserDataset, split: str
) -> dict[str, dict[str, list[AnnotationRow]]]:
    """Per instruction variant, per item of the split: the submitted annotations, each at
    its newest round (a resubmission supersedes the round sent back, as in the export)."""
    instances = {inst.key: inst for inst in dataset.splits[split]}
    rows = (
        Assignment.objects.filter(
            item__project=export.project,
            item__annotation_id__in=list(instances),
            status=AssignmentStatus.SUBMITTED,
            annotation__revisions__isnull=True,
        )
        .values_list(
            "item__annotation_id",
            "variant__name",
            "annotation__pk",
            "worker_id",
            "annotation__time_spent_ms",
        )
        .order_by("pk")
    )
    rows = list(rows)
    sets: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    spans = RationaleSpan.objects.filter(
        rationale_set__annotation_id__in=[r[2] for r in rows]
    ).values_list(
        "rationale_set__annotation_id",
        "rationale_set__position",
        "document__docid",
        "start_token",
        "end_token",
    )
    for annotation_id, position, docid, start, end in spans.order_by(
        "rationale_set__annotation_id", "position"
    ):
        sets[annotation_id][position].append((docid, start, end))
    by_variant: dict[str, dict[str, list[AnnotationRow]]] = defaultdict(lambda: defaultdict(list))
    for key, variant, annotation_id, worker, time_ms in rows:
        chosen = sets.get(annotation_id, {})
        by_variant[variant][key].append(
            AnnotationRow(worker, variant, time_ms, [chosen[p] for p in sorted(chosen)])
        )
    return by_variant


def _variant_gold(
    dataset: EraserDataset, split: str, by_variant: dict[str, dict[str, list[AnnotationRow]]]
) -> dict[str, EraserDataset]:
    """Per instruction variant: the split with each item's majority-vote evidence of that
    variant's annotators as its gold rationale (items that variant did not annotate drop out)."""
    instances = {inst.key: inst for inst in dataset.splits[split]}
    golds = {}
    for variant, items in sorted(by_variant.items()):
        gold_instances = []
        for key, item_annotations in items.items():
            groups = [
                [Evidence(ev.docid, ev.start_token, ev.end_token) for ev in group]
                for group in evidences_for(item_annotations, "majority")
            ]
            gold_instances.append(dataclasses.replace(instances[key], evidences=groups))
        golds[variant] = EraserDataset(
            documents=dataset.documents,
            splits={s: (gold_instances if s == split else []) for s in SPLITS},
            docs_layout=dataset.docs_layout,
        )
    return golds


def _soft_scores_by_item(predictions: PredictionTable) -> dict[str, dict[str, np.ndarray]]:
    """Each prediction line's soft token scores per document: {annotation_id: {docid: scores}}."""
    soft = predictions.soft_tokens
    if soft is None:
        return {}
    found: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
    starts = soft.starts
    for row, (line, docid) in enumerate(
        zip(predictions.rationale_line.tolist(), predictions.rationale_docids, strict=True)
    ):
        found[predictions.keys[line]][docid] = soft.values[
            starts[row] : starts[row] + soft.lengths[row]
        ]
    return found


def _variant_explainer_plausibility(
    dataset: EraserDataset,
    split: str,
    by_variant: dict[str, dict[str, list[AnnotationRow]]],
    predictions: PredictionTable,
) -> dict[str, dict]:
    """The instruction study's plausibility of the run's explainer per variant
    (METRICS.md section 6) from its soft token scores. An item's tokens are those of its
    documents in order; an item whose prediction lacks soft scores for one of them is left
    out and counted."""
    soft = _soft_scores_by_item(predictions)
    instances = {inst.key: inst for inst in dataset.splits[split]}
    annotations: list[TokenAnnotation] = []
    scores: dict[str, np.ndarray] = {}
    for variant, items in by_variant.items():
        for key, rows in items.items():
            docids = instances[key].resolved_docids()
            sizes = [dataset.documents[d].n_tokens for d in docids]
            offsets = dict(zip(docids, np.cumsum([0, *sizes[:-1]]).tolist(), strict=True))
            given = soft.get(key, {})
            if key not in scores and all(d in given for d in docids):
                scores[key] = np.concatenate([given[d] for d in docids])
            for row in rows:
                tokens = frozenset(
                    offsets[docid] + t
                    for docid, chosen in row.tokens().items()
                    if docid in offsets
                    for t in chosen
                )
                annotations.append(
                    TokenAnnotation(key, str(row.worker_id), variant, sum(sizes), tokens)
                )
    found = explainer_plausibility_by_variant(annotations, scores)["variants"]
    if predictions.soft_tokens is None:
        reason = "the predictions give no soft token scores"
        return {variant: {"plausibility": None, "reason": reason} for variant in found}
    return found


def _plausibility(scores: dict) -> dict:
    token = scores.get("token_prf", {}).get("instance_macro", {})
    iou = (scores.get("iou_scores") or [{}])[0].get("macro", {})
    soft = scores.get("token_soft_metrics", {})
    return {"token_f1": token.get("f1"), "iou_f1": iou.get("f1"), "auprc": soft.get("auprc")}


def _benchmark_gold(export: Export) -> tuple[list[BenchmarkInstance], str, str]:
    """The gold instances of an export in the benchmark's layout, with its task and language."""
    project = export.project
    task = benchmark_task(project.task_type)
    name = benchmark_file_name(project)
    with open_stored_dataset(export.file_path) as source:  # the storage, not a local path
        if not source.exists(name):
            raise ApplicationError(f"the export holds no {name}")
        with source.open(name) as stream:
            gold = read_benchmark_gold(stream, task, project.language, label=source.display(name))
    return gold, task, project.language


def _fine_grained_scores(run: ExplainerRun) -> dict:
    """Score a run on an export in the benchmark's layout with the benchmark's own metrics
    (token F1, its IoU figure, MAP, New-P). Each predicted rationale is cut at the data's
    own rationale length ratio, as the benchmark does for its published ratios."""
    gold, task, language = _benchmark_gold(run.export)
    ratios = gold_ratios(gold)
    if run.explainer:
        with tempfile.TemporaryDirectory(prefix="run-") as scratch:
            out = Path(scratch) / f"run-{run.pk}-{run.explainer}.jsonl"
            explain_benchmark(gold, task=task, explainer=run.explainer, out_path=out, ratios=ratios)
            run.predictions.save(out.name, ContentFile(out.read_bytes()), save=False)
    problems = ProblemList()
    with run.predictions.open("rb") as stream:
        predictions = read_benchmark_predictions(
            stream, task, gold=gold, label=Path(run.predictions.name).name, problems=problems
        )
    problems.raise_if_any()
    scores = score_fine_grained(gold, predictions, FineGrainedOptions(ratios=ratios))
    # Counts and options are shown with the run, not as metric columns.
    details = {
        "counts": scores.pop("counts"),
        "options": {"task": task, "language": language, "ratio": list(ratios)},
    }
    return {**scores, "details": details}


def explainer_run_execute(*, run_id: int) -> ExplainerRun:
    """Score a run. Safe to call twice: finished runs are left as they are."""
    with transaction.atomic():
        run = (
            ExplainerRun.objects.select_for_update()
            .select_related("export__project")
            .get(pk=run_id)
        )
        if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
            return run
        run.status = RunStatus.RUNNING
        run.save(update_fields=["status"])
    try:
        if run.export.params.get("layout") == BENCHMARK_LAYOUT:
            run.scores = _fine_grained_scores(run)
            run.status = RunStatus.SUCCEEDED
            run.finished_at = timezone.now()
            run.save()
            return run
        dataset = _dataset_of(run.export)
        if run.explainer:
            train = next(
                (
                    s
                    for s in ("train", "val")
                    if len({i.classification for i in dataset.splits[s]}) > 1
                ),
                None,
            )
            if train is None:
                raise ApplicationError(
                    "the export has no split with two labelled classes to train the baseline on"
                )
            with tempfile.TemporaryDirectory(prefix="run-") as scratch:
                out = Path(scratch) / f"run-{run.pk}-{run.explainer}.jsonl"
                explain_split(
                    dataset,
                    split=run.split,
                    explainer=run.explainer,
                    out_path=out,
                    train_split=train,
                )
                run.predictions.save(out.name, ContentFile(out.read_bytes()), save=False)
        problems = ProblemList()
        with local_path(run.predictions.name, run.predictions.storage) as predictions_path:
            predictions = read_predictions(
                predictions_path,
                dataset=dataset,
                split=run.split,
                aopc_thresholds=list(ScoreOptions().aopc_thresholds),
                problems=problems,
            )
        problems.raise_if_any()
        run.scores = score_predictions(dataset, run.split, predictions)
        by_variant = _variant_annotations(run.export, dataset, run.split)
        kappa_top_k = _variant_explainer_plausibility(dataset, run.split, by_variant, predictions)
        run.plausibility_by_variant = {
            variant: {
                **_plausibility(
                    score_predictions(gold, run.split, predictions, ScoreOptions(extensions=False))
                ),
                "items": len(gold.splits[run.split]),
                "kappa_top_k": kappa_top_k[variant],
            }
            for variant, gold in _variant_gold(dataset, run.split, by_variant).items()
        }
        run.status = RunStatus.SUCCEEDED
    except DataValidationError as exc:
        run.status = RunStatus.FAILED
        run.problems = [p.as_dict() for p in exc.problems[:MAX_PROBLEMS_SHOWN]]
        run.error = f"{len(exc.problems)} problem(s) in the predictions file; nothing was scored"
    except (ApplicationError, ValueError) as exc:
        run.status = RunStatus.FAILED
        run.error = str(exc)
    except Exception as exc:
        logger.exception("explainer run %s crashed", run.pk)
        run.status = RunStatus.FAILED
        run.error = f"internal error: {type(exc).__name__}: {exc}"
    run.finished_at = timezone.now()
    run.save()
    return run
