"""create_unless_taken: one INSERT, a refusal reported as None, and the caller's
transaction left usable."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from config.transactions import create_unless_taken


def test_it_creates_the_row(db):
    user = create_unless_taken(get_user_model(), username="ada")

    assert user is not None and get_user_model().objects.get(username="ada").pk == user.pk


def test_a_refused_row_is_none_and_the_enclosing_transaction_goes_on(db):
    get_user_model().objects.create(username="ada")

    with transaction.atomic():
        assert create_unless_taken(get_user_model(), username="ada") is None
        get_user_model().objects.create(username="grace")  # still usable

    assert set(get_user_model().objects.values_list("username", flat=True)) == {"ada", "grace"}


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_it_is_one_statement():
    with CaptureQueriesContext(connection) as queries:
        assert create_unless_taken(get_user_model(), username="ada") is not None
        assert create_unless_taken(get_user_model(), username="ada") is None

    assert len(queries) == 2, [q["sql"] for q in queries.captured_queries]
    assert get_user_model().objects.filter(username="ada").count() == 1
