"""The datasheet before an export: what admins state about the project, and a preview of
the whole sheet: the latest finished export's, never one built inside the request."""

from __future__ import annotations

from django.db import transaction

from annotate.models import Project
from config.exceptions import ApplicationError
from exports.build import BuildStats, export_params_check
from exports.datasheet import datasheet_build, datasheet_markdown
from exports.models import ProjectDatasheet
from exports.params import export_params_from
from exports.selectors import export_latest_finished_with_params

DATASHEET_FIELDS = (
    "annotator_background",
    "annotator_languages",
    "annotator_training",
    "compensation",
    "licence",
    "terms_of_use",
)


def _languages_checked(languages) -> list[str]:
    if not isinstance(languages, list) or not all(isinstance(x, str) for x in languages):
        raise ApplicationError(
            "annotator_languages: a list of language names", extra={"field": "annotator_languages"}
        )
    cleaned = [x.strip() for x in languages]
    if not all(cleaned):
        raise ApplicationError(
            "annotator_languages: a language name cannot be blank",
            extra={"field": "annotator_languages"},
        )
    return list(dict.fromkeys(cleaned))  # once each, in the order given


@transaction.atomic
def datasheet_info_update(*, project: Project, acting_user, **fields) -> ProjectDatasheet:
    unknown = set(fields) - set(DATASHEET_FIELDS)
    if unknown:
        raise ApplicationError(f"unknown datasheet field(s): {', '.join(sorted(unknown))}")
    if "annotator_languages" in fields:
        fields["annotator_languages"] = _languages_checked(fields["annotator_languages"])
    info, _ = ProjectDatasheet.objects.select_for_update().get_or_create(project=project)
    for name, value in fields.items():
        setattr(info, name, value.strip() if isinstance(value, str) else value)
    info.updated_by = acting_user
    info.save()
    return info


def datasheet_preview(*, project: Project, raw_params: dict) -> dict:
    """The datasheet for these export parameters, as JSON and Markdown, and the export it
    comes from: {"export", "note", "json", "markdown"}.

    Building a sheet's figures means building the export (at 100,000 items, longer than a
    web request may take), so the preview never does: it shows the sheet of the latest
    finished export of the same dataset, as that export carries it. With none, it shows
    the sheet with empty figures and says so: admins can check what they state before any
    export, and start one to fill the figures in."""
    params = export_params_from(raw_params)
    export_params_check(project=project, params=params)
    export = export_latest_finished_with_params(project=project, params=params)
    if export is not None:
        made = {
            "id": export.pk,
            "finished_at": export.finished_at,
            "created_by": export.created_by.username if export.created_by else None,
        }
        sheet = export.datasheet
        return {"export": made, "note": None, "json": sheet, "markdown": datasheet_markdown(sheet)}
    sheet = datasheet_build(project=project, params=params, stats=BuildStats())
    return {
        "export": None,
        "note": "no export with these parameters has finished yet: the figures below are "
        "empty until one does",
        "json": sheet,
        "markdown": datasheet_markdown(sheet),
    }
