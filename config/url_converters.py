"""The path converter for database ids in the project's URLs.

Django's `int` converter takes any run of digits, and an id past what a bigint column holds
(2**63 and above) then failed in the database, a 500 wherever it reached a query or a
prepared statement. `<id:...>` matches only the ids a row can have (1 to 2**63 - 1), so any
other number is an address that names nothing: a 404, before any view runs.
"""

from __future__ import annotations

from django.urls import register_converter

from config.api_fields import BIGINT_MAX


class DatabaseIdConverter:
    # At most 19 digits (2**63 - 1 has 19); the range is checked in to_python.
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 1 <= number <= BIGINT_MAX:
            # A ValueError tells the resolver this pattern does not match.
            raise ValueError(f"{value} is not a database id")
        return number

    def to_url(self, value) -> str:
        return str(int(value))


register_converter(DatabaseIdConverter, "id")
