"""Input and output shapes of the curation API (qc/curation_apis.py)."""

from rest_framework import serializers

from annotate.serializers import RationaleSetsField
from config.api_fields import StrictCharField, StrictFloatField, StrictIntegerField
from qc.curation_rules import AGREEMENT_TESTS, MERGES, UNANIMOUS

ID_LIST_MAX = 20_000


class CuratedSaveInputSerializer(serializers.Serializer):
    """The gold sets the curator built (spans as the submit API takes them), with the
    version they started from: 0 for an item not curated yet."""

    version = StrictIntegerField(min_value=0)
    sets = RationaleSetsField()
    label = StrictCharField(max_length=255, allow_null=True, required=False, default=None)
    answer = serializers.JSONField(allow_null=True, required=False, default=None)
    sources = serializers.ListField(
        child=StrictIntegerField(), required=False, allow_null=True, default=None, max_length=1000
    )


class CuratedConfirmInputSerializer(serializers.Serializer):
    """The version of the curated gold the curator confirms as it is."""

    version = StrictIntegerField(min_value=1)


class AutoMergeRuleSerializer(serializers.Serializer):
    test = serializers.ChoiceField(choices=AGREEMENT_TESTS, default=UNANIMOUS)
    threshold = StrictFloatField(min_value=-1, max_value=1, required=False, default=1.0)
    merge = serializers.ChoiceField(choices=MERGES, required=False, default="majority")


class AutoMergeInputSerializer(serializers.Serializer):
    """The items by ids, by the data manager's filter (its query string) or by the curation
    queue's filter (its query string), and the rule."""

    rule = AutoMergeRuleSerializer()
    ids = serializers.ListField(
        child=StrictIntegerField(), required=False, max_length=ID_LIST_MAX, min_length=1
    )
    filter = StrictCharField(required=False, allow_blank=True, max_length=4000)
    queue = StrictCharField(required=False, allow_blank=True, max_length=4000)

    def validate(self, attrs):
        given = [name for name in ("ids", "filter", "queue") if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"ids": "choose the items one way: ids, filter or queue"}
            )
        return attrs


class AutoMergeOutputSerializer(serializers.Serializer):
    rule = serializers.CharField()
    matched = serializers.IntegerField()
    merged = serializers.IntegerField()
    skipped = serializers.IntegerField()
    skipped_because = serializers.DictField(child=serializers.IntegerField())
