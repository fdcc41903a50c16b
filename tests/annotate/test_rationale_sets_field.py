"""The submit body's rationale sets: checked as the nested serializers did, more cheaply."""

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from annotate.serializers import SpanInputSerializer, SubmitInputSerializer
from tests.hypothesis_budget import examples


class _NestedSubmit(serializers.Serializer):
    """What RationaleSetsField replaced; kept here to compare against."""

    rationale_sets = serializers.ListField(child=SpanInputSerializer(many=True), max_length=50)


def _validated(data):
    serializer = SubmitInputSerializer(
        data={"client_uuid": "3f8b0f5e-3a53-4f43-9a53-2d7c1c1c6c1e", "rationale_sets": data}
    )
    return serializer.is_valid(), serializer


def test_valid_sets_come_back_as_plain_spans_without_unknown_keys():
    ok, serializer = _validated(
        [[{"docid": "d1", "start_token": 0, "end_token": 2, "text": "ignored"}], []]
    )

    assert ok, serializer.errors
    assert serializer.validated_data["rationale_sets"] == [
        [{"docid": "d1", "start_token": 0, "end_token": 2}],
        [],
    ]


@pytest.mark.parametrize(
    ("sets", "errors"),
    [
        ("spans", {"rationale_sets": ["Expected a list of items but got type 'str'."]}),
        (
            [
                [
                    {"docid": "d1", "start_token": 0, "end_token": 1},
                    {"docid": "d1", "start_token": -1},
                ]
            ],
            {
                "rationale_sets": {
                    0: [
                        {},
                        {
                            "start_token": ["Ensure this value is greater than or equal to 0."],
                            "end_token": ["This field is required."],
                        },
                    ]
                }
            },
        ),
        (
            [[], [{"docid": " ", "start_token": True, "end_token": 0}]],
            {
                "rationale_sets": {
                    1: [
                        {
                            "docid": ["This field may not be blank."],
                            "start_token": ["A valid integer is required."],
                            "end_token": ["Ensure this value is greater than or equal to 1."],
                        }
                    ]
                }
            },
        ),
        (
            [["d1"]],
            {
                "rationale_sets": {
                    0: [{"non_field_errors": ["Invalid data. Expected a dictionary, but got str."]}]
                }
            },
        ),
        ([[]] * 51, {"rationale_sets": ["Ensure this field has no more than 50 elements."]}),
    ],
)
def test_each_problem_is_named_by_set_span_and_field(sets, errors):
    ok, serializer = _validated(sets)

    assert not ok
    assert serializer.errors == errors


_json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from(["", " ", "d1", "3", "x y"])
)
_spans = st.one_of(
    _json_scalars,
    st.dictionaries(
        st.sampled_from(["docid", "start_token", "end_token", "other"]), _json_scalars, max_size=4
    ),
)


@settings(max_examples=examples(400), deadline=None)
@given(
    st.one_of(
        _json_scalars, st.lists(st.one_of(_json_scalars, st.lists(_spans, max_size=3)), max_size=3)
    )
)
def test_never_accepts_what_the_nested_serializers_refused(data):
    field_ok, serializer = _validated(data)
    nested = _NestedSubmit(data={"rationale_sets": data})
    nested_ok = nested.is_valid()

    if field_ok:
        assert nested_ok, nested.errors
        expected = [
            [dict(span) for span in spans] for spans in nested.validated_data["rationale_sets"]
        ]
        assert serializer.validated_data["rationale_sets"] == expected
    elif nested_ok:
        # Stricter only where the nested fields coerced: numbers as docids, digit strings
        # or booleans as token offsets.
        spans = [span for spans in data for span in spans]
        assert any(
            not isinstance(span.get("docid"), str)
            or any(
                not isinstance(span.get(k), int) or isinstance(span.get(k), bool)
                for k in ("start_token", "end_token")
            )
            for span in spans
        )


def test_the_openapi_schema_still_describes_sets_of_spans(db, client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    # COMPONENT_SPLIT_REQUEST names request bodies apart from responses: "...Request".
    submit = schema["components"]["schemas"]["SubmitInputRequest"]["properties"]["rationale_sets"]

    assert submit["type"] == "array" and submit["maxItems"] == 50
    assert submit["items"]["items"]["$ref"].endswith("/SpanInputRequest")


def test_submit_fields_are_built_afresh_like_the_deep_copies_drf_makes():
    first, second = SubmitInputSerializer(), SubmitInputSerializer()
    copied = serializers.Serializer.get_fields(SubmitInputSerializer())

    assert list(first.fields) == list(copied)
    for name, field in first.fields.items():
        assert field is not second.fields[name]  # nothing bound to one request is shared
        assert field.parent is first and second.fields[name].parent is second
        assert type(field) is type(copied[name])
        assert (field.required, field.allow_null, field.default) == (
            copied[name].required,
            copied[name].allow_null,
            copied[name].default,
        )
        assert [type(v) for v in field.validators] == [type(v) for v in copied[name].validators]
    # The copies check what the declarations say, e.g. the bounds on time_spent_ms.
    out_of_bounds = SubmitInputSerializer(
        data={
            "client_uuid": "3f8b0f5e-3a53-4f43-9a53-2d7c1c1c6c1e",
            "rationale_sets": [[]],
            "time_spent_ms": -1,
        }
    )
    assert not out_of_bounds.is_valid()
    assert out_of_bounds.errors == {
        "time_spent_ms": ["Ensure this value is greater than or equal to 0."]
    }
