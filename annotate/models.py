"""Projects, documents, items, instruction variants, assignments, annotations
(docs/design/architecture.md#data-model-and-its-invariants).

Invariants that concurrent requests could break are database constraints here; the
services hold the rules that need several rows at once, under row locks.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from annotate.account_rules import CROWD_ACCOUNT_ROLES, membership_role_refusal
from annotate.fields import Int32PairsField
from annotate.platform_accounts import platform_accounts
from config.text_limits import (
    COMMENT_MAX_CHARS,
    INSTRUCTIONS_MAX_CHARS,
    PROJECT_DESCRIPTION_MAX_CHARS,
    max_chars,
    max_chars_constraint,
)


class Role(models.TextChoices):
    ADMIN = "admin", _("Admin")
    RESEARCHER = "researcher", _("Researcher")
    REVIEWER = "reviewer", _("Reviewer")
    ANNOTATOR = "annotator", _("Annotator")
    # The fine-grained benchmark's perturbation step: authors write perturbed copies of
    # items, checkers accept, edit or reject them.
    AUTHOR = "author", _("Perturbation author")
    CHECKER = "checker", _("Perturbation checker")
    # Adjudicates an item's annotations into its gold rationale sets (admins may too).
    CURATOR = "curator", _("Curator")


class TaskType(models.TextChoices):
    CLASSIFICATION = "classification", _("Single text")
    SENTENCE_PAIR = "sentence_pair", _("Text pair")
    READING_COMPREHENSION = "reading_comprehension", _("Reading comprehension")
    MULTIPLE_CHOICE = "multiple_choice", _("Multiple choice")


class Language(models.TextChoices):
    ENGLISH = "en", _("English")
    CHINESE = "zh", _("Chinese")


class Split(models.TextChoices):
    TRAIN = "train", "train"
    VAL = "val", "val"
    TEST = "test", "test"
    UNASSIGNED = "", "unassigned"


class LiveProjectManager(models.Manager):
    """Projects not deleted. The default manager, so that a deleted project is gone from
    every list and every look-up by id (404) at once; `Project.all_objects` sees it too,
    for the deleted projects' list, restore and the purge."""

    def get_queryset(self):
        return super().get_queryset().filter(deleted_at__isnull=True)


class Project(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True, validators=max_chars(PROJECT_DESCRIPTION_MAX_CHARS))
    task_type = models.CharField(
        max_length=32, choices=TaskType.choices, default=TaskType.CLASSIFICATION
    )
    labels = models.JSONField(default=list, blank=True)
    language = models.CharField(max_length=8, choices=Language.choices, default=Language.ENGLISH)
    annotators_per_item = models.PositiveSmallIntegerField(default=3)
    min_highlight = models.PositiveSmallIntegerField(
        default=1, help_text="Tokens a submission must highlight; 0 allows empty submissions."
    )
    max_rounds = models.PositiveSmallIntegerField(default=3)
    reviewers_per_annotation = models.PositiveSmallIntegerField(default=2)
    sufficiency_threshold = models.FloatField(default=8 / 3)
    compactness_threshold = models.FloatField(default=11 / 3)
    comprehensiveness_threshold = models.FloatField(default=8 / 3)
    lease_seconds = models.PositiveIntegerField(default=30 * 60)
    allow_variant_mixing = models.BooleanField(
        default=False, help_text="Let one worker annotate under several variants (within-subjects)."
    )
    allocation_seed = models.PositiveIntegerField(
        default=0, help_text="Seed of the balanced random allocation of workers to variants."
    )
    allocated_workers = models.PositiveIntegerField(
        default=0,
        help_text="Workers allocated to a variant so far: the last ticket handed out.",
    )
    text_names = models.JSONField(
        default=list,
        blank=True,
        help_text="What a text pair's two texts are called (default 'Text 1', 'Text 2').",
    )
    labels_from_annotators = models.BooleanField(
        default=False,
        help_text="Annotators pick the label (or answer) themselves; the gold is not shown.",
    )
    question_rationales = models.BooleanField(
        default=False,
        help_text="Reading comprehension: rationales may also be highlighted in the question.",
    )
    multi_set_mode = models.BooleanField(
        default=False,
        help_text="The fine-grained benchmark's several rationale sets: every variant's "
        "instruction invites annotators to make one set per group that justifies the result. "
        "Off in the instruction study's presets.",
    )
    blind_annotators = models.BooleanField(
        default=False,
        help_text="Annotators see their instruction's text and examples only, never which "
        "variant it is (its name, version or per-variant counts). A study's participants are "
        "always blinded; admins, researchers and reviewers never are.",
    )
    perturbation_types = models.JSONField(
        default=list,
        blank=True,
        help_text="Perturbation types this project adds to the benchmark's three.",
    )
    perturbations_per_original = models.PositiveSmallIntegerField(
        default=1, help_text="Quota: accepted perturbations each original item needs."
    )
    perturbations_per_type = models.PositiveIntegerField(
        default=0, help_text="Quota: accepted perturbations each type needs in the project."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # A finished project: read-only, off the annotators' lists, still exportable.
    archived_at = models.DateTimeField(null=True, blank=True)
    # Deleted softly: hidden everywhere at once, restorable until the sweep removes it.
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = LiveProjectManager()
    all_objects = models.Manager()  # noqa: DJ012 - a manager, not a field

    class Meta:
        ordering = ["name"]
        constraints = [
            max_chars_constraint(
                "description",
                PROJECT_DESCRIPTION_MAX_CHARS,
                name="project_description_max_chars",
            ),
            models.CheckConstraint(
                condition=Q(annotators_per_item__gte=1), name="project_annotators_per_item_gte_1"
            ),
            models.CheckConstraint(condition=Q(max_rounds__gte=1), name="project_max_rounds_gte_1"),
            models.CheckConstraint(
                condition=Q(sufficiency_threshold__gte=1, sufficiency_threshold__lte=3)
                & Q(compactness_threshold__gte=1, compactness_threshold__lte=4)
                & Q(comprehensiveness_threshold__gte=1, comprehensiveness_threshold__lte=3),
                name="project_review_thresholds_in_scale",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class MemberConsent(models.TextChoices):
    """A member's consent to take part in a study. Asked of those who join a project through
    a study link (crowd participants) only: until they give it, and for good once they
    decline it, they are served no work and can store none."""

    NOT_ASKED = "not_asked", _("Not asked (not a study participant)")
    PENDING = "pending", _("Asked, not answered yet")
    GIVEN = "given", _("Given")
    DECLINED = "declined", _("Declined")


class ProjectMembership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    # Kept on the membership, which every "next" already reads with the caller's roles
    # (annotate.selectors), so that the consent check costs "next" no query of its own.
    consent = models.CharField(
        max_length=16, choices=MemberConsent.choices, default=MemberConsent.NOT_ASKED
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user", "role"], name="membership_unique_project_user_role"
            )
        ]
        indexes = [models.Index(fields=["user", "project"])]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.project}"

    def clean(self) -> None:
        """Model forms (the Django admin's) refuse a role the account may not hold, as the
        services do (annotate.services.membership_roles)."""
        if self.user_id is None or self.role in CROWD_ACCOUNT_ROLES:
            return
        refusal = membership_role_refusal(
            role=self.role, signs_in_through_platform=bool(platform_accounts([self.user_id]))
        )
        if refusal:
            raise ValidationError({"role": refusal})


class Document(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    docid = models.CharField(max_length=255)
    text = models.TextField()
    # Per token, in order: (char_start, char_end) into `text`. Sentences: (start_token,
    # end_token), half-open. Both read back as numpy (n, 2) arrays.
    tokens = Int32PairsField()
    sentences = Int32PairsField()
    token_count = models.PositiveIntegerField()
    text_sha256 = models.CharField(max_length=64)
    tokenizer = models.CharField(
        max_length=64, help_text="'given' for imported ERASER tokens, else the spaCy pipeline used."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "docid"]
        constraints = [
            models.UniqueConstraint(fields=["project", "docid"], name="document_unique_docid"),
        ]

    def __str__(self) -> str:
        return self.docid

    def token_texts(self) -> list[str]:
        text = self.text
        return [text[s:e] for s, e in self.tokens.tolist()]


class LiveItemManager(models.Manager):
    """Items not deleted (alone, with their import or with their project). The default
    manager, so that every list of items, the fill rows "next" creates and the reverse
    relations (project.items) leave deleted items out; reads that join through an item
    from an assignment or an annotation filter on `LIVE_ITEM` themselves. `Item.all_objects`
    sees every item, for restore and the purge."""

    def get_queryset(self):
        return super().get_queryset().filter(deleted_at__isnull=True)


class Item(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    # ERASER's annotation_id, kept with its JSON type (an integer in real BoolQ data).
    annotation_id = models.CharField(max_length=255)
    annotation_id_is_int = models.BooleanField(default=False)
    documents = models.ManyToManyField(Document, through="ItemDocument", related_name="items")
    query = models.TextField(null=True, blank=True)
    query_type = models.CharField(max_length=64, null=True, blank=True)
    label = models.CharField(max_length=255, null=True, blank=True)
    split = models.CharField(
        max_length=8, choices=Split.choices, default=Split.UNASSIGNED, blank=True
    )
    # The instance as imported: `docids` as given (null, absent or a list), the keys present,
    # and values of keys ERASER does not define, so an export can reproduce the line.
    declared_docids = models.JSONField(null=True, blank=True)
    source_keys = models.JSONField(default=list, blank=True)
    source_extra = models.JSONField(default=dict, blank=True)
    source_sha256 = models.CharField(max_length=64, blank=True)
    perturbation_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="perturbations"
    )
    # The perturbation types that made this item from `perturbation_of` (one or more).
    perturbation_types = models.JSONField(default=list, blank=True)
    # Reading comprehension: {"docid", "start_char", "end_char", "text"} of the gold answer
    # in its passage, or {"none": true} when the passage holds no answer.
    answer = models.JSONField(null=True, blank=True)
    # Multiple choice: the options in order (the label names the right one).
    options = models.JSONField(default=list, blank=True)
    held_out = models.BooleanField(
        default=False,
        help_text="Kept out of ordinary work, e.g. a qualification test's gold item.",
    )
    # The import that brought the item in (null: made in the app, e.g. an accepted
    # perturbation, or imported before imports were recorded on items).
    import_job = models.ForeignKey(
        "ImportJob", null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    # Annotated under this variant only (the data manager's "assign to a variant"): the
    # item has no fill rows of the other variants, so "next" never offers it under them.
    pinned_variant = models.ForeignKey(
        "InstructionVariant", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept out of every export (set in the data manager).
    excluded = models.BooleanField(default=False)
    # Part of the project's gold set: its curated annotation is the gold rationale.
    marked_gold = models.BooleanField(default=False)
    # Deleted softly (alone, with its import or with its project): hidden everywhere at
    # once, restorable until the sweep removes it.
    deleted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = LiveItemManager()
    all_objects = models.Manager()  # noqa: DJ012 - a manager, not a field

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "annotation_id"], name="item_unique_annotation_id"
            ),
        ]
        # The data manager's first pages in id order, alone or within a split or a label
        # (the project's items are its list; the id breaks every tie).
        indexes = [
            models.Index(fields=["project", "id"], name="item_project_id"),
            models.Index(fields=["project", "split", "id"], name="item_project_split_id"),
            models.Index(fields=["project", "label", "id"], name="item_project_label_id"),
        ]

    def __str__(self) -> str:
        return self.annotation_id

    @property
    def annotation_id_value(self) -> str | int:
        return int(self.annotation_id) if self.annotation_id_is_int else self.annotation_id


class PerturbationType(models.TextChoices):
    """The fine-grained benchmark's three perturbation types; projects may add their own."""

    DISPENSABLE_WORDS = "dispensable_words", _("Dispensable words altered")
    IMPORTANT_WORDS = "important_words", _("Important words altered")
    SYNTAX = "syntax", _("Syntax transformed")


class PerturbationStatus(models.TextChoices):
    PENDING = "pending", _("Waiting for a check")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")


class Perturbation(models.Model):
    """An author's perturbed copy of an original item, before and after its check.

    Only an accepted perturbation becomes an item (`item`), linked to its original, and
    only then enters the rationale-annotation queue. The checker is never the author.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="perturbations")
    original = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="perturbation_drafts")
    types = models.JSONField(help_text="One or more perturbation types.")
    # The edited texts, one per document of the original in its order, and the edited
    # query (a reading-comprehension question kept as the query).
    texts = models.JSONField()
    query = models.TextField(null=True, blank=True)
    label = models.CharField(max_length=255, null=True, blank=True)
    answer = models.JSONField(null=True, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="perturbations_authored"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(
        max_length=16, choices=PerturbationStatus.choices, default=PerturbationStatus.PENDING
    )
    checker = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="perturbations_checked",
    )
    checked_at = models.DateTimeField(null=True, blank=True)
    check_comment = models.TextField(blank=True, validators=max_chars(COMMENT_MAX_CHARS))
    edited_in_check = models.BooleanField(default=False)
    item = models.OneToOneField(
        Item, null=True, blank=True, on_delete=models.CASCADE, related_name="perturbation_source"
    )

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            max_chars_constraint(
                "check_comment", COMMENT_MAX_CHARS, name="perturbation_check_comment_max_chars"
            ),
            models.CheckConstraint(
                condition=Q(checker__isnull=True) | ~Q(checker=F("author")),
                name="perturbation_checker_is_not_author",
            ),
            models.CheckConstraint(
                condition=Q(status=PerturbationStatus.PENDING) | Q(checker__isnull=False),
                name="perturbation_checked_has_checker",
            ),
            models.CheckConstraint(
                condition=~Q(status=PerturbationStatus.ACCEPTED) | Q(item__isnull=False),
                name="perturbation_accepted_has_item",
            ),
        ]
        indexes = [models.Index(fields=["project", "status"])]

    def __str__(self) -> str:
        return f"perturbation {self.pk} of {self.original} ({self.status})"


class PerturbationAction(models.TextChoices):
    CREATED = "created", "Created"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"


class PerturbationEvent(models.Model):
    """The perturbation step's audit trail: who wrote, accepted or rejected which draft.

    Kept in `annotate` because qc's AuditEvent is about workers and `annotate` may not
    import `qc` (dependencies point exports -> crowd -> qc -> annotate). A checker's
    edits are recorded here as before/after pairs, so the author's own version survives
    the edit that the Perturbation row itself overwrites.
    """

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="perturbation_events"
    )
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="perturbation_events"
    )
    action = models.CharField(max_length=16, choices=PerturbationAction.choices)
    comment = models.TextField(blank=True, validators=max_chars(COMMENT_MAX_CHARS))
    # Accepted with edits: {field: [the author's value, the checker's value]}.
    changes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["perturbation", "created_at", "pk"]
        indexes = [models.Index(fields=["project", "created_at"])]
        constraints = [
            max_chars_constraint(
                "comment", COMMENT_MAX_CHARS, name="perturbationevent_comment_max_chars"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} perturbation {self.perturbation_id} by {self.actor}"


class DocumentRole(models.TextChoices):
    TEXT = "text", "Text"
    QUESTION = "question", "Question"


class ItemDocument(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="item_documents")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()
    # A reading-comprehension question imported as a document of its own, so that
    # rationales can be highlighted in it; every other document is a text.
    role = models.CharField(max_length=16, choices=DocumentRole.choices, default=DocumentRole.TEXT)

    class Meta:
        ordering = ["item", "position"]
        constraints = [
            models.UniqueConstraint(fields=["item", "document"], name="itemdocument_unique"),
            models.UniqueConstraint(
                fields=["item", "position"], name="itemdocument_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}#{self.position}: document {self.document_id}"


class Granularity(models.TextChoices):
    WORD = "word", _("Word")
    SPAN = "span", _("Span")


class InstructionVariant(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="variants")
    name = models.CharField(max_length=120)
    version = models.PositiveIntegerField(default=1)
    granularity = models.CharField(
        max_length=8, choices=Granularity.choices, default=Granularity.WORD
    )
    text = models.TextField(validators=max_chars(INSTRUCTIONS_MAX_CHARS))
    # [{"tokens": [...], "highlighted": [int, ...], "note": str}, ...]
    examples = models.JSONField(default=list, blank=True)
    active = models.BooleanField(default=True)
    # Model suggestions shown to its annotators, or null for none:
    # {"run": explainer run id, "k": tokens per item, "file": the run's predictions in the
    # storage}. Plain data, so that annotate reads them without importing exports; written
    # by exports.suggestions, which checks the run.
    suggestions = models.JSONField(null=True, blank=True)
    frozen_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when an assignment first uses it; then immutable."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name", "version"]
        constraints = [
            max_chars_constraint("text", INSTRUCTIONS_MAX_CHARS, name="variant_text_max_chars"),
            models.UniqueConstraint(
                fields=["project", "name", "version"], name="variant_unique_name_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class AssignmentStatus(models.TextChoices):
    LEASED = "leased", _("Leased")
    SUBMITTED = "submitted", _("Submitted")
    EXPIRED = "expired", _("Expired")
    SKIPPED = "skipped", _("Skipped")


LIVE_ASSIGNMENT = Q(status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED])


def item_not_deleted(path: str = "item") -> Q:
    """For reads that reach items through a join (an assignment's `item`, an annotation's
    `assignment__item`): the default manager hides deleted items only from queries on Item."""
    return Q(**{f"{path}__deleted_at__isnull": True})


class Assignment(models.Model):
    """(item, worker, variant, round) with a lease: the unit of work handed out.

    `slot` numbers the live assignments of an (item, variant, round) from 0; a partial
    unique constraint on it means concurrent hand-outs can never exceed the quota.
    """

    # No index of their own: item leads the (item, worker, round) constraint's index and
    # worker the (worker, status) index, and every lease and submit wrote to each index.
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="assignments",
        db_index=False,
    )
    variant = models.ForeignKey(
        InstructionVariant, on_delete=models.PROTECT, related_name="assignments"
    )
    round = models.PositiveSmallIntegerField(default=1)
    slot = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.LEASED
    )
    lease_expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # The browser's autosaved selection, restored on reload.
    draft = models.JSONField(null=True, blank=True)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    # Ended (skipped) because its item was deleted at this instant, the item's `deleted_at`:
    # restoring that deletion gives the lease back to its annotator, with its draft
    # (annotate/services/deletion.py). Null for every other assignment.
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "worker", "round"], name="assignment_unique_item_worker_round"
            ),
            models.UniqueConstraint(
                fields=["item", "variant", "round", "slot"],
                condition=LIVE_ASSIGNMENT,
                name="assignment_unique_live_slot",
            ),
            models.CheckConstraint(condition=Q(round__gte=1), name="assignment_round_gte_1"),
        ]
        indexes = [
            models.Index(fields=["worker", "status"]),
            models.Index(fields=["status", "lease_expires_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.item} -> {self.worker} ({self.variant}, round {self.round})"


class ItemVariantFill(models.Model):
    """How many live first-round assignments an (item, variant) holds.

    "Next item" searches this small index instead of counting assignments item by item,
    so its cost does not grow with the project. It changes by +1/-1 in the same
    transactions that lease, skip, expire or late-submit, and `fill_rows_sync` creates
    the missing rows (items or variants added later) from the assignments themselves. The
    partial unique constraint on live slots stays the guarantee against over-filling.
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="fills")
    # Leads the (variant, item) constraint's index; an index of its own only cost writes.
    variant = models.ForeignKey(
        InstructionVariant, on_delete=models.CASCADE, related_name="fills", db_index=False
    )
    live = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["variant", "item"], name="fill_unique_variant_item")
        ]
        indexes = [models.Index(fields=["variant", "-live", "item"], name="fill_variant_live_item")]

    def __str__(self) -> str:
        return f"{self.item} under {self.variant}: {self.live} live"


class WorkerVariantBinding(models.Model):
    """The variant a worker annotates under in a project (between-subjects design)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="variant_bindings")
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="variant_bindings"
    )
    variant = models.ForeignKey(
        InstructionVariant, on_delete=models.CASCADE, related_name="bindings"
    )
    seed = models.PositiveIntegerField(help_text="The project's allocation seed when bound.")
    ticket = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The worker's place in the project's allocation order, which with the "
        "seed decides the variant (permuted blocks); empty for bindings made by hand.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "worker"], name="binding_one_variant_per_worker"
            )
        ]

    def __str__(self) -> str:
        return f"{self.worker} -> {self.variant}"


class Annotation(models.Model):
    assignment = models.OneToOneField(
        Assignment, on_delete=models.CASCADE, related_name="annotation"
    )
    # Generated by the browser; a retried submit carries the same one and gets the same row.
    client_uuid = models.UUIDField(unique=True, default=uuid.uuid4)
    label = models.CharField(max_length=255, null=True, blank=True)
    time_spent_ms = models.PositiveIntegerField(default=0)
    revision_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="revisions"
    )
    # Null when its variant showed no model suggestions; otherwise what was shown and which
    # of them the annotator took into their sets: {"run": id, "k": int, "suggested":
    # [[docid, token], ...], "accepted": [[docid, token], ...]}.
    suggestions = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"annotation {self.pk} of {self.assignment}"


class RationaleSet(models.Model):
    """A group of spans that together support the label: ERASER's evidence group.

    It belongs either to a worker's annotation or, as a reference rationale that came
    with an imported dataset, directly to the item: exactly one of the two.
    """

    # Each owner leads its (owner, position) constraint's partial index, which serves any
    # lookup by owner; indexes of their own only cost every submit two more writes.
    annotation = models.ForeignKey(
        Annotation,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="rationale_sets",
        db_index=False,
    )
    reference_item = models.ForeignKey(
        Item,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="reference_sets",
        db_index=False,
    )
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(annotation__isnull=False) & Q(reference_item__isnull=True))
                | (Q(annotation__isnull=True) & Q(reference_item__isnull=False)),
                name="rationaleset_has_one_owner",
            ),
            models.UniqueConstraint(
                fields=["annotation", "position"],
                condition=Q(annotation__isnull=False),
                name="rationaleset_unique_annotation_position",
            ),
            models.UniqueConstraint(
                fields=["reference_item", "position"],
                condition=Q(reference_item__isnull=False),
                name="rationaleset_unique_reference_position",
            ),
        ]

    def __str__(self) -> str:
        owner = f"annotation {self.annotation_id}" if self.annotation_id else "reference"
        return f"set {self.position} of {owner}"


class RationaleSpan(models.Model):
    """Half-open token range [start_token, end_token) of one document."""

    # Leads the (rationale_set, position) constraint's index.
    rationale_set = models.ForeignKey(
        RationaleSet, on_delete=models.CASCADE, related_name="spans", db_index=False
    )
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    start_token = models.PositiveIntegerField()
    end_token = models.PositiveIntegerField()
    position = models.PositiveSmallIntegerField()
    # For imported evidences: the record's other fields as given (sentence indices, text,
    # unknown keys and the key order), so the reference rationales export unchanged.
    source_fields = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end_token__gte=F("start_token")), name="span_end_not_before_start"
            ),
            models.UniqueConstraint(
                fields=["rationale_set", "position"], name="span_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.start_token}, {self.end_token}) of document {self.document_id}"


class JobStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


class ImportFormat(models.TextChoices):
    ERASER = "eraser", "ERASER directory or zip"
    JSONL = "jsonl", "JSONL of raw texts"
    CSV = "csv", "CSV of raw texts"
    BENCHMARK = "benchmark", "Fine-grained benchmark JSONL"
    HF = "hf", "Hugging Face dataset (Parquet, Arrow, or a folder or zip of them)"


def import_upload_path(job: ImportJob, filename: str) -> str:
    return f"imports/project-{job.project_id}/{uuid.uuid4().hex}-{filename}"


class BackgroundJob(models.Model):
    """What every background job records besides its status: its phase and progress, how
    it ended, and the heartbeat its worker writes while it runs (a running job whose
    heartbeat stops has lost its worker)."""

    phase = models.CharField(max_length=32, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]


class JobPart(models.Model):
    """What every staged chunk of a split job has: the attempt it belongs to and when it
    was written.

    A job split into a chord (import, export, explainer run, agreement report) stages one
    row per chunk, unique by job and chunk, so a chunk run again replaces its row. A job
    started again gets a new `attempt`, and its last step reads only that attempt's rows:
    an earlier attempt's leftovers never reach a published result, and the sweeps delete
    them."""

    attempt = models.CharField(max_length=32)
    written_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class ImportJob(BackgroundJob):
    """A dataset import run in the background; the page polls status and progress."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_format = models.CharField(max_length=16, choices=ImportFormat.choices)
    source_name = models.CharField(max_length=255)
    upload = models.FileField(upload_to=import_upload_path, max_length=500)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    problems = models.JSONField(default=list, blank=True)
    # What the format reads the upload with: a Hugging Face dataset's column mapping
    # ({"mapping": {role: column}}, annotate/hf_mapping.py).
    options = models.JSONField(default=dict, blank=True)
    # Each run of the job has its own; its chunks and its last step act only while the job
    # still runs under it (a job started again supersedes them).
    attempt = models.CharField(max_length=32, blank=True)
    # Deleted softly with its items: restorable until the sweep removes it.
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"import {self.pk} of {self.source_name} ({self.status})"


class ImportPart(JobPart):
    """A chunk of an import's rows, tokenized and staged in the storage (name, size and
    sha256 of its file) until the job's last step writes every chunk in one transaction.
    A chunk run again replaces its row."""

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="parts")
    index = models.PositiveIntegerField()
    units = models.PositiveIntegerField()  # rows staged
    file = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="importpart_one_per_chunk")
        ]

    def __str__(self) -> str:
        return f"chunk {self.index} of import {self.job_id}"


class AccountAction(models.TextChoices):
    ACCOUNT_CREATE = "account_create", _("Create account")
    PASSWORD_RESET = "password_reset", _("Reset password")
    DEACTIVATE = "deactivate", _("Deactivate")
    REACTIVATE = "reactivate", _("Reactivate")
    # The account's owner, following an admin's action: a password chosen from a link
    # (invitation or reset), or a one-time password replaced at sign-in.
    PASSWORD_SET = "password_set", _("Set password from a link")
    PASSWORD_CHANGE = "password_change", _("Change password")
    # An existing account given a role in a project (the members form).
    MEMBER_ADD = "member_add", _("Add to the project")
    # An account outside the admin's projects is invited, and joins only if its owner accepts.
    INVITE = "invite", _("Invite to the project")
    INVITE_ACCEPT = "invite_accept", _("Accept an invitation")
    INVITE_DECLINE = "invite_decline", _("Decline an invitation")
    INVITE_WITHDRAW = "invite_withdraw", _("Withdraw an invitation")
    # Site staff lifted the account's sign-in lock-out (django-axes) before its cool-off.
    SIGN_IN_UNLOCK = "sign_in_unlock", _("Lift the sign-in lock-out")
    # The owner created or revoked one of their personal API tokens (its name in detail).
    TOKEN_CREATE = "token_create", _("Create an API token")
    TOKEN_REVOKE = "token_revoke", _("Revoke an API token")


class AccountEvent(models.Model):
    """The accounts' audit trail: who did what to whose account, when, and from which
    project (None: site staff acting site-wide, or the owner changing their password).

    Kept apart from qc's AuditEvent, which records decisions about a worker's work in one
    project and which `annotate` may not import; accounts are site-wide, and their events
    are what the members and users pages show.
    """

    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="account_events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account_events"
    )
    action = models.CharField(max_length=16, choices=AccountAction.choices)
    # How: the role given, one-time password or link. Never the password or the link.
    detail = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["project", "-created_at"], name="account_event_project"),
            models.Index(fields=["subject", "-created_at"], name="account_event_subject"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.subject} by {self.actor}"


class ProjectInvitation(models.Model):
    """An existing account invited into a project by one of its admins: it becomes a member
    (with `roles`) only when its owner accepts, signed in as themselves. An admin adds
    directly only people already in a project they administer; anyone else is invited, so
    that no admin can pull a stranger's account into their reach (annotate.account_rules).

    Open while neither answered nor withdrawn: one open invitation per (project, user),
    which a second invitation with another role extends."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    invited_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_invitations"
    )
    roles = models.JSONField(default=list)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    # None until answered: True accepted, False declined.
    accepted = models.BooleanField(null=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "invited_user"],
                condition=models.Q(answered_at__isnull=True, withdrawn_at__isnull=True),
                name="invitation_one_open_per_project_user",
            )
        ]

    def __str__(self) -> str:
        return f"{self.invited_user} invited to {self.project} as {', '.join(self.roles)}"

    @property
    def is_open(self) -> bool:
        return self.answered_at is None and self.withdrawn_at is None


class PasswordChangeRequired(models.Model):
    """The account's password was chosen by an admin (a one-time password): its owner
    must replace it at their next sign-in. The row goes when they do."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="password_change_required"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user} must change their password"


class ApiToken(models.Model):
    """A personal API token: its owner's scripts and notebooks call the API with it
    (`Authorization: Bearer <token>`), with at most the owner's rights, narrowed by
    `read_only` and `limited_to_projects`.

    The token is "rwt_<prefix>_<secret>". The prefix is not secret: it finds the row and
    names the token on its owner's page. Only a SHA-256 digest of the whole token is kept
    (annotate.api_token_secrets says why that digest and not a password hasher), so the
    database cannot give the token back; its owner sees it once, when it is created.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    secret_digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    last_used_from = models.GenericIPAddressField(null=True, blank=True)
    read_only = models.BooleanField(default=False)
    # Apart from `projects`, so that a limited token whose projects are all deleted opens
    # none rather than every project (an empty set would read as "no limit").
    limited_to_projects = models.BooleanField(default=False)
    projects = models.ManyToManyField(Project, blank=True, related_name="+")

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="api_token_owner")]
        constraints = [
            models.CheckConstraint(
                condition=Q(expires_at__isnull=True) | Q(expires_at__gt=F("created_at")),
                name="api_token_expires_after_creation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}) of {self.owner}"
