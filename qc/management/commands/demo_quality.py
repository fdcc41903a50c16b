"""Quality-control data for the demo (after demo_setup). Only for `make run`."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.models import Project
from qc.agreement import agreement_report_refresh
from qc.demo_simulation import demo_qualification_project, simulate_demo_reviews
from qc.selectors import pipeline_counts

DEMO_PROJECT = "Demo: film review sentiment"


class Command(BaseCommand):
    help = "Simulate senior reviews in the demo project and create the qualification demo."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="run even with DEBUG off")

    def handle(self, *args, force: bool, **options):
        if not settings.DEBUG and not force:
            raise CommandError("demo data is for development: refusing with DEBUG off")
        project = Project.objects.filter(name=DEMO_PROJECT).first()
        if project is None:
            raise CommandError("run `manage.py demo_setup` first")
        users = {
            u.username: u for u in get_user_model().objects.filter(username__startswith="demo-")
        }
        with transaction.atomic():
            reviews = simulate_demo_reviews(project)
        if reviews["revised"]:
            # demo_setup computed the report before these revisions: without this, a new
            # user's agreement page opens on "N annotations were submitted since".
            agreement_report_refresh(project_id=project.pk)
        with transaction.atomic():
            qualification = demo_qualification_project(
                admin=users["demo-admin"],
                reviewer=users["demo-reviewer"],
                candidates=[users["demo-annotator2"], users["demo-annotator3"]],
            )
        stages = pipeline_counts(project=project)["stages"]
        self.stdout.write(
            f"Review loop: {reviews['verdicts']} verdicts, {reviews['revised']} revisions resubmitted; "
            + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in stages.items())
        )
        self.stdout.write(
            f"Project {qualification.name!r}: demo-annotator2 takes the test and waits for "
            "demo-admin's decision; demo-annotator3 (88% approval) is turned away."
        )
