"""A project's lifecycle: deleting (softly) and restoring an import, chosen items or the
whole project; the purge that removes deleted data for good once its restore period is
over; archiving and unarchiving. Every step is audited in its own transaction.

A delete never touches an export already written: exports are files and rows of their
own, read by nobody who looks for items. The purge removes items, their assignments,
annotations and reviews (by cascade) and the documents no remaining item uses; the audit
trail keeps what was removed (a project's PURGE event names it, since the project's own
events go with it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotate.models import (
    Document,
    ImportJob,
    Item,
    ItemDocument,
    JobStatus,
    Project,
    ProjectMembership,
    Role,
)
from annotate.services.assignments.leasing import item_leases_end
from annotate.services.deletion import items_hide, items_unhide
from config.exceptions import (
    ApplicationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
)
from qc.agreement import agreement_report_request
from qc.models import (
    AgreementReport,
    AuditAction,
    AuditEvent,
    ProjectWorker,
    QualificationStatus,
    ReportStatus,
    WorkerProfile,
    WorkerStatus,
)


def restore_period() -> timedelta:
    return timedelta(days=settings.DELETED_RESTORE_DAYS)


def restorable_until(deleted_at: datetime) -> datetime:
    return deleted_at + restore_period()


def _audit(*, project, actor, action: str, reason: str, details: dict) -> AuditEvent:
    return AuditEvent.objects.create(
        project=project, actor=actor, action=action, reason=reason, details=details
    )


def _figures_refresh(project: Project) -> None:
    """A computed agreement report counted the items just deleted or restored: it is
    recomputed in the background (the page says "stale" until then)."""
    if AgreementReport.objects.filter(project=project, status=ReportStatus.READY).exists():
        agreement_report_request(project=project)


def _blocked_workers(project: Project) -> frozenset[int]:
    """The workers blocked in this project or on every project: a restore gives them back
    no lease (their block ended theirs, or would have, had the items not been deleted)."""
    in_project = ProjectWorker.objects.filter(
        project=project, status=QualificationStatus.BLOCKED
    ).values_list("worker_id", flat=True)
    everywhere = WorkerProfile.objects.filter(
        status=WorkerStatus.BLOCKED, user__isnull=False
    ).values_list("user_id", flat=True)
    return frozenset(in_project) | frozenset(everywhere)


def _restorable_check(deleted_at: datetime) -> None:
    if timezone.now() >= restorable_until(deleted_at):
        raise ConflictError(
            "the restore period is over; the data is being removed for good",
            extra={"code": "restore_period_over"},
        )


# ---------------------------------------------------------------- imports


@transaction.atomic
def import_delete(*, project: Project, job_id: int, acting_user) -> int:
    """Delete an import softly with its items and everything on them; returns how many
    items it took."""
    job = (
        ImportJob.objects.select_for_update(of=("self",))
        .filter(project=project, pk=job_id, deleted_at__isnull=True)
        .first()
    )
    if job is None:
        raise NotFoundError(f"no import with id {job_id} in this project")
    if job.status in (JobStatus.PENDING, JobStatus.RUNNING):
        raise ConflictError("this import is still running; cancel it or wait for it to end")
    now = timezone.now()
    hidden = items_hide(items=Item.all_objects.filter(import_job=job), at=now)
    job.deleted_at, job.deleted_by = now, acting_user
    job.save(update_fields=["deleted_at", "deleted_by"])
    _figures_refresh(project)
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.DELETE,
        reason=f"import {job.pk} ({job.source_name}) deleted with its {hidden} item(s)",
        details={"import": job.pk, "source_name": job.source_name, "items": hidden},
    )
    return hidden


@transaction.atomic
def import_restore(*, project: Project, job_id: int, acting_user) -> int:
    """Bring a deleted import back with the items its deletion took (not those deleted on
    their own before or after); returns how many."""
    job = (
        ImportJob.objects.select_for_update(of=("self",)).filter(project=project, pk=job_id).first()
    )
    if job is None:
        raise NotFoundError(f"no import with id {job_id} in this project")
    if job.deleted_at is None:
        raise ConflictError("this import is not deleted")
    _restorable_check(job.deleted_at)
    restored = items_unhide(
        project=project,
        items=Item.all_objects.filter(import_job=job, deleted_at=job.deleted_at),
        kept_ended=_blocked_workers(project),
    )
    job.deleted_at, job.deleted_by = None, None
    job.save(update_fields=["deleted_at", "deleted_by"])
    _figures_refresh(project)
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.RESTORE,
        reason=f"import {job.pk} ({job.source_name}) restored with {restored} item(s)",
        details={"import": job.pk, "source_name": job.source_name, "items": restored},
    )
    return restored


# ---------------------------------------------------------------- items


MAX_ITEM_IDS = 10_000


def _ids_checked(item_ids: list[int]) -> list[int]:
    if not item_ids:
        raise ApplicationError("ids: give at least one item id", extra={"field": "ids"})
    if len(item_ids) > MAX_ITEM_IDS:
        raise ApplicationError(
            f"ids: at most {MAX_ITEM_IDS} items at once; delete a whole import, or use the "
            "data manager's bulk action on a filter",
            extra={"field": "ids"},
        )
    return sorted(set(item_ids))


@transaction.atomic
def items_delete(*, project: Project, item_ids: list[int], acting_user) -> int:
    """Delete chosen items softly; returns how many were deleted (ids of other projects or
    already deleted are left alone)."""
    ids = _ids_checked(item_ids)
    hidden = items_hide(
        items=Item.all_objects.filter(project=project, pk__in=ids), at=timezone.now()
    )
    if hidden:
        _figures_refresh(project)
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.DELETE,
        reason=f"{hidden} item(s) deleted",
        details={"items": ids[:1000], "deleted": hidden},
    )
    return hidden


@transaction.atomic
def items_restore(*, project: Project, item_ids: list[int], acting_user) -> int:
    """Bring back chosen deleted items that are still restorable and whose import is not
    itself deleted (restore the import for those); returns how many came back."""
    ids = _ids_checked(item_ids)
    cutoff = timezone.now() - restore_period()
    chosen = Item.all_objects.filter(project=project, pk__in=ids, deleted_at__gt=cutoff).exclude(
        import_job__deleted_at__isnull=False
    )
    restored = items_unhide(project=project, items=chosen, kept_ended=_blocked_workers(project))
    if restored:
        _figures_refresh(project)
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.RESTORE,
        reason=f"{restored} item(s) restored",
        details={"items": ids[:1000], "restored": restored},
    )
    return restored


# ---------------------------------------------------------------- projects


def _deleted_project_for_admin(*, project_id: int, user) -> Project:
    """A deleted project, for one of its admins or site staff: a non-member is told it is
    not found, a member without the admin role is refused, a project that is not deleted
    is a conflict."""
    project = Project.all_objects.filter(pk=project_id).first()
    if project is None:
        raise NotFoundError("project not found")
    if not (user.is_staff or user.is_superuser):
        roles = set(
            ProjectMembership.objects.filter(project=project, user=user).values_list(
                "role", flat=True
            )
        )
        if not roles:
            raise NotFoundError("project not found")
        if Role.ADMIN not in roles:
            raise PermissionDeniedError(f"this needs the admin role in project {project.name!r}")
    if project.deleted_at is None:
        raise ConflictError("this project is not deleted")
    return project


def deleted_projects_for_user(*, user) -> list[Project]:
    """The deleted projects `user` may restore (theirs as admin; every one for staff),
    most recently deleted first."""
    projects = Project.all_objects.filter(deleted_at__isnull=False)
    if not (user.is_staff or user.is_superuser):
        projects = projects.filter(
            Exists(
                ProjectMembership.objects.filter(project=OuterRef("pk"), user=user, role=Role.ADMIN)
            )
        )
    return list(projects.select_related("deleted_by").order_by("-deleted_at", "pk"))


@transaction.atomic
def project_delete(*, project: Project, confirm_name: str, acting_user) -> Project:
    """Delete a project softly: gone for everybody at once, but for its admins' and
    staff's "Deleted projects" list. The admin types its name to confirm."""
    if confirm_name != project.name:
        raise ApplicationError(
            "confirm_name: type the project's name exactly to delete it",
            extra={"field": "confirm_name"},
        )
    project = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    now = timezone.now()
    hidden = items_hide(items=Item.all_objects.filter(project=project), at=now)
    project.deleted_at, project.deleted_by = now, acting_user
    project.save(update_fields=["deleted_at", "deleted_by"])
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.DELETE,
        reason=f"project {project.name!r} deleted with its {hidden} item(s)",
        details={"project": project.pk, "name": project.name, "items": hidden},
    )
    return project


@transaction.atomic
def project_restore(*, project_id: int, acting_user) -> Project:
    project = _deleted_project_for_admin(project_id=project_id, user=acting_user)
    project = Project.all_objects.select_for_update(no_key=True).get(pk=project.pk)
    _restorable_check(project.deleted_at)
    deleted_at = project.deleted_at
    project.deleted_at, project.deleted_by = None, None
    project.save(update_fields=["deleted_at", "deleted_by"])
    restored = items_unhide(
        project=project,
        items=Item.all_objects.filter(project=project, deleted_at=deleted_at),
        kept_ended=_blocked_workers(project),
    )
    _figures_refresh(project)
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.RESTORE,
        reason=f"project {project.name!r} restored with {restored} item(s)",
        details={"project": project.pk, "name": project.name, "items": restored},
    )
    return project


# ---------------------------------------------------------------- archive


@transaction.atomic
def project_archive(*, project: Project, acting_user) -> Project:
    """Read-only from now on: off the annotators' lists and queues (their open leases end),
    every write refused, exports still allowed."""
    project = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    if project.archived_at is not None:
        return project
    ended = 0
    ids = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), 5000):
        ended += item_leases_end(item_ids=ids[start : start + 5000])
    project.archived_at = timezone.now()
    project.save(update_fields=["archived_at"])
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.ARCHIVE,
        reason=f"project archived; {ended} open lease(s) ended",
        details={"leases_ended": ended},
    )
    return project


@transaction.atomic
def project_unarchive(*, project: Project, acting_user) -> Project:
    project = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    if project.archived_at is None:
        return project
    project.archived_at = None
    project.save(update_fields=["archived_at"])
    _audit(
        project=project,
        actor=acting_user,
        action=AuditAction.UNARCHIVE,
        reason="project unarchived",
        details={},
    )
    return project


# ---------------------------------------------------------------- the purge


@dataclass(frozen=True)
class PurgeSummary:
    projects: int
    imports: int
    items: int


def _documents_orphaned_delete(project_id: int) -> int:
    used = ItemDocument.objects.filter(document=OuterRef("pk"))
    deleted, _ = Document.objects.filter(project_id=project_id).exclude(Exists(used)).delete()
    return deleted


def deleted_data_purge(*, now: datetime | None = None) -> PurgeSummary:
    """Remove for good what was deleted longer ago than the restore period: projects,
    imports with their items, items deleted on their own. Each removal is a transaction
    of its own with its PURGE event; safe to run twice (what is gone is not found again)."""
    cutoff = (now or timezone.now()) - restore_period()
    projects = imports = items = 0
    for project_id in Project.all_objects.filter(deleted_at__lte=cutoff).values_list(
        "pk", flat=True
    ):
        with transaction.atomic():
            project = (
                Project.all_objects.select_for_update()
                .filter(pk=project_id, deleted_at__lte=cutoff)
                .first()
            )
            if project is None:
                continue
            _audit(
                project=None,  # the project's own events go with it
                actor=None,
                action=AuditAction.PURGE,
                reason=f"project {project.name!r} (id {project.pk}) removed for good",
                details={"project": project.pk, "name": project.name},
            )
            # Items first (their assignments and spans hold variants and documents, which
            # are protected while anything refers to them), then documents, then the rest.
            Item.all_objects.filter(project=project).delete()
            Document.objects.filter(project=project).delete()
            project.delete()
            projects += 1
    for job in ImportJob.objects.filter(deleted_at__lte=cutoff).select_related("project"):
        with transaction.atomic():
            if not ImportJob.objects.filter(pk=job.pk, deleted_at__lte=cutoff).exists():
                continue
            Item.all_objects.filter(import_job=job, deleted_at=job.deleted_at).delete()
            _documents_orphaned_delete(job.project_id)
            _audit(
                project=job.project,
                actor=None,
                action=AuditAction.PURGE,
                reason=f"import {job.pk} ({job.source_name}) and its items removed for good",
                details={"import": job.pk, "source_name": job.source_name},
            )
            job.delete()
            imports += 1
    for project_id in (
        Item.all_objects.filter(deleted_at__lte=cutoff, project__deleted_at__isnull=True)
        .values_list("project_id", flat=True)
        .distinct()
    ):
        with transaction.atomic():
            doomed = Item.all_objects.filter(project_id=project_id, deleted_at__lte=cutoff)
            ids = list(doomed.values_list("pk", flat=True))
            doomed.delete()
            _documents_orphaned_delete(project_id)
            _audit(
                project=Project.objects.get(pk=project_id),
                actor=None,
                action=AuditAction.PURGE,
                reason=f"{len(ids)} deleted item(s) removed for good",
                details={"items": ids[:1000], "removed": len(ids)},
            )
            items += len(ids)
    return PurgeSummary(projects=projects, imports=imports, items=items)
