"""Sending a job's Celery tasks: by name, once its row is committed, and saying so when the
broker is away.

A service sends the task that calls it back, and the task module imports the service it
runs. Were the service to import the task module as well, the two would import each other;
so services name their tasks ("annotate.tasks.import_chunk") and only task modules import
services. The task is looked up in Celery's registry, where the task modules are loaded as
a worker loads them, so that it runs in-process when tasks are eager (tests, a setup with
no broker) exactly as a task imported by its module would.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from celery.canvas import Signature
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from config.celery import app

logger = logging.getLogger(__name__)


def task_signature(name: str, *args, **kwargs) -> Signature:
    """The task registered as `name`, called with `args` and `kwargs`: a signature to send
    or to put in a chord (immutable: a chord's callback takes no results)."""
    _task_modules_load()
    return app.tasks[name].si(*args, **kwargs)


@functools.cache
def _task_modules_load() -> None:
    """Every app's tasks module, found as a worker finds them (Celery's autodiscovery, at
    once: the loader's import of its default modules would also set Django up again, which
    configures logging anew and silenced a worker's task log)."""
    app.autodiscover_tasks(force=True)


def task_send_on_commit(
    name: str, *args, unsent: Callable[[], None], queue: str | None = None
) -> None:
    """Queue the task `name` with `args` when the current transaction commits (the worker
    then finds the row). When the broker cannot take it (Redis away), `unsent()` records on
    the job's row that it will never run, and the broker's error goes on up: the request
    answers 503 with Retry-After (config.middleware.BrokerUnavailableMiddleware), so the
    client starts the job again instead of waiting on one that nothing will run. `queue`
    sends it to that queue instead of the default one."""

    def send() -> None:
        try:
            signature = task_signature(name, *args)
            if queue:
                signature = signature.set(queue=queue)
            signature.delay()
        except BrokerUnavailable:
            logger.warning("could not queue %s%s: the broker is unavailable", name, args)
            unsent()
            raise

    transaction.on_commit(send)
