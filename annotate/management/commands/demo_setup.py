"""Create demo users (one per role) and a demo project. Only for `make run` on a dev machine."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.demo_simulation import simulate_demo_annotations
from annotate.models import Project, Role
from annotate.services import (
    dataset_import,
    membership_add,
    project_create,
    variant_presets_install,
)

DEMO_PROJECT = "Demo: film review sentiment"
DEMO_DATA = Path(__file__).resolve().parents[2] / "demo_data" / "film_reviews.jsonl"
# (username, role in the demo project, superuser?)
DEMO_USERS = [
    ("demo-admin", Role.ADMIN, True),
    ("demo-researcher", Role.RESEARCHER, False),
    ("demo-reviewer", Role.REVIEWER, False),
    ("demo-reviewer2", Role.REVIEWER, False),
    ("demo-annotator", Role.ANNOTATOR, False),
    ("demo-annotator2", Role.ANNOTATOR, False),
    ("demo-annotator3", Role.ANNOTATOR, False),
]


def demo_password(username: str) -> str:
    return f"{username}-pass"


class Command(BaseCommand):
    help = "Create demo users and a demo project (refuses to run unless DEBUG is on)."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="run even with DEBUG off")

    @transaction.atomic
    def handle(self, *args, force: bool, **options):
        if not settings.DEBUG and not force:
            raise CommandError("demo users have known passwords: refusing with DEBUG off")
        user_model = get_user_model()
        users = {}
        for username, _, superuser in DEMO_USERS:
            user, _ = user_model.objects.get_or_create(username=username)
            user.is_staff = user.is_superuser = superuser
            user.set_password(demo_password(username))
            user.save()
            users[username] = user
        project = Project.objects.filter(name=DEMO_PROJECT).first()
        if project is None:
            project = project_create(
                name=DEMO_PROJECT,
                acting_user=users["demo-admin"],
                description="Short film reviews written for this demo. Highlight why each review "
                "has its sentiment.",
                labels=["negative", "positive"],
            )
        for username, role, _ in DEMO_USERS:
            membership_add(project=project, user=users[username], role=role)
        summary = dataset_import(project=project, path=DEMO_DATA)
        variant_presets_install(project=project)
        simulated = simulate_demo_annotations(project)
        from qc.agreement import agreement_report_refresh

        agreement_report_refresh(project_id=project.pk)
        self.stdout.write(
            f"Simulated annotators submitted {simulated} annotations; agreement report computed."
        )
        self.stdout.write(
            f"Demo project {project.name!r}: {summary.items_created} new items, "
            f"{summary.items_unchanged} already present."
        )
        self.stdout.write("Demo users (user / password / role):")
        for username, role, superuser in DEMO_USERS:
            extra = ", site superuser" if superuser else ""
            self.stdout.write(f"  {username} / {demo_password(username)} / {role}{extra}")
