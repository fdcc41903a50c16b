"""Run the automatic checks on submissions that have none, however old. Beat runs the
same service hourly (qc.tasks.quality_checks_missing); this is for running it now."""

from django.core.management.base import BaseCommand

from qc.services.checks import quality_checks_missing


class Command(BaseCommand):
    help = "Run the automatic quality checks on annotations that have none."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=10_000)

    def handle(self, *args, limit: int, **options):
        checked = quality_checks_missing(limit=limit)
        self.stdout.write(f"checked {checked} annotation(s) that had no checks")
