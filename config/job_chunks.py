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

logger = logging.getLogger(__name__)


def chunks_go_to_workers(chunks: int, *, enabled: bool, job: str) -> bool:
    from config.celery import app

    if chunks < 2 or not enabled or app.conf.task_always_eager:
        return False
    if not app.conf.result_backend:
        logger.warning("splitting a %s needs a Celery result backend; running it in one task", job)
        return False
    return True
