"""Input and output shapes of the crowd API."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from rest_framework import serializers

from crowd.models import STUDY_PLATFORMS, CrowdSession, SessionStatus, StudyLink
from crowd.platforms import ID_MAX_LENGTH, MTURK, PROLIFIC

_AMOUNT = {"max_digits": 8, "decimal_places": 2, "min_value": 0}


class StudyLinkInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    platform = serializers.ChoiceField(choices=STUDY_PLATFORMS)
    variant = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    consent_text = serializers.CharField(max_length=20000)
    items_required = serializers.IntegerField(min_value=1, max_value=1000)
    id_parameter = serializers.CharField(required=False, allow_blank=True, max_length=32)
    completion_url_template = serializers.CharField(
        required=False, allow_blank=True, max_length=500
    )
    completion_code = serializers.CharField(required=False, allow_blank=True, max_length=64)
    screen_out_code = serializers.CharField(required=False, allow_blank=True, max_length=64)
    frame_height = serializers.IntegerField(required=False, min_value=0, max_value=5000)
    active = serializers.BooleanField(required=False)
    currency = serializers.CharField(required=False, min_length=3, max_length=3)
    reward_per_session = serializers.DecimalField(required=False, **_AMOUNT)
    reward_per_item = serializers.DecimalField(required=False, **_AMOUNT)
    bonus_per_accepted = serializers.DecimalField(required=False, **_AMOUNT)
    bonus_per_extra_item = serializers.DecimalField(required=False, **_AMOUNT)


def entry_url(link: StudyLink, request) -> str:
    path = reverse("crowd:entry", args=[link.key])
    base = settings.CROWD_PUBLIC_BASE_URL
    return base.rstrip("/") + path if base else request.build_absolute_uri(path)


def platform_url(link: StudyLink, request) -> str:
    """What the admin pastes into the platform: MTurk appends its own parameters to the
    ExternalQuestion URL; Prolific substitutes its placeholders."""
    url = entry_url(link, request)
    if link.platform == MTURK:
        return url
    if link.platform == PROLIFIC:
        return (
            f"{url}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
            f"&SESSION_ID={{{{%SESSION_ID%}}}}"
        )
    return f"{url}?{link.id_parameter}=WORKER_ID"


class StudyLinkOutputSerializer(serializers.ModelSerializer):
    platform_label = serializers.CharField(source="get_platform_display")
    variant = serializers.SerializerMethodField()
    entry_url = serializers.SerializerMethodField()
    platform_url = serializers.SerializerMethodField()
    sessions = serializers.SerializerMethodField()

    class Meta:
        model = StudyLink
        fields = [
            "id",
            "name",
            "platform",
            "platform_label",
            "variant",
            "description",
            "consent_text",
            "items_required",
            "id_parameter",
            "completion_url_template",
            "completion_code",
            "screen_out_code",
            "frame_height",
            "active",
            "currency",
            "reward_per_session",
            "reward_per_item",
            "bonus_per_accepted",
            "bonus_per_extra_item",
            "created_at",
            "entry_url",
            "platform_url",
            "sessions",
        ]

    def get_variant(self, link) -> dict | None:
        v = link.variant
        return None if v is None else {"id": v.pk, "name": v.name, "version": v.version}

    def get_entry_url(self, link) -> str:
        return entry_url(link, self.context["request"])

    def get_platform_url(self, link) -> str:
        return platform_url(link, self.context["request"])

    def get_sessions(self, link) -> dict:
        return {s: getattr(link, f"sessions_{s}", None) for s in SessionStatus.values}


class CrowdSessionOutputSerializer(serializers.ModelSerializer):
    external_id = serializers.SerializerMethodField()

    class Meta:
        model = CrowdSession
        fields = [
            "id",
            "external_id",
            "platform_session_id",
            "platform_task_id",
            "status",
            "end_reason",
            "started_at",
            "consented_at",
            "completed_at",
            "items_done",
            "completion_token",
        ]

    def get_external_id(self, session) -> str:
        profile = getattr(session.worker, "worker_profile", None)
        return profile.external_id if profile else session.worker.get_username()


class TokenCheckInputSerializer(serializers.Serializer):
    worker_id = serializers.RegexField(r"^[A-Za-z0-9_-]+$", max_length=ID_MAX_LENGTH)
    assignment_id = serializers.RegexField(
        r"^[A-Za-z0-9_-]*$",
        max_length=ID_MAX_LENGTH,
        required=False,
        allow_blank=True,
        default="",
        help_text="MTurk's assignment id or Prolific's session id; empty for other platforms.",
    )
    token = serializers.RegexField(r"^[0-9a-fA-F]+$", max_length=64)


class SessionFinishInputSerializer(serializers.Serializer):
    finish_now = serializers.BooleanField(
        required=False, default=False, help_text="End now although extra items pay a bonus."
    )
    no_work_left = serializers.BooleanField(
        required=False,
        default=False,
        help_text="The workspace found no item; the server asks the engine itself.",
    )
