"""Signals other apps listen to. `annotation_submitted` is sent after the submit's
transaction commits, once per stored annotation (never for a replayed retry)."""

from django.dispatch import Signal

annotation_submitted = Signal()  # kwargs: annotation_id
