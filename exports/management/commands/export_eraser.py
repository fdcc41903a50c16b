import os
from contextlib import ExitStack
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.management.arguments import project_from_argument
from config.exceptions import ApplicationError
from exports import services, work
from exports.huggingface import hf_push_to_hub
from exports.params import AGGREGATIONS, HF_LAYOUT, LAYOUTS, SELECTIONS, export_params_from
from qc.cohorts import COHORTS
from rationale_metrics.eraser_writer import DirectorySink, DocumentNotExportable, ZipSink

# The command's work folder beside the target, named so that the next start, in any
# export to the same folder, knows it for one of its own.
WORK_PREFIX = ".export-eraser-"


def checked_target(out: str) -> tuple[Path, str]:
    """The target and its kind ("zip" or "directory"), or a CommandError saying what is
    wrong with it, before any work is done."""
    target = Path(out)
    if out.endswith(("/", os.sep)):
        kind = "directory"
    elif target.suffix.lower() == ".zip":
        kind = "zip"
    elif target.suffix:
        raise CommandError(
            f"{out}: the name ends in {''.join(target.suffixes)!r}, which is neither a folder "
            "nor .zip; give a path ending in .zip for an archive, or a folder name (end it "
            "with / if the name holds a dot)"
        )
    else:
        kind = "directory"
    if target.exists():
        raise CommandError(f"{target} already exists; choose a new path")
    parent = target.absolute().parent
    if not parent.exists():
        raise CommandError(f"{target}: the folder {parent} does not exist; create it first")
    if not parent.is_dir():
        raise CommandError(f"{target}: {parent} is a file, not a folder")
    return target, kind


class Command(BaseCommand):
    help = (
        "Export a project as an ERASER dataset (or, with --layout benchmark, in the "
        "fine-grained benchmark's format) with a datasheet, to a directory or a .zip file."
    )
    # The export needs the models only. The full checks load every URL and with them the
    # explainers' libraries (scikit-learn, SciPy): 85 MB and 1.5 s of start-up that an
    # export of any size paid (measured on 200 items: 217 MB peak with, 133 MB without).
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("project", help="project name or numeric id")
        parser.add_argument(
            "out",
            help="output folder (must not exist; end it with / if its name has a dot), "
            "or a path ending in .zip",
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
            help="ERASER documents as docs/ or docs.jsonl; 'benchmark': the fine-grained "
            "benchmark's own format, one <task>_<language>.jsonl with every chosen item; or "
            "'hf': a folder datasets.load_dataset reads (Parquet shards per split, a dataset "
            "card)",
        )
        parser.add_argument(
            "--push-to-hub",
            metavar="REPO",
            help="with --layout hf and a folder: then upload the folder to this dataset "
            "repository on the Hugging Face hub (created, private, if absent), with the "
            "token in HF_TOKEN or saved by `hf auth login`; needs the network and the [hf] "
            "extra",
        )

    def handle(self, *args, project, out, **options):
        target, kind = checked_target(out)
        if options["push_to_hub"] and (options["layout"] != HF_LAYOUT or kind != "directory"):
            raise CommandError(
                "--push-to-hub uploads a folder in the hf layout: give --layout hf and a "
                "folder, not a .zip"
            )
        raw = {
            "selection": options["selection"],
            "aggregation": options["aggregation"],
            "variant": options["variant"],
            "cohort": options["cohort"],
            "annotator": options["annotator"],
            "layout": options["layout"],
            "seed": options["seed"],
            "archive": kind,
        }
        if options["new_splits"]:
            raw.update(splits="ratios", ratios=list(options["new_splits"]))
        try:
            params = export_params_from(raw)
        except ApplicationError as exc:
            raise CommandError(f"nothing was exported: {exc}") from exc
        found = project_from_argument(project)
        parent = target.absolute().parent
        # A command killed earlier left its work folder here; no process holds it now.
        for folder in work.remove_abandoned(parent, WORK_PREFIX):
            self.stderr.write(f"removed {folder.name}, left by an export that was stopped")
        with ExitStack() as stack:
            try:
                folder = stack.enter_context(work.work_folder(parent, WORK_PREFIX))
            except OSError as exc:
                raise CommandError(f"cannot write in {parent}: {exc.strerror or exc}") from exc
            # Built in the work folder beside the target, moved into place in one rename
            # once complete.
            built = folder / target.name
            sink = ZipSink(built, target.stem) if kind == "zip" else DirectorySink(built)
            try:
                stats = services.export_build(
                    project=found, params=params, sink=sink, scratch=folder
                )
                services.export_write_datasheet(
                    project=found, params=params, stats=stats, sink=sink
                )
            except (ApplicationError, DocumentNotExportable) as exc:
                raise CommandError(f"nothing was exported: {exc}") from exc
            finally:
                sink.close()
            os.rename(built, target)
        counts = ", ".join(f"{k} {v}" for k, v in stats.instances.items())
        self.stdout.write(
            self.style.SUCCESS(
                f"exported {counts} instances and {stats.documents} documents to {target}"
            )
        )
        if options["push_to_hub"]:
            try:
                url = hf_push_to_hub(folder=target, repo_id=options["push_to_hub"])
            except ApplicationError as exc:
                raise CommandError(str(exc)) from exc
            except Exception as exc:  # the hub's errors: no network, a refused token
                raise CommandError(
                    f"exported to {target}, but pushing to {options['push_to_hub']} failed: {exc}"
                ) from exc
            self.stdout.write(self.style.SUCCESS(f"pushed {target} to the hub: {url}"))
