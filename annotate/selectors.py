from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

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
    MemberConsent,
    Perturbation,
    PerturbationEvent,
    PerturbationStatus,
    Project,
    ProjectMembership,
    Role,
    TaskType,
    WorkerVariantBinding,
    item_not_deleted,
)
from annotate.participants import consent_refusal, is_participant, variant_hidden
from annotate.perturbation_types import available_types
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


def project_list_for_user(*, user, only_ids: frozenset[int] | None = None) -> QuerySet[Project]:
    """The projects `user` belongs to (every one for a superuser), deleted ones left out;
    an archived project only for those who hold a role beyond annotating in it. With
    `only_ids` (an API token's project limit), only those of them."""
    projects = Project.objects.all()
    if only_ids is not None:
        projects = projects.filter(pk__in=only_ids)
    if not user.is_superuser:
        beyond_annotating = ProjectMembership.objects.filter(
            project=OuterRef("pk"), user=user
        ).exclude(role=Role.ANNOTATOR)
        projects = projects.filter(memberships__user=user).distinct()
        projects = projects.filter(Q(archived_at__isnull=True) | Exists(beyond_annotating))
    live_items = Count("items", filter=Q(items__deleted_at__isnull=True), distinct=True)
    return projects.annotate(item_count=live_items).order_by("name")


_PROJECT_WITH_ROLE = PreparedStatement(
    "rw_project_role",
    f"SELECT m.role AS held_role, m.consent AS held_consent, {columns(Project, 'p')} "  # noqa: S608 - model names only
    f"FROM {ProjectMembership._meta.db_table} m "
    f"JOIN {Project._meta.db_table} p ON p.id = m.project_id "
    "WHERE m.project_id = %(project)s AND m.user_id = %(user)s AND p.deleted_at IS NULL",
    [("project", "bigint"), ("user", "bigint")],
)


def _project_and_held_roles(
    *, project_id: int, user, roles: tuple[str, ...] | None
) -> tuple[Project, dict[str, str]]:
    """The project and the caller's roles in it, each with the membership's consent."""
    if user.is_authenticated and not user.is_superuser:
        # One query for the project and the caller's roles in it. It runs on every call of
        # every project endpoint, "next item" included, so it is a plain SELECT: built by
        # the ORM, the query cost three times the CPU of running it.
        rows = _PROJECT_WITH_ROLE.instances(
            Project,
            {"project": project_id, "user": user.pk},
            extra=("held_role", "held_consent"),
        )
        if not rows:
            raise NotFoundError("project not found")
        project, held = rows[0], {row.held_role: row.held_consent for row in rows}
    else:
        project = Project.objects.filter(pk=project_id).first()
        if project is None:
            raise NotFoundError("project not found")
        held = dict.fromkeys(
            project_roles_of_user(project=project, user=user), MemberConsent.NOT_ASKED
        )
        if not held:
            raise NotFoundError("project not found")
    if roles is not None and not held.keys() & set(roles):
        raise PermissionDeniedError(
            f"this needs the {' or '.join(roles)} role in project {project.name!r}"
        )
    return project, held


def project_get_for_user(*, project_id: int, user, roles: tuple[str, ...] | None = None) -> Project:
    """The project if `user` holds one of `roles` in it (any role when None).

    Non-members get NotFound, so that project ids do not leak; members without the
    role get PermissionDenied.
    """
    return _project_and_held_roles(project_id=project_id, user=user, roles=roles)[0]


@dataclass(frozen=True)
class AnnotatorAccess:
    """A member who may be served work in a project, and what they may see of it."""

    project: Project
    variant_hidden: bool
    # Joined through a study link: their counts are of the study, not of the project.
    participant: bool


def _annotator_access(project: Project, held: dict[str, str]) -> AnnotatorAccess:
    consent = held.get(Role.ANNOTATOR)
    refusal = consent_refusal(consent)
    if refusal is not None:
        raise refusal
    return AnnotatorAccess(
        project=project,
        variant_hidden=variant_hidden(
            roles=held.keys(), consent=consent, blind_annotators=project.blind_annotators
        ),
        participant=is_participant(consent),
    )


def project_get_for_annotating(*, project_id: int, user) -> AnnotatorAccess:
    """The project for its annotator `user`, as `project_get_for_user` finds it (in the
    same one query), provided their consent lets them work (ConsentRequiredError)."""
    project, held = _project_and_held_roles(
        project_id=project_id, user=user, roles=(Role.ANNOTATOR,)
    )
    return _annotator_access(project, held)


def annotator_access_get(*, project: Project, user) -> AnnotatorAccess:
    """`project_get_for_annotating` for a project already loaded (through an assignment of
    the user's, or their study session), whatever their roles now: their consent checked,
    and what they may see. The same plain SELECT, as the crowd's work page runs it too."""
    if user.is_superuser:
        held = dict.fromkeys(Role.values, MemberConsent.NOT_ASKED)
    else:
        rows = _PROJECT_WITH_ROLE.instances(
            Project,
            {"project": project.pk, "user": user.pk},
            extra=("held_role", "held_consent"),
        )
        held = {row.held_role: row.held_consent for row in rows}
    return _annotator_access(project, held)


def import_job_list(*, project: Project) -> QuerySet[ImportJob]:
    """The project's imports, deleted ones left out (the data page lists those apart)."""
    return ImportJob.objects.filter(project=project, deleted_at__isnull=True).select_related(
        "created_by"
    )


def import_job_get(*, project: Project, job_id: int) -> ImportJob:
    job = ImportJob.objects.filter(project=project, pk=job_id).first()
    if job is None:
        raise NotFoundError("import job not found")
    return job


def assignment_with_item_documents(assignment: Assignment, *, project, variant) -> Assignment:
    """Attach the item and its documents to a just-leased assignment in one query, for
    the annotator's response (the project and variant are already loaded)."""
    links = list(
        ItemDocument.objects.filter(item_id=assignment.item_id)
        .select_related("document", "item")
        .order_by("position")
    )
    item = links[0].item if links else Item.all_objects.get(pk=assignment.item_id)
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
    if assignment.item.deleted_at is not None:
        raise NotFoundError(
            "this item was deleted from the project; ask for the next item",
            extra={"code": "item_deleted"},
        )
    return assignment


def assignment_check_owned(*, assignment_id: int, worker) -> None:
    """Raises NotFoundError unless the assignment is the worker's: the one answer anyone
    else gets about it, whatever they sent."""
    if not Assignment.objects.filter(pk=assignment_id, worker=worker).exists():
        raise NotFoundError("assignment not found")


@dataclass(frozen=True)
class NoWork:
    """Why "next" found no item for a worker, and where they may go: a code for scripts,
    the words for people (English here; the workspace shows its own translation by code)."""

    code: str
    detail: str

    def as_dict(self) -> dict:
        return {"code": self.code, "detail": self.detail}


NO_WORK_MESSAGES = {
    "no_items": (
        "This project has no items to annotate yet. Come back once its admin has imported "
        "data; your other projects are on the home page."
    ),
    "done_by_you": (
        "You have annotated every item of this project that can be given to you: your share "
        "here is done. Thank you! Your other projects are on the home page."
    ),
    "leased_by_others": (
        "Every remaining item is being annotated by others right now. An item comes back "
        "when its annotator skips it or their time runs out: try again in a few minutes."
    ),
    "complete": (
        "Every item has all the annotations it needs: nothing is left to do in this "
        "project. Your other projects are on the home page."
    ),
}


def no_work_reason(*, project: Project, worker) -> NoWork:
    """Why the worker got no item, read only once "next" has found none (so the hot path
    pays nothing for it): no items at all, every item already theirs once, the rest held
    by others' leases, or everything complete. Gates (qualification, consent, an archived
    project) and a missing variant refuse before "next" looks for items."""
    items = Item.objects.filter(project=project, held_out=False)
    if not items.exists():
        code = "no_items"
    else:
        untouched = items.exclude(
            Exists(Assignment.objects.filter(item=OuterRef("pk"), worker=worker))
        )
        if not untouched.exists():
            code = "done_by_you"
        elif untouched.filter(
            Exists(Assignment.objects.filter(item=OuterRef("pk"), status=AssignmentStatus.LEASED))
        ).exists():
            code = "leased_by_others"
        else:
            code = "complete"
    return NoWork(code=code, detail=NO_WORK_MESSAGES[code])


def worker_progress(*, access: AnnotatorAccess, worker) -> dict:
    """What the annotator sees: their submissions, and how full their variant's items are;
    only their submissions where the variant is hidden from them (`counted_in` says
    whether those are of a study they take part in or of the project)."""
    project = access.project
    submitted = Assignment.objects.filter(
        item_not_deleted(), item__project=project, worker=worker, status=AssignmentStatus.SUBMITTED
    ).count()
    if access.variant_hidden:
        return {
            "submitted_by_you": submitted,
            "counted_in": "study" if access.participant else "project",
        }
    binding = WorkerVariantBinding.objects.filter(project=project, worker=worker).first()
    quota = project.annotators_per_item * project.items.count()
    filled = (
        Assignment.objects.filter(
            LIVE_ASSIGNMENT,
            item_not_deleted(),
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
        rows = Assignment.objects.filter(item_not_deleted(), variant=variant, round=1)
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
        Assignment.objects.filter(item_not_deleted(), item__project=project)
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


@dataclass(frozen=True)
class ProjectProgressSummary:
    items_total: int
    items_complete: int
    annotations_submitted: int
    # First-round annotations in active variants, against what the quotas ask for.
    quota_submitted: int = 0
    quota_total: int = 0

    @property
    def percent_complete(self) -> int:
        return round(100 * self.items_complete / self.items_total) if self.items_total else 0

    @property
    def percent_of_quota(self) -> int:
        return round(100 * self.quota_submitted / self.quota_total) if self.quota_total else 0


def _count_of(queryset: QuerySet, group: str) -> Subquery:
    """The number of `queryset`'s rows, as a subquery correlated on its `group` field."""
    return Coalesce(Subquery(queryset.values(group).annotate(n=Count("pk")).values("n")), 0)


def project_progress_summaries(*, project_ids: list[int]) -> dict[int, ProjectProgressSummary]:
    """Per project: its items, those complete, the annotations submitted and the first-round
    annotations against the quotas, in two queries whatever the number of projects.

    An item is complete when every active variant holds its quota of submitted first-round
    annotations of it; live slots cap each variant at its quota, so the item's count of them
    against quota times active variants says so without a row per item and variant.
    """
    if not project_ids:
        return {}
    first_round = Assignment.objects.filter(
        item_not_deleted(), round=1, status=AssignmentStatus.SUBMITTED, variant__active=True
    )
    active_variants = InstructionVariant.objects.filter(active=True)
    rows = (
        Project.objects.filter(pk__in=project_ids)
        .annotate(
            n_items=_count_of(Item.objects.filter(project=OuterRef("pk")), "project"),
            n_active=_count_of(active_variants.filter(project=OuterRef("pk")), "project"),
            n_annotations=_count_of(
                Annotation.objects.filter(
                    item_not_deleted("assignment__item"), assignment__item__project=OuterRef("pk")
                ),
                "assignment__item__project",
            ),
            n_first_round=_count_of(
                first_round.filter(item__project=OuterRef("pk")), "item__project"
            ),
        )
        .values_list(
            "pk", "annotators_per_item", "n_items", "n_active", "n_annotations", "n_first_round"
        )
    )
    complete = dict(
        Item.objects.filter(project_id__in=project_ids)
        .annotate(
            submitted=_count_of(first_round.filter(item=OuterRef("pk")), "item"),
            needed=F("project__annotators_per_item")
            * _count_of(active_variants.filter(project=OuterRef("project_id")), "project"),
        )
        .filter(needed__gt=0, submitted__gte=F("needed"))
        .values("project_id")
        .annotate(n=Count("pk"))
        .values_list("project_id", "n")
    )
    return {
        pk: ProjectProgressSummary(
            items_total=n_items,
            items_complete=complete.get(pk, 0),
            annotations_submitted=n_annotations,
            quota_submitted=n_first_round,
            quota_total=n_items * quota * n_active,
        )
        for pk, quota, n_items, n_active, n_annotations, n_first_round in rows
    }


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


# ---------------------------------------------------------------- perturbations


def _perturbation_originals(project: Project) -> QuerySet[Item]:
    """Items an author may perturb: neither perturbations themselves nor held out."""
    return Item.objects.filter(project=project, perturbation_of__isnull=True, held_out=False)


def _accepted_perturbations() -> Count:
    """An original's accepted perturbations: the items linked to it (`perturbation_of`), made
    by accepting a draft here or brought by a benchmark file. The one definition the
    originals' table, its "below quota" filter and the progress figures all count by."""
    return Count("perturbations", distinct=True)


def _documents_in_order() -> Prefetch:
    # The token arrays stay in the database: these pages show text, not tokens.
    return Prefetch(
        "item_documents",
        queryset=ItemDocument.objects.select_related("document")
        .defer("document__tokens", "document__sentences")
        .order_by("position"),
    )


def perturbation_original_list(
    *, project: Project, search: str = "", below_quota: bool = False
) -> QuerySet[Item]:
    """The originals with their perturbations counted by status; `search` matches the
    item id or any of its texts."""
    items = _perturbation_originals(project)
    if search:
        items = items.filter(
            Q(annotation_id__icontains=search)
            | Q(
                pk__in=ItemDocument.objects.filter(
                    item__project=project, document__text__icontains=search
                ).values("item_id")
            )
        )
    # Drafts waiting or refused are counted as drafts; what is accepted is counted as items.
    items = items.annotate(
        **{
            f"perturbations_{status}": Count(
                "perturbation_drafts",
                filter=Q(perturbation_drafts__status=status),
                distinct=True,
            )
            for status in (PerturbationStatus.PENDING, PerturbationStatus.REJECTED)
        },
        perturbations_accepted=_accepted_perturbations(),
    )
    if below_quota:
        items = items.filter(perturbations_accepted__lt=project.perturbations_per_original)
    return items.prefetch_related(_documents_in_order()).order_by("pk")


def perturbation_original_get(*, project: Project, item_id: int) -> Item:
    item = (
        _perturbation_originals(project)
        .prefetch_related(
            _documents_in_order(),
            Prefetch(
                "perturbation_drafts",
                queryset=Perturbation.objects.select_related("author", "item").order_by("pk"),
            ),
        )
        .filter(pk=item_id)
        .first()
    )
    if item is None:
        raise NotFoundError("original item not found")
    return item


def _with_detail(perturbations: QuerySet[Perturbation]) -> QuerySet[Perturbation]:
    return perturbations.select_related("original", "author", "checker", "item").prefetch_related(
        Prefetch("original__item_documents", queryset=_documents_in_order().queryset),
        Prefetch("events", queryset=PerturbationEvent.objects.select_related("actor")),
    )


def perturbation_list(
    *, project: Project, user, status: str | None = None, original_id: int | None = None
) -> QuerySet[Perturbation]:
    """The project's perturbations; an author who is neither checker nor admin sees only
    their own."""
    perturbations = Perturbation.objects.filter(item_not_deleted("original"), project=project)
    roles = project_roles_of_user(project=project, user=user)
    if not roles & {Role.ADMIN, Role.CHECKER}:
        perturbations = perturbations.filter(author=user)
    if status:
        perturbations = perturbations.filter(status=status)
    if original_id is not None:
        perturbations = perturbations.filter(original_id=original_id)
    return perturbations.select_related("original", "author", "checker", "item").order_by("pk")


def perturbation_check_queue(*, project: Project, checker) -> QuerySet[Perturbation]:
    """Pending perturbations of other authors, oldest first: nobody checks their own."""
    return (
        Perturbation.objects.filter(
            item_not_deleted("original"), project=project, status=PerturbationStatus.PENDING
        )
        .exclude(author=checker)
        .select_related("original", "author")
        .order_by("created_at", "pk")
    )


def perturbation_get(*, project: Project, perturbation_id: int, user) -> Perturbation:
    perturbations = Perturbation.objects.filter(
        item_not_deleted("original"), project=project, pk=perturbation_id
    )
    roles = project_roles_of_user(project=project, user=user)
    if not roles & {Role.ADMIN, Role.CHECKER}:
        perturbations = perturbations.filter(author=user)
    perturbation = _with_detail(perturbations).first()
    if perturbation is None:
        raise NotFoundError("perturbation not found")
    return perturbation


def perturbation_check_figures(*, project: Project) -> dict:
    """The check step in figures: counts by outcome, and the share of decided
    perturbations that checkers accepted as the author wrote them."""
    counts = dict(
        Perturbation.objects.filter(item_not_deleted("original"), project=project)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    edited = Perturbation.objects.filter(
        item_not_deleted("original"),
        project=project,
        status=PerturbationStatus.ACCEPTED,
        edited_in_check=True,
    ).count()
    accepted = counts.get(PerturbationStatus.ACCEPTED, 0)
    rejected = counts.get(PerturbationStatus.REJECTED, 0)
    decided = accepted + rejected
    return {
        "pending": counts.get(PerturbationStatus.PENDING, 0),
        "accepted": accepted,
        "accepted_unchanged": accepted - edited,
        "accepted_edited": edited,
        "rejected": rejected,
        "decided": decided,
        "accepted_unchanged_share": (accepted - edited) / decided if decided else None,
    }


def perturbation_progress(*, project: Project) -> dict:
    """Per type: perturbations by status against the per-type quota (one perturbation
    counts for each of its types); originals short of the per-original quota; the check.

    What is accepted is what became an item linked to its original: the drafts accepted
    here, and the perturbed items a benchmark file brought with it (checked where it was
    made). Pending and rejected ones are drafts."""
    per_type: dict[str, dict[str, int]] = {}

    def count(types, status) -> None:
        for key in types or []:
            row = per_type.setdefault(key, dict.fromkeys(PerturbationStatus.values, 0))
            row[status] += 1

    for types, status in (
        Perturbation.objects.filter(item_not_deleted("original"), project=project)
        .exclude(status=PerturbationStatus.ACCEPTED)
        .values_list("types", "status")
    ):
        count(types, status)
    for types in Item.objects.filter(project=project, perturbation_of__isnull=False).values_list(
        "perturbation_types", flat=True
    ):
        count(types, PerturbationStatus.ACCEPTED)
    target = project.perturbations_per_type
    types = []
    for entry in available_types(project.perturbation_types):
        counts = per_type.get(entry["key"], dict.fromkeys(PerturbationStatus.values, 0))
        types.append(
            {
                **entry,
                **counts,
                "target": target,
                "remaining": max(0, target - counts[PerturbationStatus.ACCEPTED]),
            }
        )
    originals = _perturbation_originals(project)
    per_original = project.perturbations_per_original
    below = (
        originals.annotate(accepted=_accepted_perturbations())
        .filter(accepted__lt=per_original)
        .count()
    )
    return {
        "types": types,
        "originals": {
            "total": originals.count(),
            "below_quota": below,
            "per_original_target": per_original,
            "with_perturbations": originals.filter(
                Q(perturbation_drafts__isnull=False) | Q(perturbations__isnull=False)
            )
            .distinct()
            .count(),
        },
        "check": perturbation_check_figures(project=project),
    }
