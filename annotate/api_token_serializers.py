"""Input and output of the API token operations (annotate/api_token_apis.py)."""

from django.utils import timezone
from rest_framework import serializers

from annotate.api_token_selectors import api_token_state
from annotate.models import ApiToken
from config.api_fields import StrictBooleanField, StrictCharField, StrictIntegerField


class ApiTokenCreateInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=ApiToken._meta.get_field("name").max_length)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    read_only = StrictBooleanField(required=False, default=False)
    projects = serializers.ListField(
        child=StrictIntegerField(min_value=1),
        required=False,
        allow_null=True,
        default=None,
        max_length=1000,
        help_text="Limit the token to these projects (of yours); omit or null for no limit.",
    )


class ApiTokenOutputSerializer(serializers.ModelSerializer):
    projects = serializers.SerializerMethodField(
        help_text="The projects the token is limited to, or null when it has no limit."
    )
    state = serializers.SerializerMethodField()

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "prefix",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
            "last_used_from",
            "read_only",
            "projects",
            "state",
        ]
        read_only_fields = fields

    def get_projects(self, api_token: ApiToken) -> list[int] | None:
        if not api_token.limited_to_projects:
            return None
        return sorted(project.pk for project in api_token.projects.all())

    def get_state(self, api_token: ApiToken) -> str:
        """ "active", "expired" or "revoked"."""
        return api_token_state(api_token, now=timezone.now())


class ApiTokenIssuedOutputSerializer(serializers.Serializer):
    api_token = ApiTokenOutputSerializer()
    token = serializers.CharField(help_text="The token itself: shown this once, never again.")
