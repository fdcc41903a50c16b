"""Export jobs: a frozen plan, chunks written as parts, one assembly that publishes.

`export_run` (the job's task) claims the export and freezes its plan (exports/build.py).
With a broker, the chunks then go to the workers as a Celery chord: one task per chunk of
items or documents writes its part to the storage (`export_chunk_run`), and the chord's
callback assembles the parts into the zip and publishes it (`export_assemble_run`).
Without a broker (eager mode, `make run`), with one chunk, or with `EXPORT_CHUNKED` off,
the same two functions run one after the other in the job's own process. The parts do not
depend on where or in what order the chunks ran, so both ways publish the same bytes.

While it works, every step refreshes the export's heartbeat and stops if the export is no
longer running under its attempt (cancelled, found silent by a viewer, or started again).
Publishing is the last step and is conditional on the same, so no partial or superseded
file is ever published. Parts and published files go through Django's storage
(exports/storage.py); a task's scratch files stay in a private local work folder that a
killed worker leaves for the periodic sweep (`export_work_sweep`) or the next run.
"""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import IntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import Project
from annotate.services.background_jobs import job_attempt_begin, job_fail_if_worker_lost
from config.exceptions import ApplicationError
from config.job_chunks import chunks_go_to_workers
from config.job_queue import task_send_on_commit, task_signature
from exports import storage as export_storage
from exports import work
from exports.benchmark import benchmark_export_check
from exports.build import (
    CHUNK,
    DOCUMENTS_KEY,
    BuildStats,
    ExportCancelled,
    NothingToExport,
    assemble_dataset,
    empty_stats,
    export_build,
    export_plan,
    export_write_datasheet,
    resolve_annotator,
    sha256_of,
    write_document_chunk,
    write_item_chunk,
)
from exports.file_names import portable_file_name
from exports.models import Export, ExportPart, ExportStatus
from exports.params import BENCHMARK_LAYOUT, export_params_from
from rationale_metrics.eraser_writer import DirectorySink, DocumentNotExportable, ZipSink

# What other modules and the tests import from here.
__all__ = [
    "CHUNK",
    "BuildStats",
    "ExportCancelled",
    "NothingToExport",
    "export_build",
    "export_write_datasheet",
]

logger = logging.getLogger(__name__)
ITEMS, DOCUMENTS = "items", "docs"
WORK_PREFIX = "export-"


@transaction.atomic
def export_start(*, project: Project, acting_user, raw_params: dict) -> Export:
    params = export_params_from(raw_params)
    if params.layout == BENCHMARK_LAYOUT:
        benchmark_export_check(project=project, params=params)  # refused now, not in the job
    export = Export.objects.create(project=project, created_by=acting_user, params=params.as_dict())
    task_send_on_commit(
        "exports.tasks.export_execute", export.pk, unsent=lambda: _export_unqueued(export.pk)
    )
    return export


def _export_unqueued(export_id: int) -> None:
    """The export's task could not be queued, so it will never run: the row says why."""
    Export.objects.filter(pk=export_id, status=ExportStatus.PENDING).update(
        status=ExportStatus.FAILED,
        phase="done",
        finished_at=timezone.now(),
        error="the job queue was unavailable, so this export never started; start it again",
    )


def export_cancel(*, export: Export) -> Export:
    updated = Export.objects.filter(
        pk=export.pk, status__in=[ExportStatus.PENDING, ExportStatus.RUNNING]
    ).update(cancel_requested=True)
    if not updated:
        raise ApplicationError(
            f"export {export.pk} is {export.status}; only pending or running exports can be cancelled"
        )
    export.refresh_from_db()
    if export.status == ExportStatus.PENDING:
        Export.objects.filter(pk=export.pk, status=ExportStatus.PENDING).update(
            status=ExportStatus.CANCELLED, finished_at=timezone.now()
        )
        export.refresh_from_db()
    return export


def work_dir() -> Path:
    folder = Path(settings.EXPORT_WORK_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class _Pulse:
    """The heartbeat of a running export's work, and its signal to stop.

    Called between batches of rows; at most every `interval` seconds (a quarter of the
    timeout after which viewers take the export for lost, at most 10 s) it writes the
    heartbeat, in the same statement that checks that the export still runs under this
    attempt and is not being cancelled. One small UPDATE per interval, whatever the
    number of rows."""

    def __init__(self, export_id: int, attempt: str):
        self.export_id = export_id
        self.attempt = attempt
        self.interval = min(10.0, max(0.2, settings.JOB_HEARTBEAT_TIMEOUT_SECONDS / 4))
        self.last = float("-inf")
        self.stopped = False

    def should_stop(self) -> bool:
        now = time.monotonic()
        if not self.stopped and now - self.last >= self.interval:
            self.last = now
            self.stopped = not self.alive()
        return self.stopped

    def alive(self) -> bool:
        """Write the heartbeat if the job still runs under this attempt; say whether it does."""
        return bool(
            Export.objects.filter(
                pk=self.export_id,
                status=ExportStatus.RUNNING,
                attempt=self.attempt,
                cancel_requested=False,
            ).update(heartbeat_at=timezone.now())
        )

    def beat(self) -> None:
        if self.should_stop():
            raise ExportCancelled


def _finish(export_id: int, attempt: str, status: str, error: str = "") -> Export:
    """End a running export (this attempt's) as `status`; an export already ended, or
    superseded, is left as it is."""
    Export.objects.filter(pk=export_id, status=ExportStatus.RUNNING, attempt=attempt).update(
        status=status, error=error, phase="done", finished_at=timezone.now()
    )
    return Export.objects.get(pk=export_id)


def _stopped(export_id: int, attempt: str) -> Export:
    """The work stopped because the export is being cancelled, or is no longer running
    under this attempt: a cancel ends it; anything else was decided elsewhere."""
    export = Export.objects.get(pk=export_id)
    if export.cancel_requested:
        return _finish(export_id, attempt, ExportStatus.CANCELLED)
    return export


def _discard_parts(export_id: int) -> None:
    ExportPart.objects.filter(export_id=export_id).delete()
    export_storage.remove(export_storage.parts_folder(export_id))


def export_run(*, export_id: int) -> Export:
    """Run a queued export. Safe to run twice: a finished export is left as it is, and a
    running one (its worker died) starts again from nothing under a new attempt."""
    with transaction.atomic():
        export = Export.objects.select_for_update().select_related("project").get(pk=export_id)
        if export.status not in (ExportStatus.PENDING, ExportStatus.RUNNING):
            return export
        attempt = job_attempt_begin(export, phase="planning")
    if export.cancel_requested:
        return _finish(export.pk, attempt, ExportStatus.CANCELLED)
    _discard_parts(export.pk)  # of an earlier attempt whose worker died
    work.remove_abandoned(work_dir(), WORK_PREFIX)

    params = export_params_from(export.params)
    try:
        plan = export_plan(project=export.project, params=params)
    except (ApplicationError, DocumentNotExportable) as exc:
        return _finish(export.pk, attempt, ExportStatus.FAILED, str(exc))
    except Exception as exc:
        logger.exception("export %s crashed while planning", export.pk)
        return _finish(export.pk, attempt, ExportStatus.FAILED, _internal(exc))
    chunks = [(ITEMS, i) for i in range(plan.item_chunks)]
    chunks += [(DOCUMENTS, j) for j in range(plan.document_chunks)]
    Export.objects.filter(pk=export.pk, attempt=attempt).update(
        phase="writing parts",
        progress_total=len(plan.item_pks) + (len(plan.document_pks) if plan.document_chunks else 0),
        heartbeat_at=timezone.now(),
    )
    finish = {
        "item_chunks": plan.item_chunks,
        "document_chunks": plan.document_chunks,
        "documents": len(plan.document_pks),
        "uncurated_left_out": plan.uncurated_left_out,
    }

    def arguments(kind: str, index: int) -> dict:
        if kind == DOCUMENTS:
            return {"pks": plan.document_chunk(index), "splits": None}
        pks = plan.item_chunk(index)
        split_of = plan.splits_of(pks)
        return {"pks": pks, "splits": None if split_of is None else [split_of[p] for p in pks]}

    if _split_over_workers(len(chunks)):
        from celery import chord

        chord(
            task_signature(
                "exports.tasks.export_chunk",
                export.pk,
                attempt,
                kind,
                index,
                **arguments(kind, index),
            )
            for kind, index in chunks
        )(task_signature("exports.tasks.export_assemble", export.pk, attempt, **finish))
        return Export.objects.get(pk=export.pk)
    for kind, index in chunks:
        try:
            status = export_chunk_run(
                export_id=export.pk,
                attempt=attempt,
                kind=kind,
                index=index,
                **arguments(kind, index),
            )
        except DatabaseError as exc:
            logger.exception("export %s: the database failed", export.pk)
            status = _finish(export.pk, attempt, ExportStatus.FAILED, _internal(exc)).status
        if status != "written":
            break  # the export has ended (failed, cancelled); the assembly cleans up
    return export_assemble_run(export_id=export.pk, attempt=attempt, **finish)


def _split_over_workers(chunks: int) -> bool:
    """Whether to send the chunks to the workers: there is more than one, the tasks go to
    a broker, and a result backend counts the chord's finished chunks."""
    return chunks_go_to_workers(chunks, enabled=settings.EXPORT_CHUNKED, job="export")


def _internal(exc: Exception) -> str:
    return f"internal error: {type(exc).__name__}: {exc}"


def export_chunk_run(
    *,
    export_id: int,
    attempt: str,
    kind: str,
    index: int,
    pks: list[int],
    splits: list[str] | None = None,
) -> str:
    """Write one chunk's part to the storage and record it. Safe to run twice: the part is
    written again under a new name and its row then points to it in one update, so the
    assembly never reads a half-written part; the old one is removed afterwards.

    Returns "written", "stopped" (the export no longer runs under this attempt),
    "cancelled" or "failed". A database error is raised, for the task to retry."""
    export = Export.objects.select_related("project").filter(pk=export_id).first()
    if export is None or export.status != ExportStatus.RUNNING or export.attempt != attempt:
        return "stopped"
    pulse = _Pulse(export_id, attempt)
    if pulse.should_stop():
        return _stopped(export_id, attempt).status
    params = export_params_from(export.params)
    try:
        with work.work_folder(work_dir(), f"{WORK_PREFIX}{export_id}-") as folder:
            prefix = f"{kind}-{index:05d}-{uuid.uuid4().hex[:8]}"
            if kind == ITEMS:
                files, stats = write_item_chunk(
                    project=export.project,
                    params=params,
                    worker_id=resolve_annotator(params),
                    pks=pks,
                    split_of=None if splits is None else dict(zip(pks, splits, strict=True)),
                    folder=folder,
                    prefix=prefix,
                    should_cancel=pulse.should_stop,
                )
                units, figures = len(pks), stats.as_json()
            else:
                files, units = write_document_chunk(
                    pks=pks,
                    folder=folder,
                    prefix=prefix,
                    should_cancel=pulse.should_stop,
                    layout=params.layout,
                )
                figures = None
            stored = {
                key: export_storage.part_save(export_id, attempt, path.name, path)
                for key, path in files.items()
            }
    except ExportCancelled:
        return _stopped(export_id, attempt).status
    except (ApplicationError, DocumentNotExportable) as exc:
        return _finish(export_id, attempt, ExportStatus.FAILED, str(exc)).status
    except DatabaseError:
        raise
    except Exception as exc:
        logger.exception("export %s: %s chunk %s crashed", export_id, kind, index)
        error = f"{_internal(exc)} (in {kind} chunk {index}); nothing was published"
        return _finish(export_id, attempt, ExportStatus.FAILED, error).status
    if not _record_part(export_id, attempt, kind, index, stored, units, figures):
        return "stopped"
    return "written"


def _record_part(export_id, attempt, kind, index, files, units, figures) -> bool:
    """Point the chunk's row at its new part, if the export still runs under this attempt
    (a chunk of a superseded attempt must not replace the current one's)."""
    with transaction.atomic():
        current = (
            Export.objects.select_for_update()
            .filter(pk=export_id, status=ExportStatus.RUNNING, attempt=attempt)
            .exists()
        )
        if not current:
            for part in files.values():
                export_storage.remove(part["name"])
            return False
        previous = (
            ExportPart.objects.select_for_update()
            .filter(export_id=export_id, kind=kind, index=index)
            .first()
        )
        ExportPart.objects.update_or_create(
            export_id=export_id,
            kind=kind,
            index=index,
            defaults={"attempt": attempt, "files": files, "units": units, "stats": figures},
        )
    if previous is not None:  # a chunk run again: its earlier part is no longer named
        current = {f["name"] for f in files.values()}
        for old in previous.files.values():
            if old["name"] not in current:
                export_storage.remove(old["name"])
    done = (
        ExportPart.objects.filter(export_id=OuterRef("pk"), attempt=attempt)
        .values("export_id")
        .annotate(total=Sum("units"))
        .values("total")
    )
    # Counted from the rows, not added to: a chunk run twice counts once.
    Export.objects.filter(pk=export_id, status=ExportStatus.RUNNING, attempt=attempt).update(
        progress_done=Coalesce(Subquery(done, output_field=IntegerField()), 0),
        heartbeat_at=timezone.now(),
    )
    return True


def export_assemble_run(
    *,
    export_id: int,
    attempt: str,
    item_chunks: int,
    document_chunks: int,
    documents: int,
    uncurated_left_out: int = 0,
) -> Export:
    """Assemble the parts into the dataset, write its datasheet and publish it, then
    remove the parts. Safe to run twice: only a running export under this attempt is
    assembled; any other has its parts removed and stays as it is."""
    export = Export.objects.select_related("project").get(pk=export_id)
    if export.status != ExportStatus.RUNNING or export.attempt != attempt:
        if export.status != ExportStatus.RUNNING:
            _discard_parts(export_id)
        return export
    pulse = _Pulse(export_id, attempt)
    try:
        pulse.beat()
        published = _assemble_and_publish(
            export, attempt, item_chunks, document_chunks, documents, uncurated_left_out, pulse
        )
    except ExportCancelled:
        export = _stopped(export_id, attempt)
    except (ApplicationError, DocumentNotExportable) as exc:
        export = _finish(export_id, attempt, ExportStatus.FAILED, str(exc))
    except Exception as exc:
        logger.exception("export %s crashed while assembling", export_id)
        export = _finish(export_id, attempt, ExportStatus.FAILED, _internal(exc))
    else:
        export = published
    _discard_parts(export_id)
    return export


def _assemble_and_publish(
    export: Export,
    attempt: str,
    item_chunks: int,
    document_chunks: int,
    documents: int,
    uncurated_left_out: int,
    pulse,
) -> Export:
    params = export_params_from(export.params)
    rows = list(
        ExportPart.objects.filter(export=export, attempt=attempt)
        .order_by("kind", "index")
        .values_list("kind", "index", "files")
    )
    found = {(kind, index): files for kind, index, files in rows}
    expected = [(ITEMS, i) for i in range(item_chunks)]
    expected += [(DOCUMENTS, j) for j in range(document_chunks)]
    missing = [f"{kind} chunk {index}" for kind, index in expected if (kind, index) not in found]
    if missing:
        raise ApplicationError(
            f"{len(missing)} chunk(s) did not finish ({', '.join(missing[:5])}); "
            "nothing was published; start the export again"
        )
    Export.objects.filter(pk=export.pk, attempt=attempt).update(
        phase="assembling", heartbeat_at=timezone.now()
    )
    stats = empty_stats(export.project, params)
    figures = (
        ExportPart.objects.filter(export=export, attempt=attempt, kind=ITEMS)
        .order_by("index")
        .values_list("stats", flat=True)
    )
    for chunk_figures in figures.iterator(chunk_size=4):  # one chunk's figures at a time
        stats.merge(BuildStats.from_json(chunk_figures))
    stats.documents = documents
    stats.uncurated_left_out = uncurated_left_out
    checked = {f["name"]: f for files in found.values() for f in files.values()}
    # The file is named after the export; the folder inside the zip after the project
    # alone, so that two exports of the same data are the same bytes.
    root = f"{portable_file_name(export.project.name)}-export"
    with work.work_folder(work_dir(), f"{WORK_PREFIX}{export.pk}-") as folder:
        if params.archive == "zip":
            built = folder / f"{root}-{export.pk}.zip"
            sink = ZipSink(built, root)
        else:
            built = folder / f"{root}-{export.pk}"
            sink = DirectorySink(built)
        try:
            assemble_dataset(
                project=export.project,
                params=params,
                item_parts=[
                    {k: f["name"] for k, f in found[(ITEMS, i)].items()} for i in range(item_chunks)
                ],
                document_parts=[
                    found[(DOCUMENTS, j)][DOCUMENTS_KEY]["name"] for j in range(document_chunks)
                ],
                reader=export_storage.StoredParts(checked),
                sink=sink,
                pulse=pulse.beat,
            )
            sheet = export_write_datasheet(
                project=export.project, params=params, stats=stats, sink=sink
            )
        finally:
            sink.close()
        pulse.beat()
        digest = sha256_of(built)
        size = (
            built.stat().st_size
            if built.is_file()
            else sum(p.stat().st_size for p in built.rglob("*") if p.is_file())
        )
        Export.objects.filter(pk=export.pk, attempt=attempt).update(
            phase="publishing", heartbeat_at=timezone.now()
        )
        file_path = export_storage.publish(export.pk, built)
    _discard_parts(export.pk)  # before the row says "succeeded", so then they are gone
    published = Export.objects.filter(
        pk=export.pk, status=ExportStatus.RUNNING, attempt=attempt, cancel_requested=False
    ).update(
        status=ExportStatus.SUCCEEDED,
        file_path=file_path,
        sha256=digest,
        size_bytes=size,
        datasheet=sheet,
        summary={
            "instances": stats.instances,
            "documents": stats.documents,
            "annotations": stats.tally.annotations,
        },
        phase="done",
        progress_done=export.progress_total or 0,
        finished_at=timezone.now(),
    )
    if not published:  # cancelled, or ended elsewhere, while it was being stored
        export_storage.remove(file_path)
        raise ExportCancelled
    return Export.objects.get(pk=export.pk)


def export_fail(*, export_id: int, attempt: str, error: str) -> Export:
    return _finish(export_id, attempt, ExportStatus.FAILED, error)


def export_fail_if_worker_lost(export: Export) -> Export:
    """A running export whose worker stopped reporting is marked failed; nothing was
    published, since publishing is the job's last step. Its work is left to the sweep:
    the work folder is on the worker's machine, not the viewer's."""
    return job_fail_if_worker_lost(
        export,
        error=(
            f"the worker running this export stopped (no report for {settings.JOB_HEARTBEAT_TIMEOUT_SECONDS} s); "
            "no file was published; start the export again"
        ),
    )


def project_exports_fail_if_worker_lost(*, project: Project) -> int:
    """How many of the project's running exports were failed as lost: what the export list
    checks before it shows them."""
    running = Export.objects.filter(project=project, status=ExportStatus.RUNNING)
    return sum(export_fail_if_worker_lost(e).status == ExportStatus.FAILED for e in running)


def export_work_sweep() -> dict:
    """What killed exports leave, removed (Celery beat runs it every
    `EXPORT_SWEEP_INTERVAL_SECONDS`): running exports whose worker went silent are failed;
    local work folders that no process holds are removed; in the storage, the parts and
    unpublished files of every export that is no longer running."""
    lost = 0
    for export in Export.objects.filter(status=ExportStatus.RUNNING):
        lost += export_fail_if_worker_lost(export).status == ExportStatus.FAILED
    folders = work.remove_abandoned(work_dir(), WORK_PREFIX)
    status = dict(
        Export.objects.filter(pk__in=export_storage.export_ids_in_storage()).values_list(
            "pk", "status"
        )
    )
    kept = dict(
        Export.objects.filter(pk__in=list(status), status=ExportStatus.SUCCEEDED).values_list(
            "pk", "file_path"
        )
    )
    files = 0
    for export_id in export_storage.export_ids_in_storage():
        if status.get(export_id) in (ExportStatus.PENDING, ExportStatus.RUNNING):
            continue
        files += export_storage.remove(
            export_storage.export_folder(export_id), keep=kept.get(export_id) or None
        )
    ExportPart.objects.exclude(export__status=ExportStatus.RUNNING).delete()
    from exports.runs import explainer_run_sweep

    runs = explainer_run_sweep()
    return {"lost_exports": lost, "work_folders": len(folders), "stored_files": files, **runs}


def export_file_open(export: Export):
    """The published zip, opened from the storage, or None."""
    if (
        export.status != ExportStatus.SUCCEEDED
        or not export.file_path
        or not export.file_path.endswith(".zip")
    ):
        return None
    try:
        return export_storage.open_published(export.file_path)
    except FileNotFoundError:
        return None
