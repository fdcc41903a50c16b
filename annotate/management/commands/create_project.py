from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.models import Language, TaskType
from annotate.services.projects import project_create
from config.exceptions import ApplicationError


def _comma_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Command(BaseCommand):
    help = (
        "Create a project, with an existing user as its first admin (the API's "
        "POST /api/projects/ does the same for staff). Then import data with import_eraser."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the project's name (unique)")
        parser.add_argument(
            "--admin", required=True, help="user name of an existing account: the first admin"
        )
        parser.add_argument(
            "--task-type", choices=TaskType.values, default=TaskType.CLASSIFICATION.value
        )
        parser.add_argument(
            "--labels", type=_comma_list, default=[], help="comma-separated, e.g. NEG,POS"
        )
        parser.add_argument("--language", choices=Language.values, default=Language.ENGLISH.value)
        parser.add_argument("--annotators-per-item", type=int, default=3)
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--text-names", type=_comma_list, default=[], help="a text pair's two names"
        )
        parser.add_argument(
            "--print-id",
            action="store_true",
            help="print only the new project's id (for scripts: PROJECT=$(...))",
        )

    def handle(self, *args, name: str, admin: str, **options):
        user = get_user_model().objects.filter(username=admin, is_active=True).first()
        if user is None:
            raise CommandError(
                f"no active user named {admin!r}; create one first, e.g. "
                f"python manage.py createsuperuser --username {admin}"
            )
        if options["annotators_per_item"] < 1:
            raise CommandError("--annotators-per-item must be 1 or more")
        try:
            with transaction.atomic():
                project = project_create(
                    name=name,
                    acting_user=user,
                    description=options["description"],
                    task_type=options["task_type"],
                    labels=options["labels"],
                    language=options["language"],
                    annotators_per_item=options["annotators_per_item"],
                    text_names=options["text_names"],
                )
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        if options["print_id"]:
            self.stdout.write(str(project.pk))
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"created project {project.pk} {project.name!r} "
                f"({project.get_task_type_display()}, labels {', '.join(project.labels) or 'none'}"
                f"), admin {user.username}"
            )
        )
