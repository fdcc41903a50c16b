"""Quality control. For now: cached agreement reports (workers, qualification, flags and
reviews arrive with the quality-control issue)."""

from django.db import models


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

    def __str__(self) -> str:
        return f"agreement report of {self.project} ({self.status})"
