"""The datasheet before an export: what admins state about the project, and a preview of
the whole sheet built without writing any file."""

from __future__ import annotations

import io

from django.db import transaction

from annotate.models import Project
from config.exceptions import ApplicationError
from exports.build import BuildStats, NothingToExport, export_build
from exports.datasheet import datasheet_build, datasheet_markdown
from exports.models import ProjectDatasheet
from exports.params import export_params_from

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


class _Discarded(io.IOBase):
    """A file (text or bytes) that forgets what is written to it."""

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        return len(data)


class DiscardSink:
    """A dataset sink that writes nothing: the preview needs the export's figures only."""

    keeps_nothing = True  # export_build then skips the documents and the assembly

    def write_text(self, name: str, text: str) -> None:
        return None

    def open_text(self, name: str):
        return _Discarded()

    def open_bytes(self, name: str):
        return _Discarded()

    def close(self) -> None:
        return None


def datasheet_preview(*, project: Project, raw_params: dict) -> dict:
    """The datasheet an export with these parameters would carry, as JSON and Markdown.

    It runs the export's own build into a sink that keeps nothing, so the figures are the
    export's; with nothing to export yet, the sheet shows everything else with empty
    figures, so admins can fill in and check it before any annotation."""
    params = export_params_from(raw_params)
    note = None
    try:
        stats = export_build(project=project, params=params, sink=DiscardSink())
    except NothingToExport as exc:
        stats, note = BuildStats(), f"{exc.message}; the figures below are empty"
    sheet = datasheet_build(project=project, params=params, stats=stats)
    return {"note": note, "json": sheet, "markdown": datasheet_markdown(sheet)}
