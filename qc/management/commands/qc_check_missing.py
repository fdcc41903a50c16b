"""Run the automatic checks on submissions that have none. The periodic sweep looks only
among the recent ones (RECENT_WINDOW ids below the newest checked); older ones left
unchecked (say a check that failed in-process, without a broker) wait for this. Safe to
run any time, e.g. from cron: every check is idempotent."""

from django.core.management.base import BaseCommand

from qc.selectors import annotations_without_checks
from qc.services import annotation_quality_check


class Command(BaseCommand):
    help = "Run the automatic quality checks on annotations that have none."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=10_000)

    def handle(self, *args, limit: int, **options):
        missing = annotations_without_checks(limit=limit)
        for annotation_id in missing:
            annotation_quality_check(annotation_id=annotation_id)
        self.stdout.write(f"checked {len(missing)} annotation(s) that had no checks")
