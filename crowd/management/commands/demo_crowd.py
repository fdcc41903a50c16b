"""Study links for the demo (after demo_setup and demo_quality). Only for `make run`."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.models import Project
from crowd.models import StudyLink
from crowd.services import study_link_create

DEMO_PROJECT = "Demo: film review sentiment"
QUALIFICATION_PROJECT = "Demo: qualification test"
CONSENT = (
    "This demo study collects the words you highlight in short film reviews, with your "
    "platform id and the time you take, for research on how people justify a label.\n\n"
    "Taking part is voluntary; you may stop at any time by returning the task."
)
# Fixed keys, so the README's walk can give the URLs (a real link's key is random).
DEMO_LINKS = [
    (
        DEMO_PROJECT,
        "demo-mturk",
        {
            "name": "Demo HIT (MTurk)",
            "platform": "mturk",
            # One HIT type per variant, as in the instruction study: its preview shows
            # the variant's instruction and example.
            "variant_name": "guide-minimal-words",
            "items_required": 3,
            "description": "Read three short film reviews and highlight the words that show "
            "why each has its sentiment.",
            # The crowd study's own terms: USD 0.08 a HIT, here with a review bonus.
            "reward_per_session": "0.08",
            "bonus_per_accepted": "0.02",
        },
    ),
    (
        DEMO_PROJECT,
        "demo-prolific",
        {
            "name": "Demo study (Prolific)",
            "platform": "prolific",
            "items_required": 5,
            "description": "Read five short film reviews and highlight the words that show "
            "why each has its sentiment.",
            "completion_code": "DEMODONE",
            "screen_out_code": "DEMOSCREEN",
            "currency": "GBP",
            "reward_per_session": "0.60",
            "reward_per_item": "0.05",
        },
    ),
    (
        QUALIFICATION_PROJECT,
        "demo-screenout",
        {
            "name": "Demo screening (Prolific)",
            "platform": "prolific",
            "items_required": 2,
            "description": "A study for experienced annotators only.",
            "completion_code": "DEMOQDONE",
            "screen_out_code": "DEMOQSCREEN",
            "currency": "GBP",
            "reward_per_session": "0.30",
        },
    ),
]


class Command(BaseCommand):
    help = "Create the demo's study links (refuses to run unless DEBUG is on)."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="run even with DEBUG off")

    @transaction.atomic
    def handle(self, *args, force: bool, **options):
        if not settings.DEBUG and not force:
            raise CommandError("demo data is for development: refusing with DEBUG off")
        admin = get_user_model().objects.filter(username="demo-admin").first()
        if admin is None:
            raise CommandError("run `manage.py demo_setup` and `manage.py demo_quality` first")
        for project_name, key, fields in DEMO_LINKS:
            project = Project.objects.filter(name=project_name).first()
            if project is None:
                raise CommandError(f"no project {project_name!r}: run the demo setup first")
            if StudyLink.objects.filter(key=key).exists():
                continue
            fields = {"consent_text": CONSENT, **fields}
            variant_name = fields.pop("variant_name", None)
            if variant_name:
                fields["variant"] = (
                    project.variants.filter(name=variant_name, active=True)
                    .order_by("-version")
                    .first()
                )
            link = study_link_create(project=project, acting_user=admin, **fields)
            StudyLink.objects.filter(pk=link.pk).update(key=key)
        self.stdout.write("Demo study links (open them in a private window):")
        base = "http://127.0.0.1:8000/crowd/s"
        self.stdout.write(
            f"  MTurk preview:   {base}/demo-mturk/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE\n"
            f"  Prolific study:  {base}/demo-prolific/?PROLIFIC_PID=demo-p1&STUDY_ID=demo&SESSION_ID=demo-s1\n"
            f"  Screened out:    {base}/demo-screenout/?PROLIFIC_PID=demo-p2&STUDY_ID=demo&SESSION_ID=demo-s2"
        )
