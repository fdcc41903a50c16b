from django.conf import settings
from django.core.management.base import BaseCommand

from annotate.services.imports import import_uploads_expire


class Command(BaseCommand):
    help = (
        "Delete uploaded import files no longer kept: those of imports accepted more than "
        "IMPORT_UPLOAD_RETENTION_DAYS ago, and any a rejected import left. Celery beat runs "
        "this daily; run it by hand (or from cron) where beat does not run."
    )

    def handle(self, *args, **options):
        count = import_uploads_expire()
        self.stdout.write(
            f"{count} uploads deleted (accepted imports' files are kept "
            f"{settings.IMPORT_UPLOAD_RETENTION_DAYS} days)"
        )
