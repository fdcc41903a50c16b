"""ERASER exports built by a background job; the file appears only once complete."""

from django.conf import settings
from django.db import models

from annotate.models import BackgroundJob, JobPart, JobStatus


class ExportStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class Export(BackgroundJob):
    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="exports"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    params = models.JSONField()
    status = models.CharField(
        max_length=16, choices=ExportStatus.choices, default=ExportStatus.PENDING
    )
    cancel_requested = models.BooleanField(default=False)
    # Its name in the default storage; set only when the complete file is in place.
    file_path = models.CharField(max_length=500, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    datasheet = models.JSONField(null=True, blank=True)
    # Each run of the job has its own; its chunks and its assembly act only while the
    # export is still running under it (a job started again supersedes them).
    attempt = models.CharField(max_length=32, blank=True)

    def __str__(self) -> str:
        return f"export {self.pk} of {self.project} ({self.status})"


class ExportPart(JobPart):
    """A chunk of an export that is written: its part files in the storage (name, size and
    sha256 of each, by key: a split, or the documents) and, for items, its figures for
    the datasheet. A chunk run again replaces its row; the assembly reads the rows."""

    export = models.ForeignKey(Export, on_delete=models.CASCADE, related_name="parts")
    kind = models.CharField(max_length=8)  # "items" or "docs"
    index = models.PositiveIntegerField()
    units = models.PositiveIntegerField()  # items or documents written
    files = models.JSONField(default=dict)
    stats = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["export", "kind", "index"], name="exportpart_one_per_chunk"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} chunk {self.index} of export {self.export_id}"


# An explainer run has the import job's states.
RunStatus = JobStatus


class ClassifierModel(models.Model):
    """A sequence-classification checkpoint registered for a project: a `save_pretrained`
    folder under the models root of the storage (RW_MODELS_ROOT), its own labels, and which
    of them each project label is (checked when registered, used when its explanations are
    written: the predictions name the project's labels)."""

    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="classifier_models"
    )
    name = models.CharField(max_length=120)
    # A folder of the storage, under the models root, named relative to the storage.
    folder = models.CharField(max_length=500)
    labels = models.JSONField(default=list)  # the checkpoint's own, in its class order
    label_mapping = models.JSONField(default=dict)  # project label -> model label
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], name="classifiermodel_name_unique_per_project"
            )
        ]

    def __str__(self) -> str:
        return f"model {self.name} of project {self.project_id}"


class ExplainerRun(models.Model):
    """A predictions file scored against an export: uploaded, made by a bundled explainer
    on the bag-of-words baseline, or made by a model explainer on a registered model."""

    export = models.ForeignKey(Export, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=120)
    split = models.CharField(max_length=8, default="test")
    explainer = models.CharField(
        max_length=32, blank=True, help_text="Bundled explainer, or empty for an upload."
    )
    # The registered model a model explainer explains; none for the baseline or an upload.
    model = models.ForeignKey(
        ClassifierModel, null=True, blank=True, on_delete=models.RESTRICT, related_name="runs"
    )
    # The explainer's options (integrated gradients' steps, LIME's and SHAP's samples).
    options = models.JSONField(default=dict, blank=True)
    predictions = models.FileField(upload_to="runs/", max_length=500, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    scores = models.JSONField(null=True, blank=True)
    plausibility_by_variant = models.JSONField(null=True, blank=True)
    problems = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A bundled explainer's run is explained in chunks of instances: progress counts the
    # instances of the chunks written; the heartbeat is written as each chunk ends.
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # As an export's: the chunks and the assembly of a superseded attempt do nothing.
    attempt = models.CharField(max_length=32, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.name} on export {self.export_id} ({self.status})"


class ExplainerRunPart(JobPart):
    """A chunk of a run's instances explained: its predictions lines, a file in the
    storage (name, size and sha256). A chunk run again replaces its row; the assembly
    joins the files in order into the run's predictions and scores them once."""

    run = models.ForeignKey(ExplainerRun, on_delete=models.CASCADE, related_name="parts")
    index = models.PositiveIntegerField()
    units = models.PositiveIntegerField()  # instances explained
    file = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="explainerrunpart_one_per_chunk")
        ]

    def __str__(self) -> str:
        return f"chunk {self.index} of run {self.run_id}"


class ProjectDatasheet(models.Model):
    """What an admin states about a project for its datasheet: who the annotators were,
    how they were trained and paid outside any crowd platform, and the licence and terms.

    Its own row rather than columns of Project, which every "next item" reads."""

    project = models.OneToOneField(
        "annotate.Project", on_delete=models.CASCADE, related_name="datasheet_info"
    )
    annotator_background = models.TextField(
        blank=True, help_text="Who the annotators were, e.g. 'college students of languages'."
    )
    annotator_languages = models.JSONField(
        default=list, blank=True, help_text="Languages the annotators speak, e.g. ['English']."
    )
    annotator_training = models.TextField(
        blank=True, help_text="How annotators were trained before and during the annotation."
    )
    compensation = models.TextField(
        blank=True,
        help_text="How annotators were paid outside a crowd platform (a crowd study's pay "
        "comes from its study links).",
    )
    licence = models.CharField(max_length=200, blank=True)
    terms_of_use = models.TextField(blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"datasheet of {self.project}"
