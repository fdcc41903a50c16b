from rest_framework import serializers

from config.api_fields import (
    QueryParametersSerializer,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
)
from exports.models import Export
from exports.params import AGGREGATIONS, ARCHIVES, LAYOUTS, SEED_MAX, SELECTIONS, SPLIT_MODES
from exports.suggestions import MAX_SUGGESTION_K
from qc.models import ITEM_VIEW_QUERY_MAX_CHARS

# The longest name each parameter can match: a variant's name, a user name, a cohort's name.
VARIANT_NAME_MAX_LENGTH = 120
USERNAME_MAX_LENGTH = 150
COHORT_MAX_LENGTH = 64


class ExportCreateInputSerializer(serializers.Serializer):
    selection = serializers.ChoiceField(choices=SELECTIONS, default="submitted")
    variant = StrictCharField(
        required=False, allow_null=True, allow_blank=False, max_length=VARIANT_NAME_MAX_LENGTH
    )
    aggregation = serializers.ChoiceField(choices=AGGREGATIONS, default="majority")
    annotator = StrictCharField(required=False, allow_null=True, max_length=USERNAME_MAX_LENGTH)
    splits = serializers.ChoiceField(choices=SPLIT_MODES, default="keep")
    ratios = serializers.ListField(
        child=StrictFloatField(min_value=0, max_value=1), min_length=3, max_length=3, required=False
    )
    seed = StrictIntegerField(min_value=0, max_value=SEED_MAX, default=0)
    layout = serializers.ChoiceField(choices=LAYOUTS, default="docs")
    archive = serializers.ChoiceField(choices=ARCHIVES, default="zip")
    item_filter = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=ITEM_VIEW_QUERY_MAX_CHARS,
        help_text="The data manager's query string: export only the items it matches.",
    )


def _json_writable(value):
    """`value` with every integer beyond 64 bits as text: the API's JSON writer (orjson)
    refuses those, and a row stored before numbers were checked may hold one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        return str(value)
    if isinstance(value, dict):
        return {k: _json_writable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_writable(v) for v in value]
    return value


class _StoredJsonField(serializers.JSONField):
    def to_representation(self, value):
        return _json_writable(super().to_representation(value))


class ExportOutputSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    download_url = serializers.SerializerMethodField()
    params = _StoredJsonField(read_only=True)

    class Meta:
        model = Export
        fields = [
            "id",
            "project",
            "params",
            "status",
            "phase",
            "progress_done",
            "progress_total",
            "cancel_requested",
            "sha256",
            "size_bytes",
            "summary",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "download_url",
        ]

    def get_download_url(self, export) -> str | None:
        if export.status == "succeeded" and export.file_path.endswith(".zip"):
            return f"/api/projects/{export.project_id}/exports/{export.pk}/download/"
        return None


class ExplainerRunCreateInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=120)
    split = serializers.ChoiceField(choices=["train", "val", "test"], default="test")
    file = serializers.FileField(required=False)
    explainer = serializers.ChoiceField(
        choices=["occlusion", "lime", "linear", "random"], required=False
    )


class ExplainerRunOutputSerializer(serializers.ModelSerializer):
    class Meta:
        from exports.models import ExplainerRun

        model = ExplainerRun
        fields = [
            "id",
            "export",
            "name",
            "split",
            "explainer",
            "status",
            "scores",
            "plausibility_by_variant",
            "problems",
            "error",
            "progress_done",
            "progress_total",
            "created_at",
            "finished_at",
        ]


class DatasheetInfoSerializer(serializers.Serializer):
    """What admins state for the datasheet; every field optional in an update."""

    annotator_background = StrictCharField(required=False, allow_blank=True, max_length=5000)
    annotator_languages = serializers.ListField(
        child=StrictCharField(max_length=60), required=False, max_length=30
    )
    annotator_training = StrictCharField(required=False, allow_blank=True, max_length=20000)
    compensation = StrictCharField(required=False, allow_blank=True, max_length=5000)
    licence = StrictCharField(required=False, allow_blank=True, max_length=200)
    terms_of_use = StrictCharField(required=False, allow_blank=True, max_length=20000)
    updated_by = serializers.CharField(
        source="updated_by.username", read_only=True, default=None, allow_null=True
    )
    updated_at = serializers.DateTimeField(read_only=True, allow_null=True)


class DatasheetPreviewInputSerializer(QueryParametersSerializer, ExportCreateInputSerializer):
    """The export's parameters, read from the query string (`ratios` given three times)."""

    cohort = StrictCharField(
        required=False, allow_null=True, allow_blank=False, max_length=COHORT_MAX_LENGTH
    )


class VariantSuggestionsInputSerializer(serializers.Serializer):
    run = StrictIntegerField(
        min_value=1,
        allow_null=True,
        help_text="A finished explainer run of this project's exports; null shows none.",
    )
    k = StrictIntegerField(
        min_value=1,
        max_value=MAX_SUGGESTION_K,
        required=False,
        allow_null=True,
        default=None,
        help_text="Tokens suggested per item; by default the run's hard rationale size.",
    )
