"""Explainer runs: score a predictions file against an export, overall and per variant.

An export in the fine-grained benchmark's layout is scored with that benchmark's metrics
instead: its predictions file is the benchmark's, and the board shows MAP and New-P.

The scoring is `rationale_metrics`'; this module only feeds it the export's dataset, a
predictions file (uploaded, or written by a bundled explainer) and, for plausibility per
instruction variant, each variant's majority-vote rationales as the gold, and each
variant's annotations for the instruction study's top-k kappa plausibility.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import shutil
import tempfile
import uuid
from collections import defaultdict
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import DatabaseError, transaction
from django.db.models import F, IntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.benchmark_mapping import benchmark_task
from annotate.models import Assignment, AssignmentStatus, RationaleSpan
from annotate.services.background_jobs import job_fail_if_worker_lost
from config.exceptions import ApplicationError
from config.job_chunks import chunks_go_to_workers
from config.job_queue import task_send_on_commit, task_signature
from config.storage import local_path
from exports import storage as export_storage
from exports import work
from exports.aggregation import AnnotationRow, evidences_for
from exports.benchmark import benchmark_file_name
from exports.classifier_models import (
    MODELS_EXTRA_MISSING,
    classifier_loaded,
    model_explainer_names,
    models_extra_missing,
)
from exports.model_checks import prediction_relabelled
from exports.models import (
    ClassifierModel,
    ExplainerRun,
    ExplainerRunPart,
    Export,
    ExportStatus,
    RunStatus,
)
from exports.params import BENCHMARK_LAYOUT
from exports.services import WORK_PREFIX, ExportCancelled, _Pulse, work_dir
from exports.storage import open_stored_dataset
from rationale_metrics.agreement import TokenAnnotation, explainer_plausibility_by_variant
from rationale_metrics.benchmark_format import (
    BenchmarkInstance,
    read_benchmark_gold,
    read_benchmark_predictions,
)
from rationale_metrics.eraser import SPLITS, EraserDataset, Evidence, read_eraser_dataset
from rationale_metrics.explain import (
    EXPLAINERS,
    TextClassifier,
    explain_benchmark,
    explain_lines,
    rationale_budget,
    train_baseline,
)
from rationale_metrics.fine_grained import FineGrainedOptions, gold_ratios, score_fine_grained
from rationale_metrics.prediction_table import PredictionTable
from rationale_metrics.predictions import read_predictions
from rationale_metrics.problems import DataValidationError, ProblemList
from rationale_metrics.scoring import (
    ScoreOptions,
    SoftPerKey,
    score_predictions,
    soft_per_key_joined,
    soft_per_key_of_lines,
)

logger = logging.getLogger(__name__)
MAX_PROBLEMS_SHOWN = 200


def _dataset_of(export: Export) -> EraserDataset:
    with open_stored_dataset(export.file_path) as source:  # the storage, not a local path
        return read_eraser_dataset(source)


# The options of the model explainers that a run may set: a whole number's bounds, or the
# words a choice takes (the others keep rationale_metrics' defaults).
MODEL_EXPLAINER_OPTIONS = {
    # The baseline the path starts from: zero embeddings, or the pad or mask token's
    # (rationale_metrics.models.explainers.IG_BASELINES).
    "integrated_gradients": {"steps": (1, 1000), "baseline": frozenset({"zero", "pad", "mask"})},
    "lime": {"samples": (1, 20000)},
    "shap": {"samples": (1, 20000)},
}


@transaction.atomic
def explainer_run_start(
    *,
    export: Export,
    acting_user,
    name: str,
    split: str,
    upload=None,
    explainer: str | None = None,
    model: ClassifierModel | None = None,
    options: dict | None = None,
) -> ExplainerRun:
    """Start a run: score an uploaded predictions file, or explain the split with a bundled
    explainer on the bag-of-words baseline, or with a model explainer on a registered
    `model` (its `options`: integrated gradients' steps, LIME's and SHAP's samples)."""
    if export.status != ExportStatus.SUCCEEDED:
        raise ApplicationError(
            f"export {export.pk} is {export.status}; runs need a finished export"
        )
    if split not in SPLITS:
        raise ApplicationError(f"split: {split!r} is not one of {', '.join(SPLITS)}")
    if (upload is None) == (explainer is None):
        raise ApplicationError("give either a predictions file or a bundled explainer, not both")
    options = dict(options or {})
    if model is not None:
        _model_run_check(export, model, explainer, options)
    elif options:
        raise ApplicationError("options: only a model explainer's run takes options")
    elif explainer is not None and explainer not in EXPLAINERS:
        if explainer in _model_explainer_names():
            raise ApplicationError(
                f"model: the explainer {explainer!r} explains a registered model; choose one"
            )
        raise ApplicationError(
            f"explainer: {explainer!r} is not one of {', '.join(sorted(EXPLAINERS))}"
        )
    run = ExplainerRun.objects.create(
        export=export,
        name=name,
        split=split,
        explainer=explainer or "",
        model=model,
        options=options,
        created_by=acting_user,
    )
    if upload is not None:
        run.predictions.save(f"run-{run.pk}.jsonl", upload, save=True)
    task_send_on_commit(
        "exports.tasks.explainer_run_execute",
        run.pk,
        unsent=lambda: _run_unqueued(run.pk),
        queue=explainer_queue_of(run),
    )
    return run


def _model_explainer_names() -> tuple[str, ...]:
    try:
        return model_explainer_names()
    except ImportError:  # rationale_metrics installed without its models package
        return ()


def _model_run_check(
    export: Export, model: ClassifierModel, explainer: str | None, options: dict
) -> None:
    if model.project_id != export.project_id:
        raise ApplicationError(f"model: no model {model.pk} in this project")
    if explainer is None:
        raise ApplicationError("explainer: a run on a model names a model explainer")
    missing = models_extra_missing()
    if missing:
        raise ApplicationError(f"explainer: {MODELS_EXTRA_MISSING} (missing: {', '.join(missing)})")
    names = _model_explainer_names()
    if explainer not in names:
        raise ApplicationError(f"explainer: {explainer!r} is not one of {', '.join(names)}")
    if export.params.get("layout") == BENCHMARK_LAYOUT:
        raise ApplicationError(
            "model: model explainers run on exports in an ERASER layout; this export is in the "
            "fine-grained benchmark's"
        )
    allowed = MODEL_EXPLAINER_OPTIONS.get(explainer, {})
    for key, value in options.items():
        if key not in allowed:
            takes = ", ".join(allowed) or "none"
            raise ApplicationError(f"options: {explainer} takes no {key!r} (it takes {takes})")
        if isinstance(allowed[key], frozenset):
            if value not in allowed[key]:
                raise ApplicationError(
                    f"options: {key} must be one of {', '.join(sorted(allowed[key]))}"
                )
            continue
        low, high = allowed[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ApplicationError(f"options: {key} must be a whole number from {low} to {high}")


def explainer_queue_of(run: ExplainerRun) -> str | None:
    """The queue a run's explaining tasks go to: RW_EXPLAINER_QUEUE for a model's run (the
    workers that have the `models` extra, or a GPU), else the default one."""
    if run.model_id is not None and settings.RW_EXPLAINER_QUEUE:
        return settings.RW_EXPLAINER_QUEUE
    return None


def _on_queue(signature, queue: str | None):
    return signature.set(queue=queue) if queue else signature


def _model_of_run(run: ExplainerRun, dataset: EraserDataset) -> TextClassifier:
    """What explains the run: its registered model, loaded once per worker process, or the
    baseline trained on the export (seeded: every chunk trains the same one)."""
    if run.model_id is not None:
        return classifier_loaded(run.model)
    return train_baseline(dataset, _train_split(dataset))


def _explained_lines(run: ExplainerRun, model, dataset: EraserDataset, start, stop, k):
    """The predictions lines of the instances start..stop-1; a model's in the project's labels."""
    lines = explain_lines(
        model,
        dataset,
        split=run.split,
        start=start,
        stop=stop,
        explainer=run.explainer,
        k=k,
        options=dict(run.options) if run.options else None,
    )
    names = {m: p for p, m in ((run.model.label_mapping or {}) if run.model_id else {}).items()}
    if all(m == p for m, p in names.items()):
        yield from lines
        return
    for line in lines:
        yield json.dumps(prediction_relabelled(json.loads(line), names)) + "\n"


def _run_unqueued(run_id: int) -> None:
    """The run's task could not be queued, so it will never run: the row says why."""
    ExplainerRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.FAILED,
        finished_at=timezone.now(),
        error="the job queue was unavailable, so this run never started; nothing was scored; "
        "start it again",
    )


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
    (docs/reference/metrics.md#explainer-plausibility-per-variant) from its soft token scores.
    An item's tokens are those of its documents in order; an item whose prediction lacks soft
    scores for one of them is left out and counted."""
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


# ---------------------------------------------------------------- running a run


class _RunPulse(_Pulse):
    """A running run's heartbeat between instances, and its signal to stop (the run was
    failed as lost, or started again under another attempt)."""

    def alive(self) -> bool:
        return bool(
            ExplainerRun.objects.filter(
                pk=self.export_id, status=RunStatus.RUNNING, attempt=self.attempt
            ).update(heartbeat_at=timezone.now())
        )


def _train_split(dataset: EraserDataset) -> str:
    train = next(
        (s for s in ("train", "val") if len({i.classification for i in dataset.splits[s]}) > 1),
        None,
    )
    if train is None:
        raise ApplicationError(
            "the export has no split with two labelled classes to train the baseline on"
        )
    return train


def _end(run_id: int, attempt: str, **fields) -> ExplainerRun:
    """End the run if it still runs under this attempt; a run ended or superseded
    elsewhere is left as it is."""
    ExplainerRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, attempt=attempt).update(
        finished_at=timezone.now(), **fields
    )
    return ExplainerRun.objects.get(pk=run_id)


def _failure(exc: Exception, run_id: int, where: str = "") -> dict:
    """What a failed run records: the predictions' problems, or a clear error."""
    where = f" ({where})" if where else ""
    if isinstance(exc, DataValidationError):
        return {
            "status": RunStatus.FAILED,
            "problems": [p.as_dict() for p in exc.problems[:MAX_PROBLEMS_SHOWN]],
            "error": f"{len(exc.problems)} problem(s) in the predictions file; nothing was scored",
        }
    if isinstance(exc, ApplicationError | ValueError):
        return {"status": RunStatus.FAILED, "error": f"{exc}{where}; nothing was scored"}
    logger.exception("explainer run %s crashed%s", run_id, where)
    return {
        "status": RunStatus.FAILED,
        "error": f"internal error{where}: {type(exc).__name__}: {exc}; nothing was scored",
    }


def _discard_run_parts(run_id: int) -> None:
    ExplainerRunPart.objects.filter(run_id=run_id).delete()
    export_storage.remove(export_storage.run_parts_folder(run_id))


def explainer_run_execute(*, run_id: int) -> ExplainerRun:
    """Run a queued run. Safe to call twice: finished runs are left as they are, and a
    running one (its worker died) starts again from nothing under a new attempt.

    A bundled explainer's run is explained in chunks of instances: with a broker, the
    chunks go to the workers as a chord whose callback joins their predictions in order
    and scores them once (`explainer_run_assemble_run`); else the same functions run one
    after the other here. Each instance's explanation depends on its position only, so
    both ways give the same predictions file and the same scores. An uploaded predictions
    file, or a run in the benchmark's layout, is scored in one step."""
    with transaction.atomic():
        run = (
            ExplainerRun.objects.select_for_update()
            .select_related("export__project")
            .get(pk=run_id)
        )
        if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
            return run
        attempt = uuid.uuid4().hex
        run.status, run.attempt = RunStatus.RUNNING, attempt
        run.heartbeat_at = timezone.now()
        run.progress_done = run.progress_total = 0
        run.save(
            update_fields=["status", "attempt", "heartbeat_at", "progress_done", "progress_total"]
        )
    _discard_run_parts(run.pk)  # of an earlier attempt whose worker died
    if run.export.params.get("layout") == BENCHMARK_LAYOUT:
        return _score_in_one_step(run, attempt)
    if not run.explainer:
        return _scoring_start(run, attempt, first=0, predictions_name=run.predictions.name)
    try:
        dataset = _dataset_of(run.export)
        if run.model_id is None:
            _train_split(dataset)
        count = len(dataset.splits[run.split])
        k = rationale_budget(dataset, run.split)
    except Exception as exc:
        return _end(run.pk, attempt, **_failure(exc, run.pk))
    size = max(1, settings.EXPLAINER_RUN_CHUNK_INSTANCES)
    bounds = [(start, min(start + size, count)) for start in range(0, count, size)] or [(0, 0)]
    ExplainerRun.objects.filter(pk=run.pk, attempt=attempt).update(progress_total=count)
    if chunks_go_to_workers(len(bounds), enabled=settings.EXPLAINER_RUN_CHUNKED, job="run"):
        from celery import chord

        queue = explainer_queue_of(run)
        chord(
            _on_queue(
                task_signature(
                    "exports.tasks.explainer_run_chunk", run.pk, attempt, index, start, stop, k
                ),
                queue,
            )
            for index, (start, stop) in enumerate(bounds)
        )(task_signature("exports.tasks.explainer_run_assemble", run.pk, attempt, len(bounds)))
        return ExplainerRun.objects.get(pk=run.pk)
    # Here, one after the other: the dataset read and the model trained once, not per chunk.
    try:
        model = _model_of_run(run, dataset)
    except Exception as exc:
        return _end(run.pk, attempt, **_failure(exc, run.pk))
    for index, (start, stop) in enumerate(bounds):
        try:
            status = explainer_run_chunk_run(
                run_id=run.pk,
                attempt=attempt,
                index=index,
                start=start,
                stop=stop,
                k=k,
                trained=(dataset, model),
            )
        except DatabaseError as exc:
            status = _end(run.pk, attempt, **_failure(exc, run.pk, f"chunk {index}")).status
        if status != "written":
            break  # the run has ended; the assembly cleans up
    return explainer_run_assemble_run(run_id=run.pk, attempt=attempt, chunks=len(bounds))


def explainer_run_chunk_run(
    *,
    run_id: int,
    attempt: str,
    index: int,
    start: int,
    stop: int,
    k: int,
    trained: tuple[EraserDataset, TextClassifier] | None = None,
) -> str:
    """Explain the instances start..stop-1 of the run's split and store their predictions
    lines as the chunk's part. Safe to run twice: the part is stored under a new name and
    its row then points to it in one update; the old one is removed afterwards. `trained`
    is the export's dataset and the baseline trained on it, when the caller has them
    already (the chunks run one after the other in its process); training is seeded, so a
    chunk's own gives the same model.

    Returns "written", "stopped" (the run no longer runs under this attempt) or "failed".
    A database error is raised, for the task to retry."""
    run = ExplainerRun.objects.select_related("export__project", "model").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.RUNNING or run.attempt != attempt:
        return "stopped"
    pulse = _RunPulse(run_id, attempt)
    try:
        pulse.beat()
        if trained is None:
            dataset = _dataset_of(run.export)
            model = _model_of_run(run, dataset)
        else:
            dataset, model = trained
        with work.work_folder(work_dir(), f"{WORK_PREFIX}run-{run_id}-") as folder:
            local = folder / f"chunk-{index:05d}-{uuid.uuid4().hex[:8]}.jsonl"
            with open(local, "w") as handle:
                for line in _explained_lines(run, model, dataset, start, stop, k):
                    handle.write(line)
                    pulse.beat()
            stored = export_storage.run_part_save(run_id, attempt, local.name, local)
    except ExportCancelled:
        return "stopped"
    except DatabaseError:
        raise
    except Exception as exc:
        where = f"chunk {index}, instances {start}-{stop - 1}"
        return _end(run_id, attempt, **_failure(exc, run_id, where)).status
    if not _record_run_part(run_id, attempt, index, stored, stop - start):
        return "stopped"
    return "written"


def _record_run_part(run_id: int, attempt: str, index: int, file: dict, units: int) -> bool:
    """Point the chunk's row at its new part, if the run still runs under this attempt."""
    with transaction.atomic():
        current = (
            ExplainerRun.objects.select_for_update()
            .filter(pk=run_id, status=RunStatus.RUNNING, attempt=attempt)
            .exists()
        )
        if not current:
            export_storage.remove(file["name"])
            return False
        previous = (
            ExplainerRunPart.objects.select_for_update().filter(run_id=run_id, index=index).first()
        )
        ExplainerRunPart.objects.update_or_create(
            run_id=run_id,
            index=index,
            defaults={"attempt": attempt, "file": file, "units": units},
        )
    if previous is not None and previous.file.get("name") != file["name"]:
        export_storage.remove(previous.file["name"])  # a chunk run again
    done = (
        ExplainerRunPart.objects.filter(run_id=OuterRef("pk"), attempt=attempt)
        .values("run_id")
        .annotate(total=Sum("units"))
        .values("total")
    )
    # Counted from the rows, not added to: a chunk run twice counts once.
    ExplainerRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, attempt=attempt).update(
        progress_done=Coalesce(Subquery(done, output_field=IntegerField()), 0),
        heartbeat_at=timezone.now(),
    )
    return True


def explainer_run_assemble_run(*, run_id: int, attempt: str, chunks: int) -> ExplainerRun:
    """Join the chunks' predictions in order into the run's predictions file, then score it
    in chunks (`_scoring_start`). Safe to run twice: only a run still running under this
    attempt is assembled."""
    run = ExplainerRun.objects.select_related("export__project").get(pk=run_id)
    if run.status != RunStatus.RUNNING or run.attempt != attempt:
        if run.status != RunStatus.RUNNING:
            _discard_run_parts(run_id)
        return run
    saved = ""
    try:
        parts = dict(
            ExplainerRunPart.objects.filter(
                run_id=run_id, attempt=attempt, index__lt=chunks
            ).values_list("index", "file")
        )
        missing = [str(index) for index in range(chunks) if index not in parts]
        if missing:
            raise ApplicationError(
                f"{len(missing)} chunk(s) did not finish ({', '.join(missing[:5])}); "
                "start the run again"
            )
        reader = export_storage.StoredParts({f["name"]: f for f in parts.values()})
        with work.work_folder(work_dir(), f"{WORK_PREFIX}run-{run_id}-") as folder:
            joined = folder / f"run-{run.pk}-{run.explainer}.jsonl"
            with open(joined, "wb") as out:
                for index in range(chunks):
                    with reader.open(parts[index]["name"]) as part:
                        shutil.copyfileobj(part, out, 1 << 20)
            with open(joined, "rb") as handle:
                run.predictions.save(joined.name, File(handle), save=False)
            saved = run.predictions.name
    except Exception as exc:
        if saved:
            run.predictions.storage.delete(saved)
        done = _end(run_id, attempt, **_failure(exc, run_id, "assembling"))
        _discard_run_parts(run_id)
        return done
    # The scoring chunks' parts follow the explaining chunks' ones: progress counts both.
    return _scoring_start(run, attempt, first=chunks, predictions_name=saved)


# ---------------------------------------------------------------- scoring in chunks


def _scoring_start(
    run: ExplainerRun, attempt: str, *, first: int, predictions_name: str
) -> ExplainerRun:
    """Check the whole predictions file, then score it in chunks of lines: each chunk
    computes its lines' per-key soft figures, overall and per variant
    (`explainer_run_score_chunk_run`), and the last step joins them and publishes the
    scores (`explainer_run_score_assemble_run`). With a broker the chunks go to the workers
    as a chord, else they run here one after the other: both give the same scores, bit for
    bit, as one process scoring the whole file. Parts are numbered from `first`."""
    try:
        dataset = _dataset_of(run.export)
        lines = _predictions_of(run, dataset, predictions_name).lines.tolist()
    except Exception as exc:
        return _scoring_failed(run, attempt, predictions_name, _failure(exc, run.pk))
    count = len(lines)
    size = max(1, settings.EXPLAINER_RUN_CHUNK_INSTANCES)
    # Each chunk reads only its own lines of the file (checked whole above): the file's
    # lines start..stop-1, counted from 0, holding `size` predictions (blank lines skipped).
    bounds = [
        (lines[first] - 1, lines[min(first + size, count) - 1]) for first in range(0, count, size)
    ] or [(0, 0)]
    ExplainerRun.objects.filter(pk=run.pk, attempt=attempt).update(
        progress_total=F("progress_total") + count
    )
    chunks = [(first + i, start, stop) for i, (start, stop) in enumerate(bounds)]
    if chunks_go_to_workers(len(chunks), enabled=settings.EXPLAINER_RUN_CHUNKED, job="run"):
        from celery import chord

        chord(
            task_signature(
                "exports.tasks.explainer_run_score_chunk",
                run.pk,
                attempt,
                index,
                start,
                stop,
                predictions_name,
            )
            for index, start, stop in chunks
        )(
            task_signature(
                "exports.tasks.explainer_run_score_assemble",
                run.pk,
                attempt,
                first,
                len(chunks),
                predictions_name,
            )
        )
        return ExplainerRun.objects.get(pk=run.pk)
    for index, start, stop in chunks:
        try:
            status = explainer_run_score_chunk_run(
                run_id=run.pk,
                attempt=attempt,
                index=index,
                start=start,
                stop=stop,
                predictions_name=predictions_name,
                dataset=dataset,
            )
        except DatabaseError as exc:
            status = _end(run.pk, attempt, **_failure(exc, run.pk, f"chunk {index}")).status
        if status != "written":
            break  # the run has ended; the last step cleans up
    return explainer_run_score_assemble_run(
        run_id=run.pk,
        attempt=attempt,
        first=first,
        chunks=len(chunks),
        predictions_name=predictions_name,
        dataset=dataset,
    )


def _predictions_of(
    run: ExplainerRun, dataset: EraserDataset, name: str, *, local: bool = False
) -> PredictionTable:
    """The predictions file `name` of the storage (or, `local`, a work file) read and checked."""
    problems = ProblemList()
    with contextlib.ExitStack() as stack:
        path = name if local else stack.enter_context(local_path(name, run.predictions.storage))
        predictions = read_predictions(
            path,
            dataset=dataset,
            split=run.split,
            aopc_thresholds=list(ScoreOptions().aopc_thresholds),
            problems=problems,
        )
    problems.raise_if_any()
    return predictions


def _copy_lines(run: ExplainerRun, name: str, start: int, stop: int, out: Path) -> None:
    """Copy the stored file's lines start..stop-1 (counted from 0) to `out`."""
    with run.predictions.storage.open(name, "rb") as stream, open(out, "wb") as copy:
        for number, line in enumerate(stream):
            if number >= stop:
                break
            if number >= start:
                copy.write(line)


def _scoring_failed(run: ExplainerRun, attempt: str, predictions_name: str, failure: dict):
    done = _end(run.pk, attempt, **failure)
    if run.explainer and predictions_name:  # written by this run, never published
        run.predictions.storage.delete(predictions_name)
    _discard_run_parts(run.pk)
    return done


def _as_lists(per_key: dict[str, SoftPerKey]) -> dict[str, list[list[float]]]:
    return {kind: [figures.tolist() for figures in three] for kind, three in per_key.items()}


def _as_arrays(stored: dict[str, list[list[float]]]) -> dict[str, SoftPerKey]:
    return {
        kind: tuple(np.array(figures, dtype=np.float64) for figures in three)  # type: ignore[misc]
        for kind, three in stored.items()
    }


def explainer_run_score_chunk_run(
    *,
    run_id: int,
    attempt: str,
    index: int,
    start: int,
    stop: int,
    predictions_name: str,
    dataset: EraserDataset | None = None,
) -> str:
    """Compute the soft figures of each key of the predictions file's lines start..stop-1
    (counted from 0), over the split's gold and over each variant's, and store them as the
    chunk's part (JSON: a float's repr reads back as the same float). The chunk parses only
    its own lines. Safe to run twice, as an explaining chunk. `dataset` is the export's, when
    the caller has read it already (the chunks run one after the other in its process).

    Returns "written", "stopped" or "failed"; a database error is raised, to retry."""
    run = ExplainerRun.objects.select_related("export__project").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.RUNNING or run.attempt != attempt:
        return "stopped"
    try:
        _RunPulse(run_id, attempt).beat()
        if dataset is None:
            dataset = _dataset_of(run.export)
        by_variant = _variant_annotations(run.export, dataset, run.split)
        with work.work_folder(work_dir(), f"{WORK_PREFIX}run-{run_id}-") as folder:
            part: dict = {"overall": {}, "variants": {v: {} for v in by_variant}, "units": 0}
            if stop > start:
                mine = folder / f"lines-{index:05d}.jsonl"
                _copy_lines(run, predictions_name, start, stop, mine)
                predictions = _predictions_of(run, dataset, str(mine), local=True)
                rows = len(predictions)
                part = {
                    "overall": _as_lists(
                        soft_per_key_of_lines(dataset, run.split, predictions, 0, rows)
                    ),
                    "variants": {
                        variant: _as_lists(
                            soft_per_key_of_lines(gold, run.split, predictions, 0, rows)
                        )
                        for variant, gold in _variant_gold(dataset, run.split, by_variant).items()
                    },
                    "units": rows,
                }
            local = folder / f"score-{index:05d}-{uuid.uuid4().hex[:8]}.json"
            local.write_text(json.dumps(part))
            stored = export_storage.run_part_save(run_id, attempt, local.name, local)
    except ExportCancelled:
        return "stopped"
    except DatabaseError:
        raise
    except Exception as exc:
        where = f"scoring chunk {index}, lines {start + 1}-{stop}"
        return _end(run_id, attempt, **_failure(exc, run_id, where)).status
    if not _record_run_part(run_id, attempt, index, stored, part["units"]):
        return "stopped"
    return "written"


def explainer_run_score_assemble_run(
    *,
    run_id: int,
    attempt: str,
    first: int,
    chunks: int,
    predictions_name: str,
    dataset: EraserDataset | None = None,
) -> ExplainerRun:
    """Join the scoring chunks' parts in order, score the run with them and publish the
    scores and the predictions file in one update, then remove the parts. Safe to run
    twice: only a run still running under this attempt is scored. `dataset` as for a
    chunk."""
    run = ExplainerRun.objects.select_related("export__project").get(pk=run_id)
    if run.status != RunStatus.RUNNING or run.attempt != attempt:
        if run.explainer and run.predictions.name != predictions_name:
            run.predictions.storage.delete(predictions_name)  # joined, never published
        if run.status != RunStatus.RUNNING:
            _discard_run_parts(run_id)
        return run
    try:
        indexes = range(first, first + chunks)
        parts = dict(
            ExplainerRunPart.objects.filter(
                run_id=run_id, attempt=attempt, index__in=list(indexes)
            ).values_list("index", "file")
        )
        missing = [str(index - first) for index in indexes if index not in parts]
        if missing:
            raise ApplicationError(
                f"{len(missing)} scoring chunk(s) did not finish ({', '.join(missing[:5])}); "
                "start the run again"
            )
        reader = export_storage.StoredParts({f["name"]: f for f in parts.values()})
        stored = []
        for index in indexes:
            with reader.open(parts[index]["name"]) as part:
                stored.append(json.load(part))
        if dataset is None:
            dataset = _dataset_of(run.export)
        scored = _scores_of(run, dataset, predictions_name, stored)
    except Exception as exc:
        return _scoring_failed(run, attempt, predictions_name, _failure(exc, run_id, "scoring"))
    published = ExplainerRun.objects.filter(
        pk=run_id, status=RunStatus.RUNNING, attempt=attempt
    ).update(
        status=RunStatus.SUCCEEDED,
        predictions=predictions_name,
        progress_done=F("progress_total"),
        finished_at=timezone.now(),
        **scored,
    )
    if not published and run.explainer:  # ended, or started again, while it was scored
        run.predictions.storage.delete(predictions_name)
    _discard_run_parts(run_id)
    return ExplainerRun.objects.get(pk=run_id)


def explainer_run_fail(*, run_id: int, attempt: str, error: str) -> ExplainerRun:
    return _end(run_id, attempt, status=RunStatus.FAILED, error=error)


def explainer_run_fail_if_worker_lost(run: ExplainerRun) -> ExplainerRun:
    """A running run whose worker stopped reporting is marked failed; nothing was scored,
    since the scores are written in the run's last step."""
    return job_fail_if_worker_lost(
        run,
        error=(
            f"the worker running this run stopped (no report for "
            f"{settings.JOB_HEARTBEAT_TIMEOUT_SECONDS} s); nothing was scored; start it again"
        ),
    )


def export_runs_fail_if_worker_lost(*, export: Export) -> int:
    """How many of the export's running runs were failed as lost: what the list of runs
    checks before it shows them."""
    running = export.runs.filter(status=RunStatus.RUNNING)
    return sum(explainer_run_fail_if_worker_lost(r).status == RunStatus.FAILED for r in running)


def _scores_of(
    run: ExplainerRun, dataset: EraserDataset, predictions_name: str, parts: list[dict] | None
) -> dict:
    """The run's predictions scored over the whole split, overall and per variant. `parts`,
    the scoring chunks' in order, give each key's soft figures; None computes them here."""
    predictions = _predictions_of(run, dataset, predictions_name)
    by_variant = _variant_annotations(run.export, dataset, run.split)
    kappa_top_k = _variant_explainer_plausibility(dataset, run.split, by_variant, predictions)

    def soft(variant: str | None):
        if parts is None:
            return None
        chosen = [
            p["overall"] if variant is None else p["variants"].get(variant, {}) for p in parts
        ]
        return soft_per_key_joined([_as_arrays(c) for c in chosen])

    return {
        "scores": score_predictions(dataset, run.split, predictions, soft_per_key=soft(None)),
        "plausibility_by_variant": {
            variant: {
                **_plausibility(
                    score_predictions(
                        gold,
                        run.split,
                        predictions,
                        ScoreOptions(extensions=False),
                        soft_per_key=soft(variant),
                    )
                ),
                "items": len(gold.splits[run.split]),
                "kappa_top_k": kappa_top_k[variant],
            }
            for variant, gold in _variant_gold(dataset, run.split, by_variant).items()
        },
    }


def _score_in_one_step(run: ExplainerRun, attempt: str) -> ExplainerRun:
    """A run on an export in the benchmark's layout, scored by the benchmark's metrics."""
    try:
        scored = {"scores": _fine_grained_scores(run)}
    except Exception as exc:
        return _end(run.pk, attempt, **_failure(exc, run.pk))
    return _end(
        run.pk, attempt, status=RunStatus.SUCCEEDED, predictions=run.predictions.name, **scored
    )


def explainer_run_sweep() -> dict:
    """What killed runs leave (the export sweep calls it): running runs whose worker went
    silent are failed, and the stored chunks of runs no longer running are removed."""
    lost = 0
    for run in ExplainerRun.objects.filter(status=RunStatus.RUNNING):
        lost += explainer_run_fail_if_worker_lost(run).status == RunStatus.FAILED
    ended = ExplainerRunPart.objects.exclude(run__status=RunStatus.RUNNING)
    for run_id in sorted(set(ended.values_list("run_id", flat=True))):
        _discard_unpublished_predictions(ExplainerRun.objects.get(pk=run_id))
        _discard_run_parts(run_id)
    return {"lost_runs": lost}


def _discard_unpublished_predictions(run: ExplainerRun) -> None:
    """A bundled explainer's joined predictions whose scoring never ended (its worker was
    lost): they are named after the run, and the row does not point to them."""
    if not run.explainer:
        return
    storage = run.predictions.storage
    try:
        _, files = storage.listdir("runs")
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in files:
        if (
            name.startswith(f"run-{run.pk}-{run.explainer}")
            and f"runs/{name}" != run.predictions.name
        ):
            storage.delete(f"runs/{name}")
