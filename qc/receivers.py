"""Signal receivers: thin, they hand the work to a task."""

import logging

logger = logging.getLogger(__name__)


def annotation_submitted_check(sender, annotation_id: int, **kwargs) -> None:
    from qc.tasks import annotation_quality_check_job

    try:
        annotation_quality_check_job.delay(annotation_id)
    except Exception:  # the broker is down: the submit stands, the check can be re-run
        logger.exception("could not queue the quality check of annotation %s", annotation_id)
