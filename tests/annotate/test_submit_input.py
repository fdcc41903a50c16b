"""The submit body's fast check accepts exactly what SubmitInputSerializer accepts, with the
same validated data, and leaves every refusal (and its wording) to the serializer."""

import uuid
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError

from annotate.serializers import SubmitInputSerializer, submit_input_validated
from tests.hypothesis_budget import examples

TRICKY_TEXT = st.sampled_from(
    [
        *["d1", " d1", "d1 ", "", "   ", "d\x00", "d\ud800", "doc-7", "é", "1", "\t"],
        # The columns' length: at it, past it, and at it once trimmed.
        *["x" * 255, "é" * 256, " " + "x" * 255],
    ]
)
NUMBERS = st.one_of(
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([7 * 24 * 3600 * 1000, 7 * 24 * 3600 * 1000 + 1, 10**20]),
    st.booleans(),
    st.sampled_from([2.0, 2.5, -1.0, "2", "2.0", " 3", "x", None]),
)
UUIDS = st.one_of(
    st.uuids().map(str),
    st.uuids().map(lambda u: u.hex),
    st.uuids().map(lambda u: f"urn:uuid:{u}"),
    st.uuids().map(lambda u: f"{{{u}}}"),
    st.sampled_from(["not-a-uuid", "", 5, None, str(uuid.uuid4()).upper()]),
)


def _dict(**fields):
    return st.fixed_dictionaries(
        {}, optional={name: strategy for name, strategy in fields.items()}
    ) | st.fixed_dictionaries(fields)


SPANS = _dict(
    docid=st.one_of(TRICKY_TEXT, st.integers(), st.none()),
    start_token=NUMBERS,
    end_token=NUMBERS,
    text=st.text(max_size=3),
) | st.sampled_from(["span", 3, None, []])
SETS = st.one_of(
    st.lists(st.one_of(st.lists(SPANS, max_size=3), st.just("set")), max_size=3),
    st.lists(st.just([]), min_size=49, max_size=52),
    st.sampled_from(["sets", None, {}]),
)
ANY_BODY = _dict(
    client_uuid=UUIDS,
    rationale_sets=SETS,
    label=st.one_of(TRICKY_TEXT, st.none(), st.integers(), st.booleans()),
    time_spent_ms=NUMBERS,
    extra=st.integers(),
) | st.sampled_from([[], "body", None])

# Bodies a browser sends, each value now and then swapped for one of the odd ones above,
# so that both answers, and the border between them, are well sampled.
PLAIN_SPAN = st.fixed_dictionaries(
    {
        "docid": st.sampled_from(["d1", "d2"]),
        "start_token": st.integers(min_value=0, max_value=50),
        "end_token": st.integers(min_value=1, max_value=60),
    }
)


def _mostly(plain, odd):
    return st.one_of(plain, plain, plain, plain, plain, plain, odd)


PLAIN_BODY = st.fixed_dictionaries(
    {
        "client_uuid": st.uuids().map(str),
        "rationale_sets": st.lists(st.lists(PLAIN_SPAN, max_size=4), max_size=3),
        "label": st.sampled_from([None, "pos", "neg"]),
        "time_spent_ms": st.integers(min_value=0, max_value=10**6),
    }
)
# The model suggestions accepted, sent only under a variant that shows them.
PLAIN_ACCEPTED = st.fixed_dictionaries(
    {"docid": st.sampled_from(["d1", "d2"]), "token": st.integers(min_value=0, max_value=60)}
)
ODD_ACCEPTED = _dict(
    docid=st.one_of(TRICKY_TEXT, st.integers(), st.none()), token=NUMBERS
) | st.sampled_from(["token", 3, None, []])
NEAR_PLAIN_BODY = st.fixed_dictionaries(
    {
        "client_uuid": _mostly(st.uuids().map(str), UUIDS),
        "rationale_sets": _mostly(
            st.lists(st.lists(_mostly(PLAIN_SPAN, SPANS), max_size=4), max_size=3), SETS
        ),
        "label": _mostly(st.sampled_from([None, "pos", "neg"]), TRICKY_TEXT),
        "time_spent_ms": _mostly(st.integers(min_value=0, max_value=10**6), NUMBERS),
    },
    optional={
        "suggestions_accepted": _mostly(
            st.lists(_mostly(PLAIN_ACCEPTED, ODD_ACCEPTED), max_size=3),
            st.sampled_from([None, "all", {}, 5]),
        )
    },
)
BODIES = st.one_of(ANY_BODY, NEAR_PLAIN_BODY, NEAR_PLAIN_BODY)


def _serializer_answer(data):
    serializer = SubmitInputSerializer(data=data)
    if serializer.is_valid():
        return "valid", dict(serializer.validated_data)
    return "invalid", serializer.errors


def _fast_answer(data):
    try:
        return "valid", dict(submit_input_validated(data))
    except ValidationError as error:
        return "invalid", error.detail


@settings(max_examples=examples(600), deadline=None)
@given(BODIES)
def test_the_fast_check_answers_as_the_serializer_does(data):
    assert _fast_answer(data) == _serializer_answer(data)


@settings(max_examples=examples(200), deadline=None)
@given(PLAIN_BODY)
def test_plain_bodies_pass_the_fast_check_with_the_serializers_data(data):
    fast = _fast_answer(data)

    assert fast[0] == "valid" and fast == _serializer_answer(data)


def _plain_body(**changes):
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": "d1", "start_token": 0, "end_token": 2}]],
        "label": "pos",
        "time_spent_ms": 1500,
    }
    return {**body, **changes}


def test_a_plain_body_is_checked_without_the_serializer():
    with mock.patch.object(
        SubmitInputSerializer, "is_valid", side_effect=AssertionError("serializer ran")
    ):
        validated = submit_input_validated(_plain_body())

    assert validated["rationale_sets"] == [[{"docid": "d1", "start_token": 0, "end_token": 2}]]
    assert isinstance(validated["client_uuid"], uuid.UUID)


@pytest.mark.parametrize(
    "changes",
    [{"label": " pos"}, {"time_spent_ms": "1500"}, {"client_uuid": None}],
)
def test_anything_else_goes_through_the_serializer(changes):
    with (
        mock.patch.object(
            SubmitInputSerializer,
            "is_valid",
            wraps=None,
            side_effect=ValidationError("via serializer"),
        ),
        pytest.raises(ValidationError, match="via serializer"),
    ):
        submit_input_validated(_plain_body(**changes))
