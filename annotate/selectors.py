from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from annotate.models import (
    LIVE_ASSIGNMENT,
    Annotation,
    Assignment,
    AssignmentStatus,
    DocumentRole,
    ImportJob,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    ProjectMembership,
    Role,
    TaskType,
    WorkerVariantBinding,
)
from config.exceptions import NotFoundError, PermissionDeniedError
from config.prepared_sql import PreparedStatement, columns


def project_roles_of_user(*, project: Project, user) -> set[str]:
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(Role.values)
    return set(
        ProjectMembership.objects.filter(project=project, user=user).values_list("role", flat=True)
    )


def project_list_for_user(*, user) -> QuerySet[Project]:
    projects = Project.objects.all()
    if not user.is_superuser:
        projects = projects.filter(memberships__user=user).distinct()
    return projects.annotate(item_count=Count("items", distinct=True)).order_by("name")


_PROJECT_WITH_ROLE = PreparedStatement(
    "rw_project_role",
    f"SELECT m.role AS held_role, {columns(Project, 'p')} "  # noqa: S608 - model names only
    f"FROM {ProjectMembership._meta.db_table} m "
    f"JOIN {Project._meta.db_table} p ON p.id = m.project_id "
    "WHERE m.project_id = %(project)s AND m.user_id = %(user)s",
    [("project", "bigint"), ("user", "bigint")],
)


def project_get_for_user(*, project_id: int, user, roles: tuple[str, ...] | None = None) -> Project:
    """The project if `user` holds one of `roles` in it (any role when None).

    Non-members get NotFound, so that project ids do not leak; members without the
    role get PermissionDenied.
    """
    if user.is_authenticated and not user.is_superuser:
        # One query for the project and the caller's roles in it. It runs on every call of
        # every project endpoint, "next item" included, so it is a plain SELECT: built by
        # the ORM, the query cost three times the CPU of running it.
        rows = _PROJECT_WITH_ROLE.instances(
            Project, {"project": project_id, "user": user.pk}, extra=("held_role",)
        )
        if not rows:
            raise NotFoundError("project not found")
        project, held = rows[0], {row.held_role for row in rows}
    else:
        project = Project.objects.filter(pk=project_id).first()
        if project is None:
            raise NotFoundError("project not found")
        held = project_roles_of_user(project=project, user=user)
        if not held:
            raise NotFoundError("project not found")
    if roles is not None and not held.intersection(roles):
        raise PermissionDeniedError(
            f"this needs the {' or '.join(roles)} role in project {project.name!r}"
        )
    return project


def import_job_list(*, project: Project) -> QuerySet[ImportJob]:
    from annotate.services.dataset_import import import_job_fail_if_worker_lost

    for job in ImportJob.objects.filter(project=project, status="running"):
        import_job_fail_if_worker_lost(job)
    return ImportJob.objects.filter(project=project).select_related("created_by")


def import_job_get(*, project: Project, job_id: int) -> ImportJob:
    from annotate.services.dataset_import import import_job_fail_if_worker_lost

    job = ImportJob.objects.filter(project=project, pk=job_id).first()
    if job is None:
        raise NotFoundError("import job not found")
    return import_job_fail_if_worker_lost(job)


def item_list(*, project: Project) -> QuerySet[Item]:
    return (
        Item.objects.filter(project=project)
        .prefetch_related("item_documents__document")
        .annotate(reference_set_count=Count("reference_sets", distinct=True))
        .order_by("id")
    )


def assignment_with_item_documents(assignment: Assignment, *, project, variant) -> Assignment:
    """Attach the item and its documents to a just-leased assignment in one query, for
    the annotator's response (the project and variant are already loaded)."""
    links = list(
        ItemDocument.objects.filter(item_id=assignment.item_id)
        .select_related("document", "item")
        .order_by("position")
    )
    item = links[0].item if links else Item.objects.get(pk=assignment.item_id)
    item.project = project
    item._prefetched_objects_cache = {"item_documents": links}
    assignment.item = item
    assignment.variant = variant
    return assignment


@dataclass(frozen=True)
class ItemTaskFields:
    roles: list[str]  # per document, in order
    answer: dict | None
    options: list[str]


def item_task_fields(item: Item) -> ItemTaskFields:
    """The parts of an item that only some task types use: its documents' roles, the
    reading-comprehension answer, the multiple-choice options.

    The lease statement reads only what a single text needs and leaves these deferred;
    reading each on access would cost a query per document, so they come in one."""
    links = item.item_documents.all()
    deferred = item.get_deferred_fields() & {"answer", "options"} or any(
        "role" in link.get_deferred_fields() for link in links
    )
    if not deferred:
        return ItemTaskFields([link.role for link in links], item.answer, item.options)
    if item.project.task_type == TaskType.CLASSIFICATION:
        # Single texts have neither answers nor options, and every document is a text.
        return ItemTaskFields([DocumentRole.TEXT.value] * len(links), None, [])
    rows = list(
        ItemDocument.objects.filter(item_id=item.pk)
        .order_by("position")
        .values_list("role", "item__answer", "item__options")
    )
    if not rows:
        return ItemTaskFields([], None, [])
    return ItemTaskFields([role for role, _, _ in rows], rows[0][1], rows[0][2] or [])


def assignment_get_for_worker(*, assignment_id: int, worker) -> Assignment:
    assignment = (
        Assignment.objects.select_related("item__project", "variant")
        .prefetch_related("item__item_documents__document")
        .filter(pk=assignment_id, worker=worker)
        .first()
    )
    if assignment is None:
        raise NotFoundError("assignment not found")
    return assignment


def worker_progress(*, project: Project, worker) -> dict:
    """What the annotator sees: their submissions, and how full their variant's items are."""
    binding = WorkerVariantBinding.objects.filter(project=project, worker=worker).first()
    submitted = Assignment.objects.filter(
        item__project=project, worker=worker, status=AssignmentStatus.SUBMITTED
    ).count()
    quota = project.annotators_per_item * project.items.count()
    filled = (
        Assignment.objects.filter(
            LIVE_ASSIGNMENT,
            variant_id=binding.variant_id,
            round=1,
            status=AssignmentStatus.SUBMITTED,
        ).count()
        if binding
        else 0
    )
    return {"submitted_by_you": submitted, "variant_submitted": filled, "variant_quota": quota}


def project_progress(*, project: Project) -> dict:
    """Per variant: submissions, open leases, complete items; per worker: counts by status."""
    quota = project.annotators_per_item
    per_variant = []
    for variant in InstructionVariant.objects.filter(project=project).order_by("name", "version"):
        rows = Assignment.objects.filter(variant=variant, round=1)
        submitted = rows.filter(status=AssignmentStatus.SUBMITTED)
        complete = submitted.values("item").annotate(n=Count("pk")).filter(n__gte=quota).count()
        per_variant.append(
            {
                "variant_id": variant.pk,
                "name": variant.name,
                "version": variant.version,
                "active": variant.active,
                "workers": variant.bindings.count(),
                "submitted": submitted.count(),
                "leased": rows.filter(status=AssignmentStatus.LEASED).count(),
                "items_complete": complete,
                "items_total": project.items.count(),
                "quota_per_item": quota,
            }
        )
    per_worker = list(
        Assignment.objects.filter(item__project=project)
        .values("worker__username", "variant__name")
        .annotate(
            submitted=Count("pk", filter=Q(status=AssignmentStatus.SUBMITTED)),
            leased=Count("pk", filter=Q(status=AssignmentStatus.LEASED)),
            skipped=Count("pk", filter=Q(status=AssignmentStatus.SKIPPED)),
            expired=Count("pk", filter=Q(status=AssignmentStatus.EXPIRED)),
        )
        .order_by("worker__username")
    )
    return {"variants": per_variant, "workers": per_worker}


def variant_list(*, project: Project) -> QuerySet[InstructionVariant]:
    return InstructionVariant.objects.filter(project=project).order_by("name", "version")


def variant_get(*, project: Project, variant_id: int) -> InstructionVariant:
    variant = InstructionVariant.objects.filter(project=project, pk=variant_id).first()
    if variant is None:
        raise NotFoundError("variant not found")
    return variant


def item_token_texts(item: Item) -> tuple[list[str], dict[str, int]]:
    """The item's token texts, documents concatenated in order, and each docid's offset."""
    return items_token_texts([item.pk]).get(item.pk, ([], {}))


def items_token_texts(item_ids) -> dict[int, tuple[list[str], dict[str, int]]]:
    """`item_token_texts` of many items, in one query."""
    found: dict[int, tuple[list[str], dict[str, int]]] = {}
    for link in (
        ItemDocument.objects.filter(item_id__in=list(item_ids))
        .select_related("document")
        .order_by("item_id", "position")
    ):
        texts, offsets = found.setdefault(link.item_id, ([], {}))
        offsets[link.document.docid] = len(texts)
        texts.extend(link.document.token_texts())
    return found


def annotation_set_tokens(annotation: Annotation) -> list[dict]:
    """An annotation's rationale sets in order: id, position, and the highlighted token
    indexes per document (spans expanded)."""
    sets = []
    for rset in annotation.rationale_sets.order_by("position").prefetch_related("spans__document"):
        tokens: dict[str, list[int]] = {}
        for span in rset.spans.all():
            tokens.setdefault(span.document.docid, []).extend(
                range(span.start_token, span.end_token)
            )
        sets.append({"id": rset.pk, "position": rset.position, "tokens": tokens})
    return sets
