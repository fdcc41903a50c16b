"""Signal receivers: thin, they hand the work to a service."""

import logging

logger = logging.getLogger(__name__)


def annotation_submitted_check(sender, annotation_id: int, **kwargs) -> None:
    """Without a broker there is no worker and no beat, so the committed submission is
    checked here. With one, the periodic sweep checks it and the submit publishes nothing."""
    from config.celery import app
    from qc.services import annotation_quality_check

    if not app.conf.task_always_eager:
        return
    try:
        annotation_quality_check(annotation_id=annotation_id)
    except Exception:  # the submit stands; `qc_check_missing` checks it later
        logger.exception("the quality check of annotation %s failed", annotation_id)
