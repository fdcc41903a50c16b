"""Input and output of an annotator's previous answers."""

from rest_framework import serializers

from annotate.serializers import (
    LABEL_MAX_LENGTH,
    MAX_TIME_SPENT_MS,
    RationaleSetsField,
    item_for_annotator,
)
from config.api_fields import StrictCharField, StrictIntegerField


class AnswerRowOutputSerializer(serializers.Serializer):
    """One line of the list: the answer summarised, and whether it may still change."""

    id = serializers.IntegerField(help_text="The assignment's id: the answer's address.")
    item = serializers.CharField(source="item.annotation_id_value")
    snippet = serializers.CharField(allow_null=True, help_text="The item's first words.")
    round = serializers.IntegerField()
    submitted_at = serializers.DateTimeField()
    label = serializers.CharField(source="annotation.label", allow_null=True)
    set_count = serializers.IntegerField()
    tokens = serializers.IntegerField(help_text="Tokens highlighted over all sets.")
    version = serializers.IntegerField()
    closed = serializers.CharField(
        allow_null=True,
        help_text="Why the answer can no longer change (participant, reviewed, complete, "
        "project_archived, item_deleted), or null while it can.",
    )


class AnswerVersionOutputSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    label = serializers.CharField(allow_null=True)
    time_spent_ms = serializers.IntegerField()
    rationale_sets = serializers.JSONField()
    created_at = serializers.DateTimeField()


class AnswerDetailOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="row.pk")
    project = serializers.IntegerField(source="row.item.project_id")
    round = serializers.IntegerField(source="row.round")
    submitted_at = serializers.DateTimeField(source="row.submitted_at")
    label = serializers.CharField(source="row.annotation.label", allow_null=True)
    time_spent_ms = serializers.IntegerField(source="row.annotation.time_spent_ms")
    version = serializers.IntegerField(source="row.version")
    closed = serializers.CharField(allow_null=True)
    rationale_sets = serializers.JSONField()
    versions = AnswerVersionOutputSerializer(many=True)
    newer = serializers.IntegerField(source="newer_id", allow_null=True)
    older = serializers.IntegerField(source="older_id", allow_null=True)
    item = serializers.SerializerMethodField()
    labels = serializers.ListField(child=serializers.CharField(), source="row.item.project.labels")
    labels_from_annotators = serializers.BooleanField(
        source="row.item.project.labels_from_annotators"
    )

    def get_item(self, detail) -> dict:
        project = detail.row.item.project
        return item_for_annotator(detail.row.item, hide_gold=project.labels_from_annotators)


class AnswerChangeInputSerializer(serializers.Serializer):
    base_version = StrictIntegerField(
        min_value=1, max_value=32_767, help_text="The version this change starts from."
    )
    rationale_sets = RationaleSetsField()
    label = StrictCharField(
        max_length=LABEL_MAX_LENGTH, required=False, allow_null=True, default=None
    )
    time_spent_ms = StrictIntegerField(min_value=0, max_value=MAX_TIME_SPENT_MS, default=0)
