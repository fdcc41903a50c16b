import dataclasses

from django.db.models import QuerySet

from annotate.models import ImportJob, Item, JobStatus, Project, RationaleSet, item_not_deleted
from config.exceptions import ApplicationError, NotFoundError
from exports.models import ExplainerRun, Export, ExportStatus, ProjectDatasheet
from exports.params import ExportParams, export_params_from
from qc.models import Review


def export_list(*, project: Project) -> QuerySet[Export]:
    return Export.objects.filter(project=project).select_related("created_by")


def export_get(*, project: Project, export_id: int) -> Export:
    export = Export.objects.filter(project=project, pk=export_id).first()
    if export is None:
        raise NotFoundError("export not found")
    return export


def explainer_run_list(*, export: Export) -> QuerySet[ExplainerRun]:
    return export.runs.select_related("model")


# The comparison reads at most this many runs, the newest.
RUN_COMPARE_MAX = 500


def explainer_run_compare(
    *,
    project: Project,
    model: str | None = None,
    explainer: str | None = None,
    split: str | None = None,
) -> list[ExplainerRun]:
    """The project's finished runs, newest first, over all its exports: those on the model
    with this id (`model`, or "baseline": the bag-of-words runs and uploads), of
    `explainer`, on `split`."""
    runs = ExplainerRun.objects.filter(
        export__project=project, status=JobStatus.SUCCEEDED
    ).select_related("export", "model")
    if model == "baseline":
        runs = runs.filter(model__isnull=True)
    elif model is not None:
        runs = runs.filter(model_id=int(model))
    if explainer:
        runs = runs.filter(explainer=explainer)
    if split:
        runs = runs.filter(split=split)
    return list(runs.order_by("-created_at", "-pk")[:RUN_COMPARE_MAX])


def _same_dataset(stored: dict, wanted: ExportParams) -> bool:
    """Whether an export made with the `stored` parameters holds the dataset `wanted` asks
    for: the archive format does not change the sheet. Parameters stored before a key
    existed take its default, as the export did."""
    try:
        made = export_params_from(stored)
    except ApplicationError:
        return False
    return dataclasses.replace(made, archive=wanted.archive) == wanted


def export_latest_finished_with_params(*, project: Project, params: ExportParams) -> Export | None:
    """The project's most recently finished export of the dataset these parameters ask for,
    with its datasheet; None if there is none."""
    finished = (
        Export.objects.filter(project=project, status=ExportStatus.SUCCEEDED)
        .filter(datasheet__isnull=False)
        .order_by("-finished_at", "-pk")
        .only("pk", "params")
    )
    for export in finished:
        if _same_dataset(export.params, params):
            return Export.objects.select_related("created_by").get(pk=export.pk)
    return None


# ---------------------------------------------------------------- for datasheets


def datasheet_info_get(*, project: Project) -> ProjectDatasheet:
    """What the admins stated about the project; an unsaved empty one when nothing yet."""
    found = ProjectDatasheet.objects.filter(project=project).select_related("updated_by").first()
    return found or ProjectDatasheet(project=project)


def reference_rationale_sources(*, project: Project) -> dict:
    """Where the project's imported reference rationales came from: each finished import
    job's file and format, and how many reference sets the project holds in all (an import
    from the command line keeps no job, so the two can differ)."""
    jobs = ImportJob.objects.filter(
        project=project, status=JobStatus.SUCCEEDED, deleted_at__isnull=True
    ).order_by("finished_at", "pk")
    return {
        "imports": [
            {
                "source_name": job.source_name,
                "source_format": job.source_format,
                "finished_at": job.finished_at,
                "items_created": job.summary.get("items_created"),
                "reference_sets_created": job.summary.get("reference_sets_created"),
            }
            for job in jobs
        ],
        "reference_sets": RationaleSet.objects.filter(
            item_not_deleted("reference_item"), reference_item__project=project
        ).count(),
        "items_with_reference": Item.objects.filter(project=project, reference_sets__isnull=False)
        .distinct()
        .count(),
    }


def reviewers_who_scored(*, project: Project) -> int:
    return (
        Review.objects.filter(
            item_not_deleted("annotation__assignment__item"),
            annotation__assignment__item__project=project,
        )
        .values("reviewer_id")
        .distinct()
        .count()
    )
