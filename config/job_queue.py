"""Queueing a job's task once its row is committed, and saying so when the broker is away."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

logger = logging.getLogger(__name__)


def task_send_on_commit(task, *args, unsent: Callable[[], None]) -> None:
    """Queue `task(*args)` when the current transaction commits (the worker then finds the
    row). When the broker cannot take it (Redis away), `unsent()` records on the job's row
    that it will never run, and the broker's error goes on up: the request answers 503
    with Retry-After (config.middleware.BrokerUnavailableMiddleware), so the client starts
    the job again instead of waiting on one that nothing will run."""

    def send() -> None:
        try:
            task.delay(*args)
        except BrokerUnavailable:
            logger.warning("could not queue %s%s: the broker is unavailable", task.name, args)
            unsent()
            raise

    transaction.on_commit(send)
