"""Input fields that take a JSON body's values at their own JSON type only.

DRF's fields coerce: BooleanField takes 0, 1, "yes" and "off", CharField turns 0 into
"0", IntegerField and FloatField take numbers written as strings (FloatField takes true
as 1.0), UUIDField takes an integer. A client that sends `"active": 0` has a bug, and
the API says so with a 400 instead of storing its guess of what was meant. Form and
query-string data (a QueryDict: uploads, the pages' forms, filters) can carry nothing
but text, so there the fields parse the text as DRF does.

Every input serializer of the API builds on these (and ModelSerializer on
`StrictModelSerializer`'s mapping); the schemathesis run sends wrong types to every
operation to hold them to it.
"""

from __future__ import annotations

from django.db import models
from django.http import QueryDict
from rest_framework import serializers


def _from_text_only_source(field) -> bool:
    return isinstance(getattr(field.root, "initial_data", None), QueryDict)


class _JsonTyped:
    """Refuses, with the field's own "invalid" message, a JSON value of another type."""

    json_types: tuple[type, ...] = ()

    def to_internal_value(self, data):
        # bool is an int to Python, never a number to JSON.
        wrong = not isinstance(data, self.json_types) or (
            isinstance(data, bool) and bool not in self.json_types
        )
        if wrong and not _from_text_only_source(self):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(_JsonTyped, serializers.BooleanField):
    json_types = (bool,)


class StrictCharField(_JsonTyped, serializers.CharField):
    json_types = (str,)

    def get_value(self, dictionary):
        # DRF reads `?variant=` as "variant not given"; a query that names a field gives
        # it, and an empty text is then judged like any other (blank or not).
        if isinstance(dictionary, QueryDict) and self.field_name in dictionary:
            return dictionary[self.field_name]
        return super().get_value(dictionary)


class StrictSlugField(_JsonTyped, serializers.SlugField):
    json_types = (str,)


class StrictRegexField(_JsonTyped, serializers.RegexField):
    json_types = (str,)


# The largest integer a database column (bigint) holds: a larger id or count is refused
# with a 400 instead of failing in the database with a 500.
BIGINT_MAX = 2**63 - 1


class StrictIntegerField(_JsonTyped, serializers.IntegerField):
    # 3.0 is an integer to JSON Schema; DRF refuses 2.5 as it always did.
    json_types = (int, float)

    def __init__(self, **kwargs):
        kwargs.setdefault("max_value", BIGINT_MAX)
        super().__init__(**kwargs)


class StrictFloatField(_JsonTyped, serializers.FloatField):
    json_types = (int, float)


class StrictUUIDField(_JsonTyped, serializers.UUIDField):
    json_types = (str,)


class StrictModelSerializer(serializers.ModelSerializer):
    """A ModelSerializer whose generated fields are the strict ones."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.BooleanField: StrictBooleanField,
        models.CharField: StrictCharField,
        models.TextField: StrictCharField,
        models.SlugField: StrictSlugField,
        models.IntegerField: StrictIntegerField,
        models.BigIntegerField: StrictIntegerField,
        models.SmallIntegerField: StrictIntegerField,
        models.PositiveIntegerField: StrictIntegerField,
        models.PositiveSmallIntegerField: StrictIntegerField,
        models.PositiveBigIntegerField: StrictIntegerField,
        models.FloatField: StrictFloatField,
        models.UUIDField: StrictUUIDField,
    }


# DRF's own wordings, so that a text refused by the fast checks below reads as a
# CharField's refusal does.
NUL_REFUSED = "Null characters are not allowed."


def text_too_long(max_length: int) -> str:
    return f"Ensure this field has no more than {max_length} characters."


def text_problem(value: str, *, max_length: int) -> str | None:
    """Why a CharField(max_length=max_length) would refuse the string `value`, for the
    checks that do without a serializer field: NUL (PostgreSQL's text columns refuse it)
    or a length past the column's. None when neither."""
    if "\x00" in value:
        return NUL_REFUSED
    if len(value) > max_length:
        return text_too_long(max_length)
    return None


def json_without_nul(value) -> None:
    """A validator for JSON values stored in jsonb, which refuses NUL in any string or key
    (PostgreSQL's "unsupported Unicode escape sequence"): a 400 that names the field
    instead of a 500 when the row is written."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise serializers.ValidationError(NUL_REFUSED)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


class QueryParametersSerializer(serializers.Serializer):
    """The base of every serializer that reads a query string.

    DRF reads a parameter given with no value (`?status=`) as left out, as it reads an
    HTML form's empty field: a filter sent empty would silently filter nothing. A script
    that names a parameter meant something, so it is refused, naming the parameter, unless
    the field takes an empty text as a value of its own (`allow_blank`)."""

    def to_internal_value(self, data):
        empty = sorted(
            name
            for name, field in self.fields.items()
            if name in data and data.get(name) == "" and not getattr(field, "allow_blank", False)
        )
        if empty:
            raise serializers.ValidationError(
                {name: ["this parameter is empty: give a value or leave it out"] for name in empty}
            )
        return super().to_internal_value(data)
