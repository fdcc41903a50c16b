"""Write the documentation's generated reference pages (frontend/docs_reference.py):
docs/reference/api.md from the OpenAPI schema and docs/reference/commands.md from the
command-line parsers. `make docs` runs it before building the site."""

from pathlib import Path

from django.conf import settings
from django.core.management import get_commands, load_command_class
from django.core.management.base import BaseCommand
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator

from frontend.docs_reference import api_reference_markdown, commands_reference_markdown
from rationale_metrics.cli import build_parser

# The apps whose commands the page lists: this project's, not Django's or a library's.
PROJECT_APPS = ("annotate", "qc", "crowd", "exports", "frontend")
REFERENCE = Path(settings.BASE_DIR) / "docs" / "reference"


def project_command_parsers():
    for name, app in get_commands().items():
        if app in PROJECT_APPS:
            yield name, load_command_class(app, name).create_parser("manage.py", name)


def django_option_names() -> frozenset[str]:
    """The options every management command has (from a command with none of its own)."""
    parser = BaseCommand().create_parser("manage.py", "any")
    return frozenset(
        action.option_strings[0] for action in parser._actions if action.option_strings
    )


def reference_pages() -> dict[Path, str]:
    # The schema's own warnings are the schema test's business (tests/config/), not the page's.
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    return {
        REFERENCE / "api.md": api_reference_markdown(schema),
        REFERENCE / "commands.md": commands_reference_markdown(
            project_command_parsers(), build_parser(), django_option_names()
        ),
    }


class Command(BaseCommand):
    help = (
        "Write docs/reference/api.md and commands.md from the OpenAPI schema and the CLI parsers."
    )

    def handle(self, *args, **options):
        for path, text in reference_pages().items():
            path.write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {path.relative_to(settings.BASE_DIR)}")
