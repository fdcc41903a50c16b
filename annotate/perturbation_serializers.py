"""Input and output serializers of the perturbation API. Shapes only: the rules are in
annotate/services/perturbations.py."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate.models import DocumentRole, PerturbationStatus, TaskType
from annotate.perturbation_types import (
    KEY_PATTERN,
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
    MAX_PROJECT_TYPES,
)
from annotate.services.perturbations import MAX_TEXT_CHARS, Decision, QueryMode, query_mode
from config.api_fields import (
    QueryParametersSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictRegexField,
)

SNIPPET_CHARS = 240
QUERY_MODES = (QueryMode.FREE, QueryMode.QUESTION, QueryMode.OPTIONS, QueryMode.NONE)


def text_names(project, links) -> list[str]:
    """What each text of an item is called on the pages: a pair's project names, a
    reading-comprehension passage and question, else "Text"."""
    if project.task_type == TaskType.READING_COMPREHENSION:
        passages = sum(1 for link in links if link.role == DocumentRole.TEXT)
        names, n = [], 0
        for link in links:
            if link.role == DocumentRole.QUESTION:
                names.append("Question")
            else:
                n += 1
                names.append("Passage" if passages == 1 else f"Passage {n}")
        return names
    if len(links) == 1:
        return ["Text"]
    given = list(project.text_names or [])
    return [given[n] if n < len(given) and given[n] else f"Text {n + 1}" for n in range(len(links))]


class _TextsField(serializers.ListField):
    # Texts are kept exactly as typed (no trimming): the diff is over what the author wrote.
    def __init__(self, **kwargs):
        super().__init__(
            child=StrictCharField(
                trim_whitespace=False, allow_blank=True, max_length=MAX_TEXT_CHARS
            ),
            max_length=50,
            **kwargs,
        )


class AnswerInputSerializer(serializers.Serializer):
    text = StrictCharField(required=False, allow_blank=True, max_length=10_000)
    none = StrictBooleanField(required=False, help_text="true: the passage has no answer")
    document = StrictIntegerField(
        required=False, min_value=0, help_text="Position of the passage holding the answer."
    )
    start_char = StrictIntegerField(required=False, min_value=0)


class PerturbationCreateInputSerializer(serializers.Serializer):
    original = StrictIntegerField(help_text="Id of the original item.")
    types = serializers.ListField(child=StrictCharField(max_length=48), max_length=30)
    texts = _TextsField(help_text="One text per document of the original, in its order.")
    query = StrictCharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False, default=None
    )
    label = StrictCharField(
        required=False, allow_null=True, allow_blank=True, max_length=255, default=None
    )
    answer = AnswerInputSerializer(required=False, allow_null=True, default=None)


class PerturbationEditInputSerializer(serializers.Serializer):
    """A checker's edits: any of the draft's fields; the others stay as the author wrote them."""

    types = serializers.ListField(
        child=StrictCharField(max_length=48), max_length=30, required=False
    )
    texts = _TextsField(required=False)
    query = StrictCharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False
    )
    label = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=255)
    answer = AnswerInputSerializer(required=False, allow_null=True)


class PerturbationCheckInputSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Decision.ALL)
    comment = StrictCharField(required=False, allow_blank=True, max_length=5_000, default="")
    edits = PerturbationEditInputSerializer(required=False, allow_null=True, default=None)


class PerturbationListFilterSerializer(QueryParametersSerializer):
    # Empty, as the page's "any status" sends it: every status.
    status = serializers.ChoiceField(
        choices=PerturbationStatus.choices, required=False, allow_blank=True
    )
    original = StrictIntegerField(required=False, min_value=1)


class OriginalListFilterSerializer(QueryParametersSerializer):
    search = StrictCharField(required=False, allow_blank=True, max_length=200, default="")
    below_quota = StrictBooleanField(required=False, default=False)


class ProjectTypeSerializer(serializers.Serializer):
    key = StrictRegexField(KEY_PATTERN, max_length=48)
    name = StrictCharField(required=False, allow_blank=True, max_length=MAX_NAME_CHARS)
    description = StrictCharField(
        required=False, allow_blank=True, max_length=MAX_DESCRIPTION_CHARS
    )


class PerturbationSettingsInputSerializer(serializers.Serializer):
    perturbation_types = ProjectTypeSerializer(
        many=True, required=False, max_length=MAX_PROJECT_TYPES
    )
    perturbations_per_original = StrictIntegerField(required=False, min_value=1, max_value=100)
    perturbations_per_type = StrictIntegerField(required=False, min_value=0, max_value=1_000_000)


class TypeOutputSerializer(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    builtin = serializers.BooleanField()


class PerturbationSettingsOutputSerializer(serializers.Serializer):
    task_type = serializers.CharField()
    language = serializers.CharField()
    labels = serializers.ListField(child=serializers.CharField())
    types = TypeOutputSerializer(many=True, help_text="Every type an author may pick.")
    project_types = serializers.ListField(
        child=serializers.DictField(), help_text="The project's own types, as stored."
    )
    perturbations_per_original = serializers.IntegerField()
    perturbations_per_type = serializers.IntegerField()


class TypeProgressOutputSerializer(TypeOutputSerializer):
    pending = serializers.IntegerField()
    accepted = serializers.IntegerField()
    rejected = serializers.IntegerField()
    target = serializers.IntegerField()
    remaining = serializers.IntegerField()


class OriginalsProgressOutputSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    below_quota = serializers.IntegerField(
        help_text="Originals with fewer accepted perturbations than the per-original quota."
    )
    per_original_target = serializers.IntegerField()
    with_perturbations = serializers.IntegerField()


class CheckFiguresOutputSerializer(serializers.Serializer):
    pending = serializers.IntegerField()
    accepted = serializers.IntegerField()
    accepted_unchanged = serializers.IntegerField()
    accepted_edited = serializers.IntegerField()
    rejected = serializers.IntegerField()
    decided = serializers.IntegerField()
    accepted_unchanged_share = serializers.FloatField(
        allow_null=True, help_text="Accepted without an edit, over all decided; null before any."
    )


class PerturbationProgressOutputSerializer(serializers.Serializer):
    types = TypeProgressOutputSerializer(many=True)
    originals = OriginalsProgressOutputSerializer()
    check = CheckFiguresOutputSerializer()


class _Counts(serializers.Serializer):
    pending = serializers.IntegerField(source="perturbations_pending")
    accepted = serializers.IntegerField(source="perturbations_accepted")
    rejected = serializers.IntegerField(source="perturbations_rejected")


class OriginalListOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    annotation_id = serializers.CharField()
    label = serializers.CharField(allow_null=True)
    split = serializers.CharField()
    query = serializers.CharField(allow_null=True)
    snippet = serializers.SerializerMethodField()
    documents = serializers.SerializerMethodField()
    perturbations = _Counts(source="*")

    def get_snippet(self, item) -> str:
        links = item.item_documents.all()
        text = links[0].document.text if links else ""
        return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS].rstrip() + "…"

    def get_documents(self, item) -> int:
        return len(item.item_documents.all())


class _DocumentOutputSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    docid = serializers.CharField(source="document.docid")
    role = serializers.CharField()
    name = serializers.CharField()
    text = serializers.CharField(source="document.text")


def _documents(project, item) -> list[dict]:
    links = list(item.item_documents.all())
    for link, name in zip(links, text_names(project, links), strict=True):
        link.name = name
    return _DocumentOutputSerializer(links, many=True).data


class _PerturbationSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    types = serializers.ListField(child=serializers.CharField())
    label = serializers.CharField(allow_null=True)
    author = serializers.CharField(source="author.username")
    created_at = serializers.DateTimeField()
    item = serializers.CharField(source="item.annotation_id", default=None, allow_null=True)


class OriginalDetailOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    annotation_id = serializers.CharField()
    label = serializers.CharField(allow_null=True)
    query = serializers.CharField(allow_null=True)
    query_type = serializers.CharField(allow_null=True)
    answer = serializers.JSONField(allow_null=True)
    options = serializers.ListField(child=serializers.CharField())
    split = serializers.CharField()
    query_mode = serializers.SerializerMethodField()
    documents = serializers.SerializerMethodField()
    perturbations = _PerturbationSummarySerializer(many=True, source="perturbation_drafts.all")

    def get_documents(self, item) -> list[dict]:
        return _documents(self.context["project"], item)

    @extend_schema_field(serializers.ChoiceField(choices=QUERY_MODES))
    def get_query_mode(self, item) -> str:
        return query_mode(item, item.item_documents.all())


class _OriginalRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    annotation_id = serializers.CharField()


class PerturbationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    original = _OriginalRefSerializer()
    types = serializers.ListField(child=serializers.CharField())
    status = serializers.CharField()
    label = serializers.CharField(allow_null=True)
    author = serializers.CharField(source="author.username")
    created_at = serializers.DateTimeField()
    checker = serializers.CharField(source="checker.username", default=None, allow_null=True)
    checked_at = serializers.DateTimeField(allow_null=True)
    check_comment = serializers.CharField()
    edited_in_check = serializers.BooleanField()
    item = serializers.CharField(source="item.annotation_id", default=None, allow_null=True)


class _EventOutputSerializer(serializers.Serializer):
    action = serializers.CharField()
    actor = serializers.CharField(source="actor.username")
    comment = serializers.CharField()
    changes = serializers.JSONField()
    created_at = serializers.DateTimeField()


class _OriginalOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    annotation_id = serializers.CharField()
    label = serializers.CharField(allow_null=True)
    query = serializers.CharField(allow_null=True)
    answer = serializers.JSONField(allow_null=True)
    options = serializers.ListField(child=serializers.CharField())
    query_mode = serializers.SerializerMethodField()
    documents = serializers.SerializerMethodField()

    def get_documents(self, item) -> list[dict]:
        return _documents(self.context["project"], item)

    @extend_schema_field(serializers.ChoiceField(choices=QUERY_MODES))
    def get_query_mode(self, item) -> str:
        return query_mode(item, item.item_documents.all())


class PerturbationDetailOutputSerializer(PerturbationOutputSerializer):
    original = _OriginalOutputSerializer()
    texts = serializers.ListField(child=serializers.CharField())
    query = serializers.CharField(allow_null=True)
    answer = serializers.JSONField(allow_null=True)
    events = _EventOutputSerializer(many=True, source="events.all")
