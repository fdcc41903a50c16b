import shutil
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.management.arguments import project_from_argument
from config.exceptions import ApplicationError
from exports.params import AGGREGATIONS, LAYOUTS, SELECTIONS, export_params_from
from exports.services import export_build, export_write_datasheet
from qc.cohorts import COHORTS
from rationale_metrics.eraser_writer import DirectorySink, DocumentNotExportable, ZipSink


class Command(BaseCommand):
    help = (
        "Export a project as an ERASER dataset (or, with --layout benchmark, in the "
        "fine-grained benchmark's format) with a datasheet, to a directory or a .zip file."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="project name or numeric id")
        parser.add_argument(
            "out", help="output directory (must not exist), or a path ending in .zip"
        )
        parser.add_argument("--selection", choices=SELECTIONS, default="submitted")
        parser.add_argument("--aggregation", choices=AGGREGATIONS, default="majority")
        parser.add_argument(
            "--variant", help="only annotations made under this instruction variant"
        )
        parser.add_argument("--annotator", help="with --aggregation annotator: whose highlights")
        parser.add_argument(
            "--cohort", choices=COHORTS, help="only workers of this qualification cohort"
        )
        parser.add_argument(
            "--new-splits",
            nargs=3,
            type=float,
            metavar=("TRAIN", "VAL", "TEST"),
            help="assign new splits by these ratios (default: keep the imported splits)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the new splits")
        parser.add_argument(
            "--layout",
            choices=LAYOUTS,
            default="docs",
            help="ERASER documents as docs/ or docs.jsonl; or 'benchmark': the fine-grained "
            "benchmark's own format, one <task>_<language>.jsonl with every chosen item",
        )

    def handle(self, *args, project, out, **options):
        found = project_from_argument(project)
        target = Path(out)
        if target.exists():
            raise CommandError(f"{target} already exists; choose a new path")
        raw = {
            "selection": options["selection"],
            "aggregation": options["aggregation"],
            "variant": options["variant"],
            "cohort": options["cohort"],
            "annotator": options["annotator"],
            "layout": options["layout"],
            "seed": options["seed"],
            "archive": "zip" if target.suffix == ".zip" else "directory",
        }
        if options["new_splits"]:
            raw.update(splits="ratios", ratios=list(options["new_splits"]))
        try:
            params = export_params_from(raw)
            # Build beside the target and move it into place only when complete.
            scratch_parent = target.parent if target.parent.exists() else None
            with tempfile.TemporaryDirectory(dir=scratch_parent) as tmp:
                built = Path(tmp) / target.name
                if params.archive == "zip":
                    sink = ZipSink(built, target.stem, Path(tmp) / "scratch")
                else:
                    sink = DirectorySink(built)
                try:
                    stats = export_build(project=found, params=params, sink=sink)
                    export_write_datasheet(project=found, params=params, stats=stats, sink=sink)
                finally:
                    sink.close()
                shutil.move(built, target)
        except (ApplicationError, DocumentNotExportable) as exc:
            raise CommandError(f"nothing was exported: {exc}") from exc
        counts = ", ".join(f"{k} {v}" for k, v in stats.instances.items())
        self.stdout.write(
            self.style.SUCCESS(
                f"exported {counts} instances and {stats.documents} documents to {target}"
            )
        )
