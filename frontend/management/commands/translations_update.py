"""Regenerate the interface's translation catalogs: `make messages`.

Needs GNU gettext (Debian's `gettext` package), a developer's tool only: the compiled .mo
files are committed, so running or testing the project never needs it. The catalog test
(tests/frontend/test_translations.py) reads the same sources as this command, so it fails
when a string was added or changed and this was not run.
"""

from django.core.management import call_command
from django.core.management.base import BaseCommand

LANGUAGES = ["zh_Hans"]
# Not interface code: the test suite, benchmarks, the Django-free metrics library, and what
# is installed, collected or uploaded.
IGNORED_DIRS = [
    "tests",
    "bench",
    "rationale_metrics",
    "node_modules",
    "staticfiles",
    "media",
    "locale",
]
# File names only, no line numbers: an edit elsewhere in a file does not touch the catalogs.
LOCATION = "file"


class Command(BaseCommand):
    help = "Update locale/*/LC_MESSAGES/{django,djangojs}.po from the sources and compile them."

    def handle(self, *args, **options):
        ignore = [*IGNORED_DIRS, ".*"]
        for domain in ("django", "djangojs"):
            call_command(
                "makemessages",
                locale=LANGUAGES,
                domain=domain,
                ignore_patterns=ignore,
                add_location=LOCATION,
                no_obsolete=True,
                verbosity=options["verbosity"],
            )
        # Only this project's catalogs: compilemessages would otherwise also rebuild those
        # of the installed packages it finds below the working directory.
        call_command(
            "compilemessages",
            locale=LANGUAGES,
            ignore_patterns=[*IGNORED_DIRS, ".*", "*venv*"],
            verbosity=options["verbosity"],
        )
