"""Recount a project's fill counters (what "next item" searches) from its assignments."""

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from annotate.services.assignments import fill_rows_rebuild


class Command(BaseCommand):
    help = "Recount the per-(item, variant) fill counters of a project from its assignments."

    def add_arguments(self, parser):
        parser.add_argument("project", help="project name or numeric id")

    def handle(self, *args, project: str, **options):
        found = Project.objects.filter(name=project).first()
        if found is None and project.isdigit():
            found = Project.objects.filter(pk=int(project)).first()
        if found is None:
            raise CommandError(f"no project named {project!r}")
        corrected = fill_rows_rebuild(project=found)
        self.stdout.write(f"{found.name}: {corrected} counter(s) corrected")
