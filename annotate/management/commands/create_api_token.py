from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from annotate.services.api_tokens import api_token_create
from config.exceptions import ApplicationError


def _project_ids(value: str) -> list[int]:
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise ValueError("project ids separated by commas, e.g. 3,7") from None


class Command(BaseCommand):
    help = (
        "Create a personal API token for an existing account and print it (shown once: "
        "only its digest is kept). Its owner can do the same, and revoke it, on the site's "
        "API tokens page. For scripts: TOKEN=$(python manage.py create_api_token alice)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="the account the token acts as")
        parser.add_argument("--name", default="command line", help="what the token is for")
        parser.add_argument(
            "--expires-in-days", type=int, default=None, help="default: it does not expire"
        )
        parser.add_argument("--read-only", action="store_true", help="refuse every change")
        parser.add_argument(
            "--projects",
            type=_project_ids,
            default=None,
            help="limit it to these project ids (comma-separated) of the account's",
        )

    def handle(self, *args, username: str, **options):
        owner = get_user_model().objects.filter(username=username, is_active=True).first()
        if owner is None:
            raise CommandError(f"no active user named {username!r}")
        days = options["expires_in_days"]
        if days is not None and days < 1:
            raise CommandError("--expires-in-days must be 1 or more")
        try:
            issued = api_token_create(
                owner=owner,
                name=options["name"],
                expires_at=timezone.now() + timedelta(days=days) if days else None,
                read_only=options["read_only"],
                project_ids=options["projects"],
                by_owner=False,
            )
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(issued.token)
