"""Input and output shapes of the quality-control API."""

from rest_framework import serializers

from annotate.serializers import RationaleSetsField
from config.api_fields import (
    BIGINT_MAX,
    QueryParametersSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StrictModelSerializer,
)
from qc.models import FlagKind, Platform, QualityPolicy


class QualityPolicySerializer(StrictModelSerializer):
    allowed_locales = serializers.ListField(child=StrictCharField(max_length=16), required=False)
    min_approval_rate = StrictFloatField(
        min_value=0, max_value=100, allow_null=True, required=False
    )
    max_approval_rate = StrictFloatField(
        min_value=0, max_value=100, allow_null=True, required=False
    )
    test_pass_f1 = StrictFloatField(min_value=0, max_value=1, required=False)
    test_max_attempts = StrictIntegerField(min_value=1, max_value=10, required=False)
    min_seconds = StrictFloatField(min_value=0, required=False)
    max_stopword_share = StrictFloatField(min_value=0, max_value=1, required=False)
    min_coannotator_kappa = StrictFloatField(min_value=-1, max_value=1, required=False)

    class Meta:
        model = QualityPolicy
        exclude = ["id", "project"]


class GoldItemsInputSerializer(serializers.Serializer):
    annotation_ids = serializers.ListField(
        child=StrictCharField(max_length=255), min_length=1, max_length=100
    )


class SetScoreInputSerializer(serializers.Serializer):
    rationale_set = StrictIntegerField()
    sufficiency = StrictIntegerField(min_value=1, max_value=3)
    compactness = StrictIntegerField(min_value=1, max_value=4)
    comment = StrictCharField(required=False, allow_blank=True, max_length=5000, default="")


class ReviewInputSerializer(serializers.Serializer):
    comprehensiveness = StrictIntegerField(min_value=1, max_value=3)
    set_scores = SetScoreInputSerializer(many=True)
    comment = StrictCharField(required=False, allow_blank=True, max_length=5000, default="")


class ReasonInputSerializer(serializers.Serializer):
    reason = StrictCharField(max_length=2000)


class DecisionInputSerializer(serializers.Serializer):
    accept = StrictBooleanField()
    reason = StrictCharField(required=False, allow_blank=True, max_length=2000, default="")


class TestAnswerInputSerializer(serializers.Serializer):
    gold_item = StrictIntegerField()
    rationale_sets = RationaleSetsField()
    time_spent_ms = StrictIntegerField(min_value=0, max_value=7 * 24 * 3600 * 1000, default=0)


class WorkerCsvInputSerializer(serializers.Serializer):
    file = serializers.FileField()
    # The platform the ids come from; empty: ids that are this site's usernames.
    platform = serializers.ChoiceField(
        choices=Platform.choices, required=False, allow_blank=True, default=""
    )


GOLD_CHOICE_PREVIEW_CHARACTERS = 240


class GoldItemChoiceOutputSerializer(serializers.Serializer):
    """An item an admin may pick as gold: its id, the start of its text, its label, and
    what decides whether it can be gold."""

    annotation_id = serializers.CharField()
    label = serializers.CharField(allow_null=True)
    split = serializers.CharField()
    preview = serializers.SerializerMethodField()
    has_reference = serializers.BooleanField()
    served = serializers.BooleanField()
    is_gold = serializers.BooleanField()

    def get_preview(self, item) -> str:
        texts = [link.document.text for link in item.item_documents.all()]
        joined = " · ".join(texts)
        if len(joined) <= GOLD_CHOICE_PREVIEW_CHARACTERS:
            return joined
        return joined[: GOLD_CHOICE_PREVIEW_CHARACTERS - 1] + "…"


class SetupStepOutputSerializer(serializers.Serializer):
    """One step of a project's setup checklist: done or not, optional or not, what is there
    or what to do, in words, and the page that does it."""

    key = serializers.CharField()
    title = serializers.CharField()
    done = serializers.BooleanField()
    optional = serializers.BooleanField()
    detail = serializers.CharField()
    url = serializers.CharField()


# ---------------------------------------------------------------- a project's lifecycle


class MemberRolesInputSerializer(serializers.Serializer):
    roles = serializers.ListField(child=StrictCharField(max_length=32), max_length=16)


class MemberRolesOutputSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())


class MemberRemovedOutputSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    leases_released = serializers.IntegerField()


class ItemIdsInputSerializer(serializers.Serializer):
    ids = serializers.ListField(child=StrictIntegerField(min_value=1), max_length=10_000)


class ItemsChangedOutputSerializer(serializers.Serializer):
    items = serializers.IntegerField(help_text="How many items the request deleted or restored.")


class ProjectDeleteInputSerializer(serializers.Serializer):
    confirm_name = StrictCharField(max_length=200, allow_blank=True)


class DeletedImportOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source_name = serializers.CharField()
    items = serializers.IntegerField()
    deleted_at = serializers.DateTimeField()
    deleted_by = serializers.CharField(allow_null=True)
    restorable_until = serializers.DateTimeField()


class DeletedItemOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    annotation_id = serializers.CharField()
    deleted_at = serializers.DateTimeField()
    restorable_until = serializers.DateTimeField()


class DeletedDataOutputSerializer(serializers.Serializer):
    """What a project holds deleted and may still restore: imports (with their items), and
    items deleted on their own (the first 200, and how many there are)."""

    restore_days = serializers.IntegerField()
    imports = DeletedImportOutputSerializer(many=True)
    items = DeletedItemOutputSerializer(many=True)
    items_count = serializers.IntegerField()


class ProjectStateOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    archived_at = serializers.DateTimeField(allow_null=True)
    deleted_at = serializers.DateTimeField(allow_null=True)
    restorable_until = serializers.DateTimeField(allow_null=True)


class ReviewQueueQuerySerializer(QueryParametersSerializer):
    variant = StrictIntegerField(required=False, min_value=1, max_value=BIGINT_MAX)
    annotator = StrictIntegerField(
        required=False, min_value=1, max_value=BIGINT_MAX, help_text="An annotator's id."
    )
    round = StrictIntegerField(required=False, min_value=1, max_value=100)
    flag = serializers.ChoiceField(
        choices=["any", "none", *FlagKind.values],
        required=False,
        help_text="Annotations with any quality flag, with none, or with one kind.",
    )
    waited_hours = StrictIntegerField(
        required=False,
        min_value=0,
        max_value=24 * 366,
        help_text="Submitted at least this many hours ago.",
    )
    sort = serializers.ChoiceField(
        choices=["queue", "oldest", "newest", "round", "most_reviews"],
        required=False,
        default="queue",
    )


class ReviewQueueRowOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    item = serializers.CharField(source="assignment__item__annotation_id")
    round = serializers.IntegerField(source="assignment__round")
    variant_id = serializers.IntegerField(source="assignment__variant_id")
    variant = serializers.CharField(source="assignment__variant__name")
    annotator = serializers.IntegerField(
        source="assignment__worker_id", help_text="An id, never a name: the review is blind."
    )
    submitted_at = serializers.DateTimeField(source="created_at")
    reviews_done = serializers.IntegerField()
