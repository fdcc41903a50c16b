"""The demo's path with a real model (after demo_setup): a tiny Transformers model trained on
the demo project's data in seconds on a CPU, registered, and a run of each model explainer
started, whose progress the results board shows. Needs the `models` extra; `make run` calls
it only when torch is installed. Running it again trains nothing and starts nothing new."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotate.management.commands.demo_setup import DEMO_PROJECT
from annotate.models import Project
from config.exceptions import ApplicationError
from exports.demo_model import demo_model_prepare


class Command(BaseCommand):
    help = (
        "Train a tiny Transformers model on the demo project's data, register it and start a "
        "run of each model explainer (needs the 'models' extra; refuses with DEBUG off)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="run even with DEBUG off")
        parser.add_argument(
            "--project", type=int, help="the project's id (default: the demo project)"
        )
        parser.add_argument(
            "--split",
            default="test",
            choices=["train", "val", "test"],
            help="the split the runs explain",
        )
        parser.add_argument("--seed", type=int, default=0, help="the training's seed")
        parser.add_argument(
            "--retrain", action="store_true", help="train again and start every run again"
        )

    def handle(self, *args, force, project, split, seed, retrain, **options):
        if not settings.DEBUG and not force:
            raise CommandError("the demo is for a dev machine: refusing with DEBUG off")
        chosen = (
            Project.objects.filter(pk=project).first()
            if project
            else Project.objects.filter(name=DEMO_PROJECT).first()
        )
        if chosen is None:
            raise CommandError(
                f"no project {project}" if project else "no demo project: run demo_setup first"
            )
        admin = get_user_model().objects.filter(username="demo-admin").first()
        try:
            done = demo_model_prepare(
                project=chosen, acting_user=admin, split=split, seed=seed, retrain=retrain
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        trained = "trained and registered" if done.trained else "already registered"
        self.stdout.write(
            f"Model {done.model.name!r} {trained} ({done.model.folder}); export {done.export.pk}; "
            f"{len(done.runs)} run(s) started: "
            + (", ".join(run.explainer for run in done.runs) or "none new")
        )
        self.stdout.write(
            f"Their progress and scores: /projects/{chosen.pk}/results/ (results board)"
        )
