"""Input and output shapes of the data manager's API: the item list, saved views and bulk
actions."""

from rest_framework import serializers

from config.api_fields import StrictBooleanField, StrictCharField, StrictIntegerField
from qc.models import ITEM_VIEW_NAME_MAX_CHARS, ITEM_VIEW_QUERY_MAX_CHARS, ItemStatus, ItemView


class ItemTextPreviewSerializer(serializers.Serializer):
    name = serializers.CharField()
    preview = serializers.CharField()


class ItemVariantCountSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    submitted = serializers.IntegerField()
    quota = serializers.IntegerField()


class ItemAnnotatorSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class ItemPerturbationSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["original", "perturbed"], allow_null=True)
    types = serializers.ListField(child=serializers.CharField())
    original_id = serializers.IntegerField(allow_null=True)
    perturbed_ids = serializers.ListField(child=serializers.IntegerField())


class ItemListRowOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    # An integer where the imported data had one (ERASER's BoolQ), else a string.
    annotation_id = serializers.JSONField()
    split = serializers.CharField(allow_blank=True)
    label = serializers.CharField(allow_null=True)
    majority_label = serializers.CharField(allow_null=True)
    texts = ItemTextPreviewSerializer(many=True)
    query_preview = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=ItemStatus.choices)
    variants = ItemVariantCountSerializer(many=True)
    submitted = serializers.IntegerField()
    annotators = ItemAnnotatorSerializer(many=True)
    kappa = serializers.FloatField(allow_null=True)
    f1 = serializers.FloatField(allow_null=True)
    open_flags = serializers.IntegerField()
    flag_kinds = serializers.ListField(child=serializers.CharField())
    review_score = serializers.FloatField(allow_null=True)
    perturbation = ItemPerturbationSerializer()
    excluded = serializers.BooleanField()
    marked_gold = serializers.BooleanField()
    curated = serializers.BooleanField()
    curated_stale = serializers.BooleanField(
        help_text="An annotation was submitted after the curated gold was made or confirmed"
    )
    last_activity = serializers.DateTimeField(allow_null=True)


class ItemViewInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=ITEM_VIEW_NAME_MAX_CHARS)
    query = StrictCharField(allow_blank=True, max_length=ITEM_VIEW_QUERY_MAX_CHARS)
    shared = StrictBooleanField(required=False, default=False)


class ItemViewOutputSerializer(serializers.ModelSerializer):
    creator = serializers.CharField(source="creator.username")

    class Meta:
        model = ItemView
        fields = ["id", "name", "query", "shared", "creator", "created_at", "updated_at"]


BULK_IDS_LIMIT = 10_000


class ItemBulkInputSerializer(serializers.Serializer):
    action = StrictCharField(max_length=64)
    ids = serializers.ListField(child=StrictIntegerField(min_value=1), required=False)
    filter = StrictCharField(required=False, allow_blank=True, max_length=ITEM_VIEW_QUERY_MAX_CHARS)
    args = serializers.DictField(required=False, default=dict)

    def validate_ids(self, ids):
        if len(ids) > BULK_IDS_LIMIT:
            raise serializers.ValidationError(
                f"at most {BULK_IDS_LIMIT} ids; choose more with a filter"
            )
        return ids

    def validate(self, data):
        if ("ids" in data) == ("filter" in data):
            raise serializers.ValidationError({"ids": "give ids or a filter, not both"})
        return data


class ItemBulkOutputSerializer(serializers.Serializer):
    action = serializers.CharField()
    touched = serializers.IntegerField()
    matched = serializers.IntegerField()
    audit_event = serializers.IntegerField()
