"""Whether a job's chunks go to the Celery workers as a chord, or run one after the other in
the job's own process.

Every chunked job (exports, imports, explainer runs) asks the same question: there is more
than one chunk, the job kind's switch is on, tasks go to a broker rather than running
eagerly, and a result backend counts the chord's finished chunks before its callback
starts. Either way the job runs the same chunk and assembly functions, so its result does
not depend on the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError

logger = logging.getLogger(__name__)


def chunks_go_to_workers(chunks: int, *, enabled: bool, job: str) -> bool:
    from config.celery import app

    if chunks < 2 or not enabled or app.conf.task_always_eager:
        return False
    if not app.conf.result_backend:
        logger.warning("splitting a %s needs a Celery result backend; running it in one task", job)
        return False
    return True


def chunk_run_or_fail(
    task, run: Callable[[], str], fail: Callable[[str], None], *, what: str, outcome: str
) -> str:
    """Runs one chunk of a chord inside its bound Celery task.

    A database error is retried with backoff (1, 2, 4 s; the chunk is idempotent: it replaces
    its own part row). When the retries are spent, `fail` marks the job failed in words that
    name the chunk (`what`) and say what that means for the user (`outcome`), and the chunk
    answers "failed" so the chord's last step finds the job already ended.
    """
    try:
        return run()
    except DatabaseError as exc:
        if task.request.retries < task.max_retries:
            raise task.retry(exc=exc, countdown=2**task.request.retries) from exc
        fail(f"{what}: the database failed {task.max_retries + 1} times ({exc}); {outcome}")
        return "failed"
