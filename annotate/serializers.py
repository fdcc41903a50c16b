import uuid
from typing import Annotated

import msgspec
from django.core.validators import MaxLengthValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate import selectors
from annotate.models import (
    Granularity,
    ImportFormat,
    ImportJob,
    InstructionVariant,
    Language,
    Project,
    Role,
    TaskType,
)
from annotate.services.imports import import_job_progress
from annotate.suggestion_selectors import item_suggestions
from annotate.task_types import DEFAULT_TEXT_NAMES, MAX_TEXT_NAME_LENGTH, NO_ANSWER_LABEL
from annotate.variant_presets import PRESET_TASKS, variant_display_text
from config.api_fields import (
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StrictSlugField,
    StrictUUIDField,
    json_without_nul,
    text_problem,
)
from config.text_limits import INSTRUCTIONS_MAX_CHARS, PROJECT_DESCRIPTION_MAX_CHARS


class ProjectOutputSerializer(serializers.ModelSerializer):
    # Counted by the project list's query; null where a project is read on its own.
    item_count = serializers.IntegerField(read_only=True, default=None, allow_null=True)

    class Meta:
        model = Project
        fields = [
            "id",
            "name",
            "description",
            "task_type",
            "labels",
            "language",
            "annotators_per_item",
            "min_highlight",
            "max_rounds",
            "reviewers_per_annotation",
            "sufficiency_threshold",
            "compactness_threshold",
            "comprehensiveness_threshold",
            "lease_seconds",
            "text_names",
            "labels_from_annotators",
            "question_rationales",
            "multi_set_mode",
            "blind_annotators",
            "created_at",
            "item_count",
        ]


class ProjectCreateInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200)
    description = StrictCharField(
        required=False, allow_blank=True, default="", max_length=PROJECT_DESCRIPTION_MAX_CHARS
    )
    task_type = serializers.ChoiceField(choices=TaskType.choices, default=TaskType.CLASSIFICATION)
    labels = serializers.ListField(
        child=StrictCharField(max_length=255), required=False, default=list
    )
    language = serializers.ChoiceField(choices=Language.choices, default=Language.ENGLISH)
    annotators_per_item = StrictIntegerField(min_value=1, max_value=50, default=3)
    min_highlight = StrictIntegerField(min_value=0, max_value=10_000, default=1)
    text_names = serializers.ListField(
        child=StrictCharField(max_length=MAX_TEXT_NAME_LENGTH),
        max_length=2,
        required=False,
        default=list,
    )
    labels_from_annotators = StrictBooleanField(required=False, default=False)
    question_rationales = StrictBooleanField(required=False, default=False)


class ImportJobCreateInputSerializer(serializers.Serializer):
    file = serializers.FileField()
    source_format = serializers.ChoiceField(choices=ImportFormat.choices, required=False)
    # A JSON object in the multipart body: which column of a Hugging Face dataset fills
    # which role of an item (annotate/hf_mapping.py); absent: guessed from the names.
    mapping = serializers.JSONField(
        binary=True,
        required=False,
        help_text="Hugging Face datasets only: a JSON object naming, per role (text, "
        "documents, label, id, split, query, query_type, rationale_spans, rationale_tokens, "
        "perturbation_of, perturbation_types; in a reading-comprehension project also "
        "question and answers), the column that fills it. Roles left out are guessed from the "
        "column names.",
    )

    def validate_mapping(self, value):
        if not isinstance(value, dict) or not all(
            isinstance(v, str | list | type(None)) for v in value.values()
        ):
            raise serializers.ValidationError(
                "a JSON object naming, per role, a column (or a list of text columns)"
            )
        return value


class HfMappingInputSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="A .parquet or .arrow file, or a .zip of a dataset folder"
    )
    mapping = serializers.JSONField(
        binary=True,
        required=False,
        help_text="As for an import: per role, a column; roles left out are guessed.",
    )

    def validate_mapping(self, value):
        return ImportJobCreateInputSerializer().validate_mapping(value)


class HfColumnSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    label_names = serializers.ListField(child=serializers.CharField(), allow_null=True)


class HfFileSerializer(serializers.Serializer):
    name = serializers.CharField()
    split = serializers.CharField(allow_blank=True)
    rows = serializers.IntegerField()


class HfSampleSerializer(serializers.Serializer):
    file = serializers.CharField()
    row = serializers.IntegerField()
    id = serializers.CharField()
    label = serializers.CharField(allow_null=True)
    split = serializers.CharField(allow_blank=True)
    texts = serializers.ListField(child=serializers.CharField())
    rationale_sets = serializers.IntegerField()
    perturbation_of = serializers.CharField(allow_null=True)
    question = serializers.CharField(
        allow_null=True, help_text="Reading comprehension: the question (else null)"
    )
    answer = serializers.CharField(
        allow_null=True,
        allow_blank=True,
        help_text="Reading comprehension: the gold answer's text, empty for no answer, null "
        "when the row gives none",
    )


class ProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()


class HfMappingOutputSerializer(serializers.Serializer):
    files = HfFileSerializer(many=True)
    rows = serializers.IntegerField()
    columns = HfColumnSerializer(many=True)
    roles = serializers.ListField(child=serializers.CharField())
    mapping = serializers.DictField(help_text="per role, its column (text may be a list)")
    problems = ProblemSerializer(many=True)
    sample = HfSampleSerializer(many=True)


class ImportJobOutputSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "project",
            "source_format",
            "source_name",
            "options",
            "status",
            "progress",
            "problems",
            "summary",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_progress(self, job) -> dict:
        return import_job_progress(job)


class ProjectPolicyInputSerializer(serializers.Serializer):
    description = StrictCharField(
        required=False, allow_blank=True, max_length=PROJECT_DESCRIPTION_MAX_CHARS
    )
    labels = serializers.ListField(child=StrictCharField(max_length=255), required=False)
    annotators_per_item = StrictIntegerField(min_value=1, max_value=50, required=False)
    min_highlight = StrictIntegerField(min_value=0, max_value=10_000, required=False)
    lease_seconds = StrictIntegerField(min_value=30, max_value=7 * 24 * 3600, required=False)
    allow_variant_mixing = StrictBooleanField(required=False)
    # A PositiveIntegerField: PostgreSQL's integer, at most 2**31 - 1 (a larger seed was a 500).
    allocation_seed = StrictIntegerField(min_value=0, max_value=2**31 - 1, required=False)
    reviewers_per_annotation = StrictIntegerField(min_value=1, max_value=10, required=False)
    max_rounds = StrictIntegerField(min_value=1, max_value=10, required=False)
    sufficiency_threshold = StrictFloatField(min_value=1, max_value=3, required=False)
    compactness_threshold = StrictFloatField(min_value=1, max_value=4, required=False)
    comprehensiveness_threshold = StrictFloatField(min_value=1, max_value=3, required=False)
    # What the task type shows: whether these fit the project's task type is the service's
    # to say, as it knows the project.
    text_names = serializers.ListField(
        child=StrictCharField(max_length=MAX_TEXT_NAME_LENGTH), max_length=2, required=False
    )
    labels_from_annotators = StrictBooleanField(required=False)
    question_rationales = StrictBooleanField(required=False)
    multi_set_mode = StrictBooleanField(required=False)
    blind_annotators = StrictBooleanField(required=False)


class MembershipInputSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class MemberInvitedOutputSerializer(serializers.Serializer):
    detail = serializers.CharField()


# As long as the columns that store them (Document.docid, Annotation.label).
DOCID_MAX_LENGTH = 255
LABEL_MAX_LENGTH = 255


# A worked example in the instructions: a sentence or two, shown beside the text.
EXAMPLE_MAX_TOKENS = 500
EXAMPLE_TOKEN_MAX_CHARS = 100
EXAMPLE_NOTE_MAX_CHARS = 2_000
MAX_EXAMPLES = 20


class VariantExampleSerializer(serializers.Serializer):
    tokens = serializers.ListField(
        child=StrictCharField(max_length=EXAMPLE_TOKEN_MAX_CHARS),
        min_length=1,
        max_length=EXAMPLE_MAX_TOKENS,
    )
    highlighted = serializers.ListField(
        child=StrictIntegerField(min_value=0), max_length=EXAMPLE_MAX_TOKENS
    )
    label = StrictCharField(required=False, allow_blank=True, max_length=LABEL_MAX_LENGTH)
    note = StrictCharField(required=False, allow_blank=True, max_length=EXAMPLE_NOTE_MAX_CHARS)


class VariantSuggestionsOutputSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    k = serializers.IntegerField()


class VariantOutputSerializer(serializers.ModelSerializer):
    suggestions = serializers.SerializerMethodField()

    class Meta:
        model = InstructionVariant
        fields = [
            "id",
            "name",
            "version",
            "granularity",
            "text",
            "examples",
            "active",
            "frozen_at",
            "suggestions",
        ]

    @extend_schema_field(VariantSuggestionsOutputSerializer(allow_null=True))
    def get_suggestions(self, variant) -> dict | None:
        """The explainer run whose top-k tokens the variant shows, or null."""
        if not variant.suggestions:
            return None
        return {"run": variant.suggestions["run"], "k": variant.suggestions["k"]}


class VariantCreateInputSerializer(serializers.Serializer):
    name = StrictSlugField(max_length=120)
    text = StrictCharField(max_length=INSTRUCTIONS_MAX_CHARS)
    granularity = serializers.ChoiceField(choices=Granularity.choices, default=Granularity.WORD)
    examples = VariantExampleSerializer(
        many=True, required=False, default=list, max_length=MAX_EXAMPLES
    )


class VariantPresetsInputSerializer(serializers.Serializer):
    task = serializers.ChoiceField(
        choices=PRESET_TASKS,
        required=False,
        help_text="Which preset set to install; by default the project's task type's.",
    )


class VariantUpdateInputSerializer(serializers.Serializer):
    text = StrictCharField(required=False, max_length=INSTRUCTIONS_MAX_CHARS)
    granularity = serializers.ChoiceField(choices=Granularity.choices, required=False)
    examples = VariantExampleSerializer(many=True, required=False, max_length=MAX_EXAMPLES)
    active = StrictBooleanField(required=False)


def item_for_annotator(item, *, hide_gold: bool = False) -> dict:
    """An item as a worker or reviewer sees it: its text and tokens, never the reference
    rationales (documents come from `item.item_documents`, prefetch it). `hide_gold`
    leaves out the label and the answer, for annotators who give their own."""
    task = selectors.item_task_fields(item)
    return {
        "annotation_id": item.annotation_id_value,
        "query": item.query,
        "query_type": item.query_type,
        "label": None if hide_gold else item.label,
        "answer": None if hide_gold else task.answer,
        "options": task.options,
        "documents": [
            {
                "docid": link.document.docid,
                "role": role,
                "text": link.document.text,
                "tokens": link.document.tokens.tolist(),
                "sentences": link.document.sentences.tolist(),
            }
            for link, role in zip(item.item_documents.all(), task.roles, strict=True)
        ],
    }


_DATETIME = serializers.DateTimeField()


class AssignmentOutputSerializer(serializers.Serializer):
    """What the annotator's workspace needs: never other workers' data, never gold rationales."""

    id = serializers.IntegerField()
    status = serializers.CharField()
    round = serializers.IntegerField()
    lease_expires_at = serializers.DateTimeField()
    draft = serializers.JSONField(allow_null=True)
    project = serializers.SerializerMethodField()
    variant = serializers.SerializerMethodField()
    item = serializers.SerializerMethodField()

    def to_representation(self, assignment) -> dict:
        # The fields above describe the response, and the OpenAPI schema is read from
        # them; the response itself is built in one pass. "Next item" returns it to every
        # annotator for every item, and going through the fields instantiated and
        # deep-copied eight of them each time. A test keeps the two the same.
        return {
            "id": assignment.id,
            "status": str(assignment.status),
            "round": assignment.round,
            "lease_expires_at": _DATETIME.to_representation(assignment.lease_expires_at),
            "draft": assignment.draft,
            "project": self.get_project(assignment),
            "variant": self.get_variant(assignment),
            "item": self.get_item(assignment),
        }

    def get_project(self, assignment) -> dict:
        project = assignment.item.project
        text_names = project.text_names
        if project.task_type == TaskType.SENTENCE_PAIR and not text_names:
            text_names = list(DEFAULT_TEXT_NAMES)
        return {
            "id": project.id,
            "name": project.name,
            "labels": project.labels,
            "min_highlight": project.min_highlight,
            "task_type": project.task_type,
            "language": project.language,
            "text_names": text_names,
            "labels_from_annotators": project.labels_from_annotators,
            "question_rationales": project.question_rationales,
            "no_answer_label": NO_ANSWER_LABEL,
        }

    def get_variant(self, assignment) -> dict:
        """The instruction to follow; which variant it is (name, version, the highlight
        unit it steers toward) only for those allowed to know (`variant_hidden`)."""
        variant = assignment.variant
        shown = {
            "text": variant_display_text(
                variant.text, multi_set=assignment.item.project.multi_set_mode
            ),
            "examples": variant.examples,
        }
        if self.context.get("variant_hidden"):
            return shown
        return {
            "name": variant.name,
            "version": variant.version,
            "granularity": variant.granularity,
            **shown,
        }

    def get_item(self, assignment) -> dict:
        project = assignment.item.project
        shown = item_for_annotator(assignment.item, hide_gold=project.labels_from_annotators)
        if assignment.variant.suggestions:
            # Only under a variant that shows them: the others never see the key.
            shown["suggestions"] = item_suggestions(
                variant=assignment.variant, item=assignment.item
            )
        return shown


class SpanInputSerializer(serializers.Serializer):
    docid = StrictCharField(max_length=DOCID_MAX_LENGTH)
    start_token = StrictIntegerField(min_value=0)
    end_token = StrictIntegerField(min_value=1)


MAX_RATIONALE_SETS = 50
MAX_TIME_SPENT_MS = 7 * 24 * 3600 * 1000


@extend_schema_field(serializers.ListField(child=SpanInputSerializer(many=True)))
class RationaleSetsField(serializers.Field):
    """A list of rationale sets, each a list of spans as SpanInputSerializer describes.

    The same checks and error layout as ListField(child=SpanInputSerializer(many=True)),
    written out: that nesting deep-copied four serializer fields per request and ran a
    serializer per span, which a profile of the load bench put at 12% of the submit path's
    Python time. Keys other than the three are ignored, as a serializer ignores them; the
    submit service checks spans against the item's documents."""

    default_error_messages = {
        "not_a_list": "Expected a list of items but got type {input_type!r}.",
    }

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # As ListField does it; the OpenAPI schema reads maxItems from this validator.
        self.validators.append(
            MaxLengthValidator(
                MAX_RATIONALE_SETS,
                message=f"Ensure this field has no more than {MAX_RATIONALE_SETS} elements.",
            )
        )

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        sets, errors = [], {}
        for i, spans in enumerate(data):
            if not isinstance(spans, list):
                errors[i] = [
                    self.error_messages["not_a_list"].format(input_type=type(spans).__name__)
                ]
                continue
            cleaned, span_errors = [], []
            for span in spans:
                span_value, span_error = _span_cleaned(span)
                cleaned.append(span_value)
                span_errors.append(span_error)
            if any(span_errors):
                errors[i] = span_errors
            sets.append(cleaned)
        if errors:
            raise serializers.ValidationError(errors)
        return sets

    def to_representation(self, value):
        return value


def _span_cleaned(span) -> tuple[dict, dict]:
    """One span's docid, start_token and end_token, and its errors by field."""
    if not isinstance(span, dict):
        return {}, {
            "non_field_errors": [
                f"Invalid data. Expected a dictionary, but got {type(span).__name__}."
            ]
        }
    errors = {}
    docid = span.get("docid")
    if docid is None:
        errors["docid"] = ["This field is required."]
    elif not isinstance(docid, str) or not docid.strip():
        errors["docid"] = [
            "Not a valid string." if not isinstance(docid, str) else "This field may not be blank."
        ]
    elif problem := text_problem(docid.strip(), max_length=DOCID_MAX_LENGTH):
        errors["docid"] = [problem]
    bounds = {}
    for name, lowest in (("start_token", 0), ("end_token", 1)):
        value = span.get(name)
        if value is None:
            errors[name] = ["This field is required."]
        elif not isinstance(value, int) or isinstance(value, bool):
            errors[name] = ["A valid integer is required."]
        elif value < lowest:
            errors[name] = [f"Ensure this value is greater than or equal to {lowest}."]
        else:
            bounds[name] = value
    if errors:
        return {}, errors
    return {"docid": docid.strip(), **bounds}, {}


MAX_SUGGESTIONS_ACCEPTED = 1000


class AcceptedSuggestionSerializer(serializers.Serializer):
    docid = StrictCharField(max_length=DOCID_MAX_LENGTH)
    token = StrictIntegerField(min_value=0)


@extend_schema_field(serializers.ListField(child=AcceptedSuggestionSerializer()))
class SuggestionsAcceptedField(serializers.Field):
    """The model suggestions the annotator accepted, as {docid, token}: written out as
    RationaleSetsField is, so that no child field is shared between requests."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators.append(
            MaxLengthValidator(
                MAX_SUGGESTIONS_ACCEPTED,
                message=f"Ensure this field has no more than {MAX_SUGGESTIONS_ACCEPTED} elements.",
            )
        )

    def to_internal_value(self, data):
        if not isinstance(data, list):
            raise serializers.ValidationError(
                f"Expected a list of items but got type {type(data).__name__!r}."
            )
        cleaned, errors = [], {}
        for i, entry in enumerate(data):
            token = entry.get("token") if isinstance(entry, dict) else None
            docid = entry.get("docid") if isinstance(entry, dict) else None
            if (
                not isinstance(docid, str)
                or not _plain_text(docid)
                or len(docid) > DOCID_MAX_LENGTH
            ):
                errors[i] = {"docid": ["A docid of the item is required."]}
            elif not isinstance(token, int) or isinstance(token, bool) or token < 0:
                errors[i] = {"token": ["A token index (an integer from 0) is required."]}
            else:
                cleaned.append({"docid": docid, "token": token})
        if errors:
            raise serializers.ValidationError(errors)
        return cleaned

    def to_representation(self, value):
        return value


class SubmitInputSerializer(serializers.Serializer):
    client_uuid = StrictUUIDField()
    rationale_sets = RationaleSetsField()
    label = StrictCharField(
        max_length=LABEL_MAX_LENGTH, required=False, allow_null=True, default=None
    )
    time_spent_ms = StrictIntegerField(min_value=0, max_value=MAX_TIME_SPENT_MS, default=0)
    suggestions_accepted = SuggestionsAcceptedField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Under a variant that shows model suggestions: the suggested tokens the "
        "annotator accepted (each must be highlighted); refused elsewhere.",
    )

    def get_fields(self) -> dict:
        # Each field made anew from its declaration's arguments, where DRF deep-copies the
        # declared fields: every submit builds this serializer, and the deep copies took
        # 4 % of the Python time of a "next" + "submit" pair (sampled with py-spy). The
        # same fields result, as every argument above is an immutable value: no child
        # field or mutable default is shared between requests.
        return {
            name: type(field)(*field._args, **field._kwargs)
            for name, field in self._declared_fields.items()
        }


class _SpanBody(msgspec.Struct):
    docid: Annotated[str, msgspec.Meta(max_length=DOCID_MAX_LENGTH)]
    start_token: Annotated[int, msgspec.Meta(ge=0)]
    end_token: Annotated[int, msgspec.Meta(ge=1)]


class _AcceptedBody(msgspec.Struct):
    docid: Annotated[str, msgspec.Meta(max_length=DOCID_MAX_LENGTH)]
    token: Annotated[int, msgspec.Meta(ge=0)]


class _SubmitBody(msgspec.Struct):
    client_uuid: uuid.UUID
    rationale_sets: Annotated[list[list[_SpanBody]], msgspec.Meta(max_length=MAX_RATIONALE_SETS)]
    label: Annotated[str, msgspec.Meta(max_length=LABEL_MAX_LENGTH)] | None = None
    time_spent_ms: Annotated[int, msgspec.Meta(ge=0, le=MAX_TIME_SPENT_MS)] = 0
    suggestions_accepted: (
        Annotated[list[_AcceptedBody], msgspec.Meta(max_length=MAX_SUGGESTIONS_ACCEPTED)] | None
    ) = None


def _plain_text(value: str) -> bool:
    """A string CharField would keep as it is: not blank, nothing to trim, and none of the
    characters its validators refuse (NUL, lone surrogates)."""
    return (
        bool(value)
        and value == value.strip()
        and "\x00" not in value
        and not any("\ud800" <= c <= "\udfff" for c in value)
    )


def submit_input_validated(data) -> dict:
    """The submit body, validated as SubmitInputSerializer validates it.

    Every annotator's every submit comes here, and the serializer took 87 us per body
    (fields built and bound, each run through its validators), a few percent of the
    submit's CPU. A body of plain values (no string to trim, no number given as text) is
    checked by msgspec in about a microsecond and gives the same validated data; any
    other body, valid or not, goes through the serializer, which alone words the errors.
    A property-based test holds the two to the same answers."""
    try:
        body = msgspec.convert(data, _SubmitBody)
    except msgspec.ValidationError:
        body = None
    if (
        body is not None
        and (body.label is None or _plain_text(body.label))
        and all(_plain_text(span.docid) for spans in body.rationale_sets for span in spans)
        and all(_plain_text(a.docid) for a in body.suggestions_accepted or ())
    ):
        return {
            "client_uuid": body.client_uuid,
            "rationale_sets": [
                [
                    {"docid": s.docid, "start_token": s.start_token, "end_token": s.end_token}
                    for s in spans
                ]
                for spans in body.rationale_sets
            ],
            "label": body.label,
            "time_spent_ms": body.time_spent_ms,
            "suggestions_accepted": None
            if body.suggestions_accepted is None
            else [{"docid": a.docid, "token": a.token} for a in body.suggestions_accepted],
        }
    serializer = SubmitInputSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class SubmitOutputSerializer(serializers.Serializer):
    annotation_id = serializers.IntegerField(source="annotation.id")
    client_uuid = serializers.UUIDField(source="annotation.client_uuid")
    replayed = serializers.BooleanField()
    late = serializers.BooleanField()

    def to_representation(self, result) -> dict:
        # Built in one pass, as AssignmentOutputSerializer's is, for every submit.
        return {
            "annotation_id": result.annotation.id,
            "client_uuid": str(result.annotation.client_uuid),
            "replayed": result.replayed,
            "late": result.late,
        }


class DraftInputSerializer(serializers.Serializer):
    draft = serializers.JSONField(validators=[json_without_nul])
