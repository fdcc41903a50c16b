"""Recount a project's fill counters (what "next item" searches) from its assignments."""

from django.core.management.base import BaseCommand

from annotate.management.arguments import project_from_argument
from annotate.services.assignments import fill_rows_rebuild


class Command(BaseCommand):
    help = "Recount the per-(item, variant) fill counters of a project from its assignments."

    def add_arguments(self, parser):
        parser.add_argument("project", help="project name or numeric id")

    def handle(self, *args, project: str, **options):
        found = project_from_argument(project)
        corrected = fill_rows_rebuild(project=found)
        self.stdout.write(f"{found.name}: {corrected} counter(s) corrected")
