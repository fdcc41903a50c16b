import json

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


BASELINE_EXPLAINERS = ["occlusion", "lime", "linear", "random"]
# rationale_metrics' registry of model explainers (no torch is imported to read it).
MODEL_EXPLAINERS_OFFERED = [
    "gradient",
    "gradient_x_input",
    "integrated_gradients",
    "attention_last",
    "attention_rollout",
    "occlusion",
    "lime",
    "shap",
]
LABEL_MAPPING_MAX = 1000


class _JsonObjectField(serializers.JSONField):
    """A JSON object: as it is in a JSON body, or as JSON text in a multipart body's field."""

    def to_internal_value(self, data):
        if isinstance(data, str | bytes):
            try:
                data = json.loads(data)
            except ValueError:
                self.fail("invalid")
        return super().to_internal_value(data)


def _mapping_checked(value):
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or len(value) > LABEL_MAPPING_MAX
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        or any(len(k) > 200 or len(v) > 200 for k, v in value.items())
    ):
        raise serializers.ValidationError(
            "a JSON object from each project label to a model label (text to text)"
        )
    return value


class ExplainerRunCreateInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=120)
    split = serializers.ChoiceField(choices=["train", "val", "test"], default="test")
    file = serializers.FileField(required=False)
    explainer = serializers.ChoiceField(
        choices=list(dict.fromkeys([*BASELINE_EXPLAINERS, *MODEL_EXPLAINERS_OFFERED])),
        required=False,
        help_text="Without a model, a bag-of-words explainer (occlusion, lime, linear, "
        "random); with one, a model explainer.",
    )
    model = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="A model registered for the project: the model explainer explains it.",
    )
    # A JSON object in a JSON body or in a multipart body's field.
    options = _JsonObjectField(
        required=False,
        help_text="A model explainer's options: integrated_gradients takes steps (a whole "
        "number) and baseline (zero, pad or mask), lime and shap take samples (whole numbers).",
    )

    def validate_options(self, value):
        if not isinstance(value, dict) or len(value) > 10:
            raise serializers.ValidationError("a JSON object of the explainer's options")
        return value


class ClassifierModelRegisterInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=120)
    folder = StrictCharField(
        required=False,
        max_length=500,
        help_text="A save_pretrained folder under the models root of the storage "
        "(RW_MODELS_ROOT), named relative to it.",
    )
    file = serializers.FileField(
        required=False, help_text="A zip of a save_pretrained folder (instead of a folder)."
    )
    label_mapping = _JsonObjectField(
        required=False,
        allow_null=True,
        help_text="Each project label's model label; left out when they are the same labels.",
    )

    def validate_label_mapping(self, value):
        return _mapping_checked(value)


class ClassifierModelOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    folder = serializers.CharField()
    labels = serializers.ListField(child=serializers.CharField())
    label_mapping = serializers.DictField(child=serializers.CharField())
    registered_by = serializers.CharField(
        source="registered_by.username", default=None, allow_null=True
    )
    created_at = serializers.DateTimeField()


class ClassifierModelDeleteInputSerializer(QueryParametersSerializer):
    runs = serializers.ChoiceField(
        choices=["keep", "delete"],
        default="keep",
        help_text="'delete' deletes the model's finished runs with it; with 'keep' a model "
        "that has runs is refused (409 model_has_runs).",
    )


class ClassifierModelDeletedOutputSerializer(serializers.Serializer):
    model_id = serializers.IntegerField()
    runs_deleted = serializers.IntegerField()


class RunCompareInputSerializer(QueryParametersSerializer):
    model = StrictCharField(
        required=False,
        max_length=20,
        help_text="A registered model's id, or 'baseline' for the bag-of-words runs and "
        "uploads; all when left out.",
    )
    explainer = StrictCharField(required=False, max_length=32)
    split = serializers.ChoiceField(choices=["train", "val", "test"], required=False)

    def validate_model(self, value):
        if value != "baseline" and not (value.isdigit() and 0 < int(value) < 2**63):
            raise serializers.ValidationError("a model's id, or 'baseline'")
        return value


class ExplainerRunOutputSerializer(serializers.ModelSerializer):
    model_name = serializers.CharField(source="model.name", default=None, allow_null=True)

    class Meta:
        from exports.models import ExplainerRun

        model = ExplainerRun
        fields = [
            "id",
            "export",
            "name",
            "split",
            "explainer",
            "model",
            "model_name",
            "options",
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


class RunCompareRowSerializer(ExplainerRunOutputSerializer):
    """A run with the export it was scored against: which gold its plausibility is against."""

    gold = serializers.SerializerMethodField()

    class Meta(ExplainerRunOutputSerializer.Meta):
        fields = [*ExplainerRunOutputSerializer.Meta.fields, "gold"]

    def get_gold(self, run) -> dict:
        params = run.export.params or {}
        return {
            "export": run.export_id,
            "selection": params.get("selection", "submitted"),
            "aggregation": params.get("aggregation", "majority"),
            "variant": params.get("variant"),
            "layout": params.get("layout", "docs"),
        }


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
