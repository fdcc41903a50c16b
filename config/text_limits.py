"""Limits of the free text people type (a project's description, instructions, comments),
held at every layer: the input serializers refuse longer text with a 400 naming the
field, the model field's validator in forms and the admin, and a database constraint
on char_length against any other writer. The figures are in docs/reference/limits.md.
"""

from __future__ import annotations

from django.core.validators import MaxLengthValidator
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual

PROJECT_DESCRIPTION_MAX_CHARS = 10_000
INSTRUCTIONS_MAX_CHARS = 20_000
COMMENT_MAX_CHARS = 5_000


def max_chars(limit: int) -> list:
    """The validators of a TextField that holds at most `limit` characters."""
    return [MaxLengthValidator(limit)]


def max_chars_constraint(field: str, limit: int, *, name: str) -> models.CheckConstraint:
    return models.CheckConstraint(condition=LessThanOrEqual(Length(field), limit), name=name)
