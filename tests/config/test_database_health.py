"""The PostgreSQL health check that asks the socket instead of sending SELECT 1."""

import select
import time
from unittest import mock

import psycopg2
import pytest
from django.db import connection
from django.db.backends.postgresql.base import DatabaseWrapper as DjangoWrapper

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _terminate_from_outside(pid: int) -> None:
    params = connection.get_connection_params()
    other = psycopg2.connect(**params)
    other.autocommit = True
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    other.close()


def test_an_idle_healthy_connection_passes_without_a_round_trip(postgres_only):
    connection.ensure_connection()

    with mock.patch.object(DjangoWrapper, "is_usable", side_effect=AssertionError("SELECT 1")):
        assert connection.is_usable()


def test_a_connection_the_server_ended_is_found_and_replaced(postgres_only, settings):
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    _terminate_from_outside(pid)
    deadline = time.monotonic() + 5
    while not select.select([connection.connection.fileno()], [], [], 0.1)[0]:
        assert time.monotonic() < deadline, "the server's goodbye never arrived"

    assert not connection.is_usable()

    # What Django does before a request's first query when health checks are on.
    connection.health_check_enabled, connection.health_check_done = True, False
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (new_pid,) = cursor.fetchone()
    assert new_pid != pid
