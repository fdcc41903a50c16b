"""Quality control: workers and their qualification, automatic quality flags, the senior
reviewers' score-and-revise loop, the audit trail, and cached agreement reports.

Invariants that concurrent requests could break are constraints here: one review per
(annotation, reviewer), one verdict per annotation, one flag of a kind per annotation,
one qualification record per (project, worker).
"""

import uuid

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from annotate.models import BackgroundJob, JobPart, JobStatus
from config.text_limits import COMMENT_MAX_CHARS, max_chars, max_chars_constraint
from qc.flag_rules import FlagThresholds, WorkerLimits


class ReportStatus(models.TextChoices):
    NONE = "none", "Not computed"
    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class AgreementReport(models.Model):
    """The agreement figures of a project, computed by a background job and cached.

    `annotations_seen` records how many submitted annotations the figures cover; when the
    project has more, the report is stale and the page says so.
    """

    project = models.OneToOneField(
        "annotate.Project", on_delete=models.CASCADE, related_name="agreement_report"
    )
    status = models.CharField(
        max_length=16, choices=ReportStatus.choices, default=ReportStatus.NONE
    )
    progress = models.FloatField(default=0)
    annotations_seen = models.PositiveIntegerField(default=0)
    data = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    # The run in progress (qc/agreement.py): its attempt token, which chunks are done of
    # how many, and the heartbeat its workers write; `data` keeps the last finished report
    # until a run publishes a new one.
    attempt = models.CharField(max_length=32, blank=True)
    phase = models.CharField(max_length=32, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"agreement report of {self.project} ({self.status})"


class AgreementPart(JobPart):
    """The figures of one chunk of an agreement run (a variant, a pair of variants, a
    group of workers, a cohort, a range of items), kept until the assembly writes the
    report. A chunk run again replaces its row."""

    report = models.ForeignKey(AgreementReport, on_delete=models.CASCADE, related_name="parts")
    kind = models.CharField(max_length=16)
    key = models.CharField(max_length=400)
    data = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["report", "kind", "key"], name="agreementpart_one_per_chunk"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} chunk {self.key} of {self.report}"


# ---------------------------------------------------------------- workers


class WorkerStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    BLOCKED = "blocked", "Blocked"


class Platform(models.TextChoices):
    """Where a worker's external id comes from. The same id on two platforms is two
    people; profiles imported without naming a platform keep the empty value."""

    UNSPECIFIED = "", "Not given"
    MTURK = "mturk", "Amazon Mechanical Turk"
    PROLIFIC = "prolific", "Prolific"
    OTHER = "other", "Other platform"


class WorkerProfile(models.Model):
    """Who a worker is: their platform id, their account, and a block on every project
    (site staff only). Shared by every project, so it holds no attribute a project's
    rules read: those are each project's own `WorkerRecord`.

    A profile imported from a platform's CSV may exist before its account does. Without a
    platform it is linked to the user whose username equals its external id on their
    first visit; with one, to the account a study link makes for that platform's id.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="worker_profile",
    )
    platform = models.CharField(
        max_length=16, choices=Platform.choices, default=Platform.UNSPECIFIED, blank=True
    )
    external_id = models.CharField(max_length=200)
    status = models.CharField(
        max_length=16, choices=WorkerStatus.choices, default=WorkerStatus.ACTIVE
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "external_id"], name="workerprofile_unique_platform_id"
            ),
        ]

    def __str__(self) -> str:
        return self.external_id


class WorkerRecord(models.Model):
    """A worker's platform record as one project knows it: written only by that project's
    CSV imports and its own review outcomes, and read by its rules. Per project because
    any project's admin may import and review; a shared record would let them move what
    every other project's rules see."""

    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="worker_records"
    )
    profile = models.ForeignKey(WorkerProfile, on_delete=models.CASCADE, related_name="records")
    approval_rate = models.FloatField(
        null=True, blank=True, help_text="Percent of judged work approved (0-100)."
    )
    approved_count = models.PositiveIntegerField(default=0)
    judged_count = models.PositiveIntegerField(
        default=0, help_text="Work judged (approved or rejected), imported and reviewed here."
    )
    locale = models.CharField(max_length=16, blank=True, help_text="Country code, e.g. US.")
    is_master = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "profile"], name="workerrecord_unique_project_profile"
            ),
            models.CheckConstraint(
                condition=Q(approval_rate__isnull=True)
                | Q(approval_rate__gte=0, approval_rate__lte=100),
                name="workerrecord_approval_rate_percent",
            ),
            models.CheckConstraint(
                condition=Q(approved_count__lte=models.F("judged_count")),
                name="workerrecord_approved_within_judged",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.profile} in {self.project}"


class QualityPolicy(models.Model):
    """A project's qualification rules, flag thresholds and per-worker limits."""

    project = models.OneToOneField(
        "annotate.Project", on_delete=models.CASCADE, related_name="quality_policy"
    )
    # Qualification rules on worker attributes; None or empty means no rule.
    min_approval_rate = models.FloatField(null=True, blank=True)
    min_approved_count = models.PositiveIntegerField(null=True, blank=True)
    # Upper bounds make a band with the minimums (both inclusive, qc.rule_bands), so each
    # qualification level of the crowd study can be recruited on its own.
    max_approval_rate = models.FloatField(null=True, blank=True)
    max_approved_count = models.PositiveIntegerField(null=True, blank=True)
    allowed_locales = models.JSONField(default=list, blank=True)
    masters_only = models.BooleanField(default=False)
    # The optional test on gold items.
    test_enabled = models.BooleanField(default=False)
    test_pass_f1 = models.FloatField(default=0.5)
    test_max_attempts = models.PositiveSmallIntegerField(default=2)
    test_instructions = models.TextField(
        default="Highlight the words that show why the given answer is correct.",
        help_text="Shown in the test instead of any variant's wording, so the test does not "
        "expose anyone to an instruction variant before allocation.",
    )
    manual_selection = models.BooleanField(
        default=False, help_text="An admin accepts or rejects each candidate who passed."
    )
    # Flags on each submission.
    min_seconds = models.FloatField(default=10)
    max_stopword_share = models.FloatField(default=0.6)
    first_k_tokens = models.PositiveSmallIntegerField(default=3)
    min_coannotator_kappa = models.FloatField(default=0.1)
    # Per-worker aggregates: warnings, and automatic blocking when enabled.
    aggregate_min_annotations = models.PositiveSmallIntegerField(default=5)
    warn_median_seconds = models.FloatField(default=15)
    block_median_seconds = models.FloatField(default=5)
    warn_empty_rate = models.FloatField(default=0.1)
    block_empty_rate = models.FloatField(default=0.3)
    warn_stopword_share = models.FloatField(default=0.4)
    block_stopword_share = models.FloatField(default=0.7)
    warn_majority_kappa = models.FloatField(default=0.3)
    block_majority_kappa = models.FloatField(default=0.0)
    auto_block = models.BooleanField(default=True)

    class Meta:
        verbose_name_plural = "quality policies"
        constraints = [
            models.CheckConstraint(
                condition=Q(test_pass_f1__gte=0, test_pass_f1__lte=1),
                name="qualitypolicy_test_pass_f1_unit",
            ),
            models.CheckConstraint(
                condition=Q(test_max_attempts__gte=1), name="qualitypolicy_attempts_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(max_approval_rate__isnull=True)
                | Q(max_approval_rate__gte=0, max_approval_rate__lte=100),
                name="qualitypolicy_max_approval_rate_percent",
            ),
            models.CheckConstraint(
                condition=Q(min_approval_rate__isnull=True)
                | Q(max_approval_rate__isnull=True)
                | Q(min_approval_rate__lte=models.F("max_approval_rate")),
                name="qualitypolicy_approval_rate_band_ordered",
            ),
            models.CheckConstraint(
                condition=Q(min_approved_count__isnull=True)
                | Q(max_approved_count__isnull=True)
                | Q(min_approved_count__lte=models.F("max_approved_count")),
                name="qualitypolicy_approved_count_band_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"quality policy of {self.project}"

    def flag_thresholds(self) -> FlagThresholds:
        return FlagThresholds(
            min_seconds=self.min_seconds,
            max_stopword_share=self.max_stopword_share,
            first_k_tokens=self.first_k_tokens,
            min_coannotator_kappa=self.min_coannotator_kappa,
        )

    def worker_limits(self) -> WorkerLimits:
        return WorkerLimits(
            min_annotations=self.aggregate_min_annotations,
            warn_median_seconds=self.warn_median_seconds,
            block_median_seconds=self.block_median_seconds,
            warn_empty_rate=self.warn_empty_rate,
            block_empty_rate=self.block_empty_rate,
            warn_stopword_share=self.warn_stopword_share,
            block_stopword_share=self.block_stopword_share,
            warn_majority_kappa=self.warn_majority_kappa,
            block_majority_kappa=self.block_majority_kappa,
        )


class GoldItem(models.Model):
    """An item of the qualification test; its gold rationale is the item's reference
    rationale. Gold items are never served as ordinary work."""

    item = models.OneToOneField("annotate.Item", on_delete=models.CASCADE, related_name="gold")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "item_id"]

    def __str__(self) -> str:
        return f"gold {self.item}"


class QualificationStatus(models.TextChoices):
    TESTING = "testing", "Taking the test"
    PENDING = "pending", "Awaiting an admin"
    QUALIFIED = "qualified", "Qualified"
    REJECTED = "rejected", "Not qualified"
    BLOCKED = "blocked", "Blocked"


class ProjectWorker(models.Model):
    """A worker's standing in one project: the gate in front of "next item"."""

    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="project_workers"
    )
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_standings"
    )
    status = models.CharField(max_length=16, choices=QualificationStatus.choices)
    cohort = models.CharField(
        max_length=32, blank=True, help_text="Platform-record band when admitted (qc.cohorts)."
    )
    reason = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    aggregates = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "worker"], name="projectworker_unique_project_worker"
            )
        ]

    def __str__(self) -> str:
        return f"{self.worker} in {self.project}: {self.status}"


class QualificationAttempt(models.Model):
    project_worker = models.ForeignKey(
        ProjectWorker, on_delete=models.CASCADE, related_name="attempts"
    )
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    mean_f1 = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True)

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(
                fields=["project_worker", "number"], name="attempt_unique_number"
            )
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.project_worker}"


class QualificationAnswer(models.Model):
    """One gold item answered in an attempt. `tokens` maps docid to highlighted indexes."""

    attempt = models.ForeignKey(
        QualificationAttempt, on_delete=models.CASCADE, related_name="answers"
    )
    gold_item = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="answers")
    tokens = models.JSONField(default=dict)
    time_spent_ms = models.PositiveIntegerField(default=0)
    f1 = models.FloatField()
    flags = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["attempt", "gold_item"], name="answer_unique_attempt_gold_item"
            )
        ]

    def __str__(self) -> str:
        return f"answer to {self.gold_item} (F1 {self.f1:.2f})"


# ---------------------------------------------------------------- flags


class FlagKind(models.TextChoices):
    EMPTY = "empty", "Empty"
    TOO_FAST = "too_fast", "Faster than the project minimum"
    STOPWORDS = "stopwords", "Mostly stop words and punctuation"
    FIRST_TOKENS = "first_tokens", "Only the first tokens"
    LOW_AGREEMENT = "low_agreement", "Low agreement with co-annotators"


class QualityFlag(models.Model):
    annotation = models.ForeignKey(
        "annotate.Annotation", on_delete=models.CASCADE, related_name="quality_flags"
    )
    kind = models.CharField(max_length=32, choices=FlagKind.choices)
    value = models.FloatField(null=True, blank=True)
    detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotation", "kind"], name="flag_unique_kind")
        ]

    def __str__(self) -> str:
        return f"{self.kind} on annotation {self.annotation_id}"


# ---------------------------------------------------------------- reviews


class Review(models.Model):
    """One senior reviewer's scores of one annotation (one round of it)."""

    annotation = models.ForeignKey(
        "annotate.Annotation", on_delete=models.CASCADE, related_name="reviews"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews"
    )
    comprehensiveness = models.PositiveSmallIntegerField()
    comment = models.TextField(blank=True, validators=max_chars(COMMENT_MAX_CHARS))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            max_chars_constraint("comment", COMMENT_MAX_CHARS, name="review_comment_max_chars"),
            models.UniqueConstraint(
                fields=["annotation", "reviewer"], name="review_unique_annotation_reviewer"
            ),
            models.CheckConstraint(
                condition=Q(comprehensiveness__gte=1, comprehensiveness__lte=3),
                name="review_comprehensiveness_1_3",
            ),
        ]

    def __str__(self) -> str:
        return f"review of annotation {self.annotation_id} by {self.reviewer_id}"


class SetScore(models.Model):
    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="set_scores")
    rationale_set = models.ForeignKey(
        "annotate.RationaleSet", on_delete=models.CASCADE, related_name="scores"
    )
    sufficiency = models.PositiveSmallIntegerField()
    compactness = models.PositiveSmallIntegerField()
    comment = models.TextField(blank=True, validators=max_chars(COMMENT_MAX_CHARS))

    class Meta:
        constraints = [
            max_chars_constraint("comment", COMMENT_MAX_CHARS, name="setscore_comment_max_chars"),
            models.UniqueConstraint(
                fields=["review", "rationale_set"], name="setscore_unique_review_set"
            ),
            models.CheckConstraint(
                condition=Q(sufficiency__gte=1, sufficiency__lte=3), name="setscore_sufficiency_1_3"
            ),
            models.CheckConstraint(
                condition=Q(compactness__gte=1, compactness__lte=4), name="setscore_compactness_1_4"
            ),
        ]

    def __str__(self) -> str:
        return f"scores of set {self.rationale_set_id} in {self.review}"


class VerdictOutcome(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    REVISE = "revise", "Sent back for revision"
    DISCARDED = "discarded", "Discarded after the last round"


class ReviewVerdict(models.Model):
    """The outcome of one annotation's review, computed once when its last review lands."""

    annotation = models.OneToOneField(
        "annotate.Annotation", on_delete=models.CASCADE, related_name="verdict"
    )
    outcome = models.CharField(max_length=16, choices=VerdictOutcome.choices)
    means = models.JSONField(help_text="Mean score per property over reviewers.")
    failed_properties = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.outcome}: annotation {self.annotation_id}"


# ---------------------------------------------------------------- audit


class AuditAction(models.TextChoices):
    ACCEPT = "accept", "Accept"
    REJECT = "reject", "Reject"
    BLOCK = "block", "Block"
    UNBLOCK = "unblock", "Unblock"
    IMPORT = "import", "Import worker attributes"
    # Data manager, curation and a project's lifecycle; `details` says on what.
    BULK_ACTION = "bulk_action", "Bulk action on items"
    CURATE = "curate", "Curate an item"
    ROLE_CHANGE = "role_change", "Change a member's roles"
    MEMBER_REMOVE = "member_remove", "Remove a member"
    DELETE = "delete", "Delete"
    RESTORE = "restore", "Restore"
    PURGE = "purge", "Remove for good"
    ARCHIVE = "archive", "Archive a project"
    UNARCHIVE = "unarchive", "Unarchive a project"
    ANSWER_CHANGE = "answer_change", "Change a submitted answer"


class AuditEvent(models.Model):
    """Who accepted, rejected, blocked or unblocked whom, when and why, and who imported
    which worker attributes into the project (`worker` None: an import is about many).
    `actor` None is the platform itself (a rule or a threshold)."""

    project = models.ForeignKey(
        "annotate.Project",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="audit_events",
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="audit_events",
    )
    action = models.CharField(max_length=16, choices=AuditAction.choices)
    reason = models.TextField()
    # What the action touched, as plain data: the filter that chose items, counts, ids.
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.action} {self.worker or 'workers'} by {self.actor or 'the platform'}"


class SubmissionCheck(models.Model):
    """What the automatic checks measured on one submission; the per-worker aggregates
    are computed from these rows, so they cost one query whatever the worker's history."""

    annotation = models.OneToOneField(
        "annotate.Annotation", on_delete=models.CASCADE, related_name="submission_check"
    )
    # Leads the qc_check_worker_recent index below; an index of its own only cost writes.
    project = models.ForeignKey(
        "annotate.Project",
        on_delete=models.CASCADE,
        related_name="submission_checks",
        db_index=False,
    )
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submission_checks"
    )
    highlighted = models.PositiveIntegerField()
    seconds = models.FloatField()
    stopword_share = models.FloatField(null=True, blank=True)
    coannotator_kappa = models.FloatField(null=True, blank=True)
    majority_kappa = models.FloatField(null=True, blank=True)
    checked_at = models.DateTimeField(auto_now=True)

    class Meta:
        # A worker's most recent checks in a project, newest first: what their standing
        # reads (qc.services.checks, AGGREGATE_WINDOW rows a worker).
        indexes = [
            models.Index(fields=["project", "worker", "-annotation"], name="qc_check_worker_recent")
        ]

    def __str__(self) -> str:
        return f"checks of annotation {self.annotation_id}"


# ---------------------------------------------------------------- worker CSV import jobs


def worker_import_upload_path(job: "WorkerImportJob", filename: str) -> str:
    return f"worker-imports/project-{job.project_id}/{uuid.uuid4().hex}-{filename}"


class WorkerImportJob(BackgroundJob):
    """A crowd platform's worker CSV imported in the background (qc/services/worker_import_jobs.py):
    the page follows its progress (rows checked, then rows written) to its summary or its
    problems. `summary` holds what worker_profiles_import_csv returns."""

    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="worker_import_jobs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_name = models.CharField(max_length=255)
    platform = models.CharField(max_length=16, choices=Platform.choices, blank=True)
    upload = models.FileField(upload_to=worker_import_upload_path, max_length=500)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    problems = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"worker import {self.pk} of {self.source_name} ({self.status})"


# ---------------------------------------------------------------- the data manager


class ItemStatus(models.TextChoices):
    """qc/item_status.py says when an item is in each."""

    WAITING = "waiting", _("Waiting")
    IN_PROGRESS = "in_progress", _("In progress")
    COMPLETE = "complete", _("Complete")
    IN_REVIEW = "in_review", _("In review")
    REVISING = "revising", _("Revising")
    ACCEPTED = "accepted", _("Accepted")
    DISCARDED = "discarded", _("Discarded")
    GOLD = "gold", _("Gold")
    EXCLUDED = "excluded", _("Excluded")


def _summary_index(field: str) -> models.Index:
    return models.Index(fields=["project", field, "item"], name=f"qc_summary_{field}")


class ItemSummary(models.Model):
    """What the data manager filters and sorts items by, derived from their assignments,
    annotations, reviews and flags (qc/services/item_summaries.py keeps it up to date).
    Computing these per request cannot scale to a million items; one row per item with an
    index per sortable column can. Each index leads with the project and ends with the
    item, the list's tie-breaker, so a first page is an index range scan."""

    item = models.OneToOneField(
        "annotate.Item", on_delete=models.CASCADE, primary_key=True, related_name="summary"
    )
    # Leads every index below; one of its own only cost writes.
    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    status = models.CharField(max_length=16, choices=ItemStatus.choices)
    # Submitted chains (an annotation and its revisions count once), all variants.
    submitted = models.PositiveIntegerField(default=0)
    # [{"id", "name", "submitted", "quota"}] per variant with work or active.
    variants = models.JSONField(default=list, blank=True)
    # [{"id", "username"}] of the annotators who submitted.
    annotators = models.JSONField(default=list, blank=True)
    kappa = models.FloatField(null=True, blank=True)
    f1 = models.FloatField(null=True, blank=True)
    # The same agreement by pair of variants, as sums: {"<a>-<b>": {"pairs", "kappa_pairs",
    # "kappa_sum", "f1_sum"}} over the pairs of newest annotations of variants a <= b (a == b
    # within one), from which the curation queue orders by the agreement among the variants
    # it shows (qc/curation_selectors.py). Null until written: a summary older than the
    # field, which beat's sweep writes again (item_summaries_complete).
    variant_pairs = models.JSONField(null=True, blank=True)
    open_flags = models.PositiveIntegerField(default=0)
    # The kinds, sorted, once each: filtered by containment through its GIN index, whose
    # few distinct values the planner knows (its estimates are what large counts show).
    flag_kinds = models.JSONField(default=list, blank=True)
    review_score = models.FloatField(null=True, blank=True)
    majority_label = models.CharField(max_length=255, null=True, blank=True)
    last_activity = models.DateTimeField(null=True, blank=True)
    # [{"name", "preview"}]: the first words of each text, written once.
    texts = models.JSONField(default=list, blank=True)
    # The texts and the query for full-text search (PostgreSQL only; see the GIN index).
    search_vector = SearchVectorField(null=True, blank=True)
    refreshed_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["project", "item"], name="qc_summary_project_item"),
            *(
                _summary_index(field)
                for field in (
                    "status",
                    "submitted",
                    "kappa",
                    "f1",
                    "open_flags",
                    "review_score",
                    "last_activity",
                    "majority_label",
                )
            ),
            # The curation queue's order, most disagreement first (qc/curation_selectors.py).
            models.Index(fields=["project", "kappa", "f1", "item"], name="qc_summary_disagreement"),
            GinIndex(fields=["search_vector"], name="qc_summary_search"),
            GinIndex(fields=["flag_kinds"], name="qc_summary_flag_kinds"),
            # What beat's sweep still has to write: empty once it has.
            models.Index(
                fields=["project"],
                condition=Q(variant_pairs__isnull=True),
                name="qc_summary_pairs_unwritten",
            ),
        ]

    def __str__(self) -> str:
        return f"summary of item {self.item_id}: {self.status}"


class ItemSummaryWatermark(models.Model):
    """How far a project's summaries have been brought up to date: the newest row of each
    kind of activity seen by the last refresh, and when it ran (for leases that ran out
    since). The next refresh looks only at what came after."""

    project = models.OneToOneField(
        "annotate.Project", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    refreshed_at = models.DateTimeField(null=True, blank=True)
    item_id = models.BigIntegerField(default=0)
    assignment_id = models.BigIntegerField(default=0)
    annotation_id = models.BigIntegerField(default=0)
    review_id = models.BigIntegerField(default=0)
    verdict_id = models.BigIntegerField(default=0)
    flag_id = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"item summaries of project {self.project_id} as of {self.refreshed_at}"


ITEM_VIEW_NAME_MAX_CHARS = 120
ITEM_VIEW_QUERY_MAX_CHARS = 4000


class ItemView(models.Model):
    """A saved filter of the data manager: the list's query string under a name, seen by
    its creator alone or, shared, by every member who may read the list."""

    project = models.ForeignKey("annotate.Project", on_delete=models.CASCADE, related_name="+")
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="item_views"
    )
    name = models.CharField(max_length=ITEM_VIEW_NAME_MAX_CHARS)
    query = models.TextField(blank=True, validators=max_chars(ITEM_VIEW_QUERY_MAX_CHARS))
    shared = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "creator", "name"],
                condition=Q(shared=False),
                name="item_view_unique_private_name",
            ),
            models.UniqueConstraint(
                fields=["project", "name"],
                condition=Q(shared=True),
                name="item_view_unique_shared_name",
            ),
            max_chars_constraint("query", ITEM_VIEW_QUERY_MAX_CHARS, name="item_view_query_max"),
        ]

    def __str__(self) -> str:
        return self.name


# ---------------------------------------------------------------- curation


class CuratedAnnotation(models.Model):
    """An item's adjudicated gold: rationale sets (and label or answer) a curator built from
    the annotators' work, by hand or by an auto-merge rule. One per item. It is a row of its
    own: curation never changes an annotator's annotation or its history.

    `version` counts saves: a save names the version it started from and is refused (409)
    when another curator saved in the meantime, so no one's work is lost silently."""

    item = models.OneToOneField(
        "annotate.Item", on_delete=models.CASCADE, related_name="curated_annotation"
    )
    curator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    curated_at = models.DateTimeField()
    # "hand", or the auto-merge rule's name (qc/curation_rules.py, AutoMergeRule.name).
    rule = models.CharField(max_length=64)
    label = models.CharField(max_length=255, null=True, blank=True)
    answer = models.JSONField(null=True, blank=True)
    # The annotations the curator had in view (or the rule merged).
    sources = models.ManyToManyField("annotate.Annotation", related_name="+", blank=True)
    version = models.PositiveIntegerField(default=1)
    # When a curator last confirmed the gold as it is after annotations changed. The gold is
    # stale while an annotation of the item was submitted after it was curated or last
    # confirmed (qc/curation_selectors.py, curated_stale).
    confirmed_at = models.DateTimeField(null=True, blank=True)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(version__gte=1), name="curated_version_from_1"),
            models.CheckConstraint(condition=~Q(rule=""), name="curated_rule_named"),
        ]

    def __str__(self) -> str:
        return f"curated gold of item {self.item_id} ({self.rule})"


class CuratedSet(models.Model):
    """One gold rationale set of a curated annotation, in order."""

    curated = models.ForeignKey(CuratedAnnotation, on_delete=models.CASCADE, related_name="sets")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["curated", "position"], name="curated_set_position")
        ]

    def __str__(self) -> str:
        return f"set {self.position} of {self.curated}"


class CuratedSpan(models.Model):
    """Half-open token range [start_token, end_token) of one document of the item."""

    curated_set = models.ForeignKey(CuratedSet, on_delete=models.CASCADE, related_name="spans")
    document = models.ForeignKey("annotate.Document", on_delete=models.PROTECT, related_name="+")
    start_token = models.PositiveIntegerField()
    end_token = models.PositiveIntegerField()
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end_token__gt=F("start_token")), name="curated_span_not_empty"
            ),
            models.UniqueConstraint(
                fields=["curated_set", "position"], name="curated_span_position"
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.start_token}, {self.end_token}) of document {self.document_id}"


class CurationRequest(models.Model):
    """An item put into a curation pass (the data manager's bulk action "curation_start"):
    the queue can show only these. One per item; starting a pass again changes nothing."""

    item = models.OneToOneField(
        "annotate.Item", on_delete=models.CASCADE, related_name="curation_request"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"item {self.item_id} in a curation pass"
