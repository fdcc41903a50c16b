"""The data manager's item detail: one item with every annotation of every round (its
selector is qc/item_detail_selectors.py). The serializers describe the answer for the
OpenAPI schema; the selector builds it as plain data."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api_schema import errors
from qc.data_manager_serializers import ItemListRowOutputSerializer
from qc.item_detail_selectors import item_detail_get, item_get
from qc.item_list_selectors import item_list_project
from qc.services.item_summaries import item_summaries_refresh


class _SpanSerializer(serializers.Serializer):
    docid = serializers.CharField()
    start_token = serializers.IntegerField()
    end_token = serializers.IntegerField(help_text="Exclusive.")


class _SetSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="From 0, in the annotator's order.")
    spans = _SpanSerializer(many=True)


class _PersonSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class _VariantSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class _FlagSerializer(serializers.Serializer):
    kind = serializers.CharField()
    open = serializers.BooleanField(
        help_text="On the annotator's latest round (not superseded by a revision)."
    )


class _SetScoreSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    sufficiency = serializers.IntegerField()
    compactness = serializers.IntegerField()


class _ReviewScoresSerializer(serializers.Serializer):
    reviewer = serializers.CharField()
    comprehensiveness = serializers.IntegerField()
    sets = _SetScoreSerializer(many=True)


class _ReviewCommentSerializer(serializers.Serializer):
    reviewer = serializers.CharField()
    set = serializers.IntegerField(
        allow_null=True, help_text="The set's position; null: the whole."
    )
    text = serializers.CharField()


class _ReviewSerializer(serializers.Serializer):
    scores = _ReviewScoresSerializer(many=True)
    comments = _ReviewCommentSerializer(many=True)
    verdict = serializers.CharField(allow_null=True)


class _AnnotationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    assignment_id = serializers.IntegerField()
    round = serializers.IntegerField()
    annotator = _PersonSerializer()
    variant = _VariantSerializer()
    label = serializers.CharField(allow_null=True)
    time_spent_ms = serializers.IntegerField()
    submitted_at = serializers.DateTimeField()
    revision_of = serializers.IntegerField(
        allow_null=True, help_text="The annotation of the round before, which this one revises."
    )
    sets = _SetSerializer(many=True)
    flags = _FlagSerializer(many=True)
    review = _ReviewSerializer()


class _TextSerializer(serializers.Serializer):
    docid = serializers.CharField()
    role = serializers.CharField(help_text="text or question")
    text = serializers.CharField()
    tokens = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="Per token, [start, end) character offsets into the text.",
    )
    sentences = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="Per sentence, its [start_token, end_token).",
    )


class _ItemSerializer(ItemListRowOutputSerializer):
    """The item's row of the list, and the item in full."""

    query = serializers.CharField(allow_null=True)
    options = serializers.ListField(child=serializers.CharField())
    answer = serializers.JSONField(allow_null=True)
    texts = _TextSerializer(many=True)


class ItemDetailOutputSerializer(serializers.Serializer):
    item = _ItemSerializer()
    annotations = _AnnotationSerializer(many=True)
    token_agreement = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="Per docid, per token: the share of annotators whose latest round "
        "highlighted it.",
    )
    curated = serializers.JSONField(allow_null=True, help_text="The curated annotation, if any.")


class ItemDetailApi(APIView):
    @extend_schema(
        operation_id="projects_items_retrieve",
        responses={200: ItemDetailOutputSerializer, **errors(403, 404)},
    )
    def get(self, request, project_id: int, item_id: int):
        project = item_list_project(project_id=project_id, user=request.user)
        item = item_get(project=project, item_id=item_id)
        item_summaries_refresh(project=project, item_ids=[item.pk])
        return Response(item_detail_get(project=project, item_id=item.pk))
