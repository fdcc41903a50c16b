"""Input and output of the account management API (annotate/account_apis.py)."""

from django.contrib.auth.validators import UnicodeUsernameValidator
from rest_framework import serializers

from annotate.models import AccountEvent, ProjectInvitation, Role
from annotate.services.accounts import Credential
from config.api_fields import (
    QueryParametersSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
)

CREDENTIAL_CHOICES = [
    (Credential.ONE_TIME_PASSWORD.value, "a one-time password, shown once"),
    (Credential.LINK.value, "a link that opens a page to choose a password"),
]


class AccountCreateInputSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150, validators=[UnicodeUsernameValidator()])
    email = serializers.EmailField(required=False, allow_blank=True, default="")
    credential = serializers.ChoiceField(choices=CREDENTIAL_CHOICES)


class ProjectAccountCreateInputSerializer(AccountCreateInputSerializer):
    role = serializers.ChoiceField(choices=Role.choices)


class SiteAccountCreateInputSerializer(AccountCreateInputSerializer):
    project = StrictIntegerField(required=False, min_value=1)
    role = serializers.ChoiceField(choices=Role.choices, required=False)


class PasswordResetInputSerializer(serializers.Serializer):
    credential = serializers.ChoiceField(choices=CREDENTIAL_CHOICES)


class AccountActiveInputSerializer(serializers.Serializer):
    active = StrictBooleanField()


class _QueryBooleanField(serializers.ChoiceField):
    """`true` or `false`, nothing else (no `1`, `yes` or `null` guessed at)."""

    def __init__(self, **kwargs):
        super().__init__(choices=["true", "false"], required=False, **kwargs)

    def to_internal_value(self, data):
        return super().to_internal_value(data) == "true"


class AccountListQuerySerializer(QueryParametersSerializer):
    search = serializers.CharField(required=False, allow_blank=True, max_length=150, default="")
    active = _QueryBooleanField()
    staff = _QueryBooleanField()

    def to_internal_value(self, data):
        repeated = [name for name in self.fields if len(data.getlist(name)) > 1]
        if repeated:
            raise serializers.ValidationError({name: ["give it once"] for name in repeated})
        return super().to_internal_value(data)


class AccountRefusalsSerializer(serializers.Serializer):
    password_reset = serializers.CharField(allow_null=True)
    deactivate = serializers.CharField(allow_null=True)
    reactivate = serializers.CharField(allow_null=True)
    # On a project's members page: changing the member's roles or removing them.
    membership = serializers.CharField(allow_null=True, required=False)


class AccountOutputSerializer(serializers.Serializer):
    """An account as the members and users pages list it. `refusals` says, per action,
    why the caller may not do it (null: they may)."""

    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    is_active = serializers.BooleanField()
    is_staff = serializers.BooleanField()
    is_superuser = serializers.BooleanField()
    last_login = serializers.DateTimeField(allow_null=True)
    date_joined = serializers.DateTimeField()
    sign_in = serializers.ChoiceField(choices=["password", "change_due", "link", "platform"])
    roles = serializers.ListField(child=serializers.CharField(), required=False)
    refusals = AccountRefusalsSerializer()


class AccountIssuedOutputSerializer(serializers.Serializer):
    """Shown once: the one-time password, or the link with when it expires."""

    account = AccountOutputSerializer()
    one_time_password = serializers.CharField(allow_null=True)
    link = serializers.URLField(allow_null=True)
    link_expires_at = serializers.DateTimeField(allow_null=True)


class AccountEventOutputSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    subject = serializers.CharField(source="subject.username")
    project = serializers.CharField(source="project.name", allow_null=True, default=None)

    class Meta:
        model = AccountEvent
        fields = ["id", "created_at", "action", "actor", "subject", "project", "detail"]


class InvitationOutputSerializer(serializers.ModelSerializer):
    """An invitation as its invitee and the project's admins see it."""

    project = serializers.IntegerField(source="project_id")
    project_name = serializers.CharField(source="project.name")
    invited_user = serializers.CharField(source="invited_user.username")
    invited_by = serializers.CharField(source="invited_by.username", allow_null=True, default=None)
    roles = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = ProjectInvitation
        fields = [
            "id",
            "project",
            "project_name",
            "invited_user",
            "invited_by",
            "roles",
            "created_at",
            "answered_at",
            "accepted",
            "withdrawn_at",
        ]
