import argparse
import json

from django.core.management.base import BaseCommand, CommandError

from annotate.management.arguments import project_from_argument
from annotate.models import ImportFormat
from annotate.services import dataset_import
from rationale_metrics.problems import DataValidationError


def _mapping(text: str) -> dict:
    """A --mapping value: a JSON object, or role=column pairs separated by commas."""
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise argparse.ArgumentTypeError("a JSON object: {role: column}")
        return value
    pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
    if not pairs or any(len(pair) != 2 or not all(p.strip() for p in pair) for pair in pairs):
        raise argparse.ArgumentTypeError("role=column pairs separated by commas")
    return {role.strip(): column.strip() for role, column in pairs}


class Command(BaseCommand):
    help = (
        "Import a dataset into a project: an ERASER directory or .zip, a .jsonl/.csv of raw "
        "texts, a file in the fine-grained benchmark's format (told by its first line's "
        "sent_id and sample_type, or by --format benchmark), or a Hugging Face dataset (a "
        ".parquet or .arrow file, or a folder or .zip of them: --format hf, columns mapped "
        "by --mapping). Everything is validated first; "
        "on any problem nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="project name or numeric id")
        parser.add_argument(
            "path",
            help="ERASER directory or .zip, a .jsonl / .csv file, a benchmark file, or a "
            "Hugging Face dataset (.parquet, .arrow, or a folder or .zip of them)",
        )
        parser.add_argument("--format", choices=ImportFormat.values, dest="source_format")
        parser.add_argument(
            "--mapping",
            type=_mapping,
            help="with --format hf: which column fills which role, as JSON "
            '(\'{"text": "review", "label": "sentiment"}\') or role=column pairs '
            "(text=review,label=sentiment); roles left out are guessed from the column names",
        )

    def handle(
        self,
        *args,
        project: str,
        path: str,
        source_format: str | None,
        mapping: dict | None,
        **options,
    ):
        found = project_from_argument(project)

        def show(phase: str, done: int, total: int) -> None:
            if options["verbosity"] >= 2:
                self.stderr.write(f"{phase}: {done}/{total or '?'}")

        try:
            summary = dataset_import(
                project=found,
                path=path,
                source_format=source_format,
                progress=show,
                mapping=mapping,
            )
        except DataValidationError as exc:
            raise CommandError(f"nothing was imported. {exc}") from exc
        for warning in summary.warnings:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
        self.stdout.write(
            self.style.SUCCESS(
                f"imported into {found.name!r}: {summary.documents_created} documents "
                f"({summary.documents_unchanged} already present), {summary.items_created} items "
                f"({summary.items_unchanged} already present), "
                f"{summary.reference_sets_created} reference rationale sets, "
                f"{summary.spans_created} spans"
            )
        )
