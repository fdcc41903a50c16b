from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from config.embedded_worker import serve_with_worker


class Command(BaseCommand):
    help = (
        "Serve the site with the dev server and run background jobs in a Celery worker (with "
        "beat) on an embedded filesystem broker: what `make run` starts. Ctrl-C stops both."
    )

    def add_arguments(self, parser):
        parser.add_argument("address", nargs="?", default="127.0.0.1:8000")
        parser.add_argument(
            "--run-dir",
            type=Path,
            default=None,
            help="Folder of the broker's messages, results and cache (default: .run/celery).",
        )
        parser.add_argument("--concurrency", type=int, default=2, help="Worker processes.")
        parser.add_argument("--noreload", action="store_true", help="No code reloading.")

    def handle(self, *args, address, run_dir, concurrency, noreload, **options):
        code = serve_with_worker(
            address=address,
            run_dir=run_dir or Path(settings.CELERY_EMBEDDED_DIR),
            manage=Path(settings.BASE_DIR) / "manage.py",
            concurrency=concurrency,
            reload=not noreload,
            out=self.stdout,
        )
        if code:
            raise SystemExit(code)
