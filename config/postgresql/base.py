"""Django's PostgreSQL backend, with a health check that costs no round trip.

Production keeps connections open between requests (CONN_MAX_AGE) and checks one before
a request first uses it (CONN_HEALTH_CHECKS), so that a connection the server dropped
(a restart, an outage, a terminated backend) is replaced instead of failing the request.
Django checks by sending `SELECT 1`: a round trip before every request's first query,
one in ten of the queries the annotators' hot path sends.

An idle connection has nothing to read. When the server ends a backend it sends an
error and closes the socket, and either makes the socket readable. So the check here
asks the socket: nothing to read means usable, without sending anything; anything to
read (the goodbye, or a rare asynchronous message) falls back to Django's own `SELECT 1`,
which reads it and decides. A peer that vanished without a word is found by the query
that follows, as it would be after `SELECT 1` too: the request gets a 503 and the
connection is replaced at the end of it.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        try:
            readable, _, _ = select.select([self.connection.fileno()], [], [], 0)
        except (OSError, ValueError):  # the socket is gone
            return False
        return not readable or super().is_usable()
