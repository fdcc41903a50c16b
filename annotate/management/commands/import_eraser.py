from django.core.management.base import BaseCommand, CommandError

from annotate.management.arguments import project_from_argument
from annotate.models import ImportFormat
from annotate.services import dataset_import
from rationale_metrics.problems import DataValidationError


class Command(BaseCommand):
    help = (
        "Import a dataset into a project: an ERASER directory or .zip, a .jsonl/.csv of raw "
        "texts, or a file in the fine-grained benchmark's format (told by its first line's "
        "sent_id and sample_type, or by --format benchmark). Everything is validated first; "
        "on any problem nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="project name or numeric id")
        parser.add_argument(
            "path", help="ERASER directory or .zip, a .jsonl / .csv file, or a benchmark file"
        )
        parser.add_argument("--format", choices=ImportFormat.values, dest="source_format")

    def handle(self, *args, project: str, path: str, source_format: str | None, **options):
        found = project_from_argument(project)

        def show(phase: str, done: int, total: int) -> None:
            if options["verbosity"] >= 2:
                self.stderr.write(f"{phase}: {done}/{total or '?'}")

        try:
            summary = dataset_import(
                project=found, path=path, source_format=source_format, progress=show
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
