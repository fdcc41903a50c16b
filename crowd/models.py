"""Study links (the door from a crowd platform), the platform sessions that come through
them, and the crowd events audit trail (docs/design/architecture.md#crowd-studies).

Payment terms live on the study link: a link is what is published on a platform as one
HIT type or one study, with one reward and one currency, so a qualification round and a
main round, or one study per instruction variant, can each pay their own way. Terms are
fixed once a session has been paid under them (see `crowd.services`).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from qc.models import Platform

STUDY_PLATFORMS = [(value, label) for value, label in Platform.choices if value]


def new_link_key() -> str:
    # The public part of the entry URL: unguessable, so links cannot be enumerated.
    return secrets.token_urlsafe(16)


class StudyLink(models.Model):
    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="study_links"
    )
    key = models.CharField(max_length=32, unique=True, default=new_link_key, editable=False)
    name = models.CharField(max_length=120)
    platform = models.CharField(max_length=16, choices=STUDY_PLATFORMS)
    variant = models.ForeignKey(
        "annotate.InstructionVariant",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="study_links",
        help_text="Recruits of this link all work under this variant; empty: allocated.",
    )
    description = models.TextField(
        blank=True, help_text="What the task is, shown on MTurk's preview and above the consent."
    )
    consent_text = models.TextField(help_text="The project's own consent wording.")
    items_required = models.PositiveSmallIntegerField(
        help_text="Items that complete one assignment (MTurk) or session (Prolific)."
    )
    # Other platforms: which query parameter carries the worker id, and where to send
    # the worker at the end ({external_id}, {code}, {token}).
    id_parameter = models.CharField(max_length=32, blank=True)
    completion_url_template = models.CharField(max_length=500, blank=True)
    completion_code = models.CharField(max_length=64, blank=True)
    screen_out_code = models.CharField(max_length=64, blank=True)
    frame_height = models.PositiveIntegerField(
        default=800, help_text="MTurk's frame height in pixels; 0 lets the frame fill the page."
    )
    active = models.BooleanField(default=True)
    # Payment terms (see the module docstring).
    currency = models.CharField(max_length=3, default="USD")
    reward_per_session = models.DecimalField(
        max_digits=8, decimal_places=2, default=0, help_text="The HIT's or study's reward."
    )
    reward_per_item = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    bonus_per_accepted = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=0,
        help_text="Per annotation of the session that review accepted.",
    )
    bonus_per_extra_item = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=0,
        help_text="Per item beyond the required count; workers may then go on after it.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="studylink_unique_name"),
            models.CheckConstraint(
                condition=Q(items_required__gte=1), name="studylink_items_required_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(reward_per_session__gte=0)
                & Q(reward_per_item__gte=0)
                & Q(bonus_per_accepted__gte=0)
                & Q(bonus_per_extra_item__gte=0),
                name="studylink_amounts_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.platform})"

    @property
    def pays_extra_items(self) -> bool:
        return self.bonus_per_extra_item > 0


class SessionStatus(models.TextChoices):
    STARTED = "started", "Arrived, consent not given yet"
    WORKING = "working", "Consented, working"
    COMPLETED = "completed", "Completed"
    SCREENED_OUT = "screened_out", "Screened out"
    DECLINED = "declined", "Declined consent"


ENDED = (SessionStatus.COMPLETED, SessionStatus.SCREENED_OUT, SessionStatus.DECLINED)


class CrowdSession(models.Model):
    """One piece of platform work: an MTurk assignment, a Prolific session, or one visit
    through another platform's link. A worker returning with the same ids resumes it."""

    link = models.ForeignKey(StudyLink, on_delete=models.CASCADE, related_name="sessions")
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_sessions"
    )
    # MTurk's assignmentId or Prolific's SESSION_ID; empty where the platform has none.
    platform_session_id = models.CharField(max_length=64, blank=True)
    # MTurk's hitId or Prolific's STUDY_ID.
    platform_task_id = models.CharField(max_length=64, blank=True)
    # MTurk: the origin the finished HIT is posted to (checked against the allowed list).
    submit_to = models.CharField(max_length=200, blank=True)
    status = models.CharField(
        max_length=16, choices=SessionStatus.choices, default=SessionStatus.STARTED
    )
    end_reason = models.CharField(max_length=300, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    # The session's items are the worker's annotations in the project submitted after
    # `items_from` (its start, or the end of their previous completed session, whichever
    # is later) up to `completed_at`: no annotation counts for two sessions.
    items_from = models.DateTimeField(null=True, blank=True)
    items_done = models.PositiveIntegerField(default=0)
    completion_token = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        constraints = [
            # A platform's assignment or session belongs to one worker.
            models.UniqueConstraint(
                fields=["link", "platform_session_id"],
                condition=~Q(platform_session_id=""),
                name="crowdsession_unique_platform_session",
            ),
            # Without platform session ids, one session per worker and link.
            models.UniqueConstraint(
                fields=["link", "worker"],
                condition=Q(platform_session_id=""),
                name="crowdsession_unique_worker_without_session_id",
            ),
            models.CheckConstraint(
                condition=~Q(status=SessionStatus.COMPLETED)
                | (Q(completed_at__isnull=False) & ~Q(completion_token="")),
                name="crowdsession_completed_has_time_and_token",
            ),
        ]
        indexes = [models.Index(fields=["worker", "status"], name="crowdsession_worker_status")]

    def __str__(self) -> str:
        return f"{self.link} session {self.platform_session_id or self.pk} ({self.status})"

    @property
    def ended(self) -> bool:
        return self.status in ENDED


class CrowdEventKind(models.TextChoices):
    ENTERED = "entered", "Entered"
    RESUMED = "resumed", "Resumed"
    REFUSED = "refused", "Entry refused"
    CONSENTED = "consented", "Consented"
    DECLINED = "declined", "Declined consent"
    COMPLETED = "completed", "Completed"
    SCREENED_OUT = "screened_out", "Screened out"
    LINK_CREATED = "link_created", "Study link created"
    LINK_UPDATED = "link_updated", "Study link changed"


class CrowdEvent(models.Model):
    """The crowd study's audit trail: arrivals, consent, completion and screen-out of
    platform sessions, and who created or changed a study link (with the old and new
    values). Kept apart from qc's AuditEvent, which records decisions about a worker's
    standing and is what the quality page and datasheet read; arrivals would drown those,
    and these rows belong to a link and a platform session, which qc does not know."""

    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="crowd_events"
    )
    link = models.ForeignKey(
        StudyLink, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    session = models.ForeignKey(
        CrowdSession, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=16, choices=CrowdEventKind.choices)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["project", "-created_at"], name="crowdevent_project_recent")
        ]

    def __str__(self) -> str:
        return f"{self.kind} ({self.link or self.project})"
