"""Signal receivers: thin, they hand the work to a task."""

import logging

logger = logging.getLogger(__name__)


def annotation_submitted_check(sender, annotation_id: int, **kwargs) -> None:
    from qc.services.checks import quality_checks_request

    try:
        quality_checks_request(annotation_id=annotation_id)
    except Exception:  # the broker is down: the submit stands, the check can be re-run
        logger.exception("could not queue the quality check of annotation %s", annotation_id)
