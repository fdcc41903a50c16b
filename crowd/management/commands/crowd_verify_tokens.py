"""Check completion tokens against a study link: one token, or a platform's results CSV
(MTurk's batch results: WorkerId, AssignmentId and the Answer.completion_token column)."""

import csv

from django.core.management.base import BaseCommand, CommandError

from crowd.models import StudyLink
from crowd.selectors import completion_token_check

TOKEN_COLUMNS = ("Answer.completion_token", "completion_token", "token")


class Command(BaseCommand):
    help = "Check completion tokens a platform received against the site's secret key."

    def add_arguments(self, parser):
        parser.add_argument("link", type=int, help="the study link's id")
        parser.add_argument("--worker", help="the worker id on the platform")
        parser.add_argument("--assignment", default="", help="MTurk assignment / session id")
        parser.add_argument("--token", help="the completion token")
        parser.add_argument(
            "--csv", dest="csv_path", help="a results CSV with WorkerId, AssignmentId, a token"
        )

    def handle(self, *args, link: int, worker, assignment, token, csv_path, **options):
        study_link = StudyLink.objects.filter(pk=link).first()
        if study_link is None:
            raise CommandError(f"no study link {link}")
        if csv_path:
            rows = self._rows(csv_path)
        elif worker and token:
            rows = [(1, worker, assignment, token)]
        else:
            raise CommandError("give --worker and --token (and --assignment), or --csv FILE")
        invalid = 0
        for line, worker_id, assignment_id, given in rows:
            result = completion_token_check(
                link=study_link, worker_id=worker_id, assignment_id=assignment_id, token=given
            )
            session = result["session"]
            state = (
                f"valid ({session['status']}, {session['items_done']} items)"
                if result["valid"] and session
                else "valid"
                if result["valid"]
                else "INVALID"
            )
            invalid += not result["valid"]
            self.stdout.write(f"line {line}: {worker_id} {assignment_id or '-'}: {state}")
        summary = f"{len(rows) - invalid} valid, {invalid} invalid"
        if invalid:
            raise CommandError(summary)
        self.stdout.write(summary)

    def _rows(self, path: str) -> list[tuple[int, str, str, str]]:
        try:
            with open(path, newline="", encoding="utf-8-sig") as handle:
                reader = csv.DictReader(handle)
                fields = reader.fieldnames or []
                column = next((c for c in TOKEN_COLUMNS if c in fields), None)
                if "WorkerId" not in fields or column is None:
                    raise CommandError(
                        f"{path}: needs a WorkerId column and one of {', '.join(TOKEN_COLUMNS)}"
                    )
                return [
                    (reader.line_num, r["WorkerId"], r.get("AssignmentId") or "", r[column] or "")
                    for r in reader
                ]
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None
