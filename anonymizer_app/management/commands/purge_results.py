"""manage.py purge_results [--days N] [--dry-run]: delete the results older than the retention period."""

from __future__ import annotations

from django.conf import settings

from anonymizer_app.management.base import OneLineCommand, UserError
from anonymizer_app.services import erasure


def days_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UserError(f"--days must be a whole number of days, got {text!r}") from None
    if value < 1:
        raise UserError(f"--days must be at least 1, got {value}")
    return value


class Command(OneLineCommand):
    prog = "purge_results"  # bad arguments: one line `purge_results: error: ...`, exit status 2
    help = ("Delete the finished jobs of every kind (runs, comparisons, experiments) that ended more than "
            "ANONYMIZER_RESULT_RETENTION_DAYS days ago (or --days), with their results and files. Workers do it "
            "once an hour by themselves; run it from cron where no worker runs.")

    def add_arguments(self, parser):
        parser.add_argument("--days", type=days_arg, default=None,
                            help="retention in days (default: ANONYMIZER_RESULT_RETENTION_DAYS)")
        parser.add_argument("--dry-run", action="store_true", help="only print what would be removed")

    def handle(self, *args, days, dry_run, **options):
        if days is None and not settings.ANONYMIZER_RESULT_RETENTION_DAYS:
            raise UserError("retention is off (ANONYMIZER_RESULT_RETENTION_DAYS is 0): set it, or pass --days N")
        done = erasure.purge_expired_results(days, dry_run=dry_run)
        self.stdout.write(f"{'Would purge' if dry_run else 'Purged'} {done.what}: {done.summary()}")
        for name in done.files:
            self.stdout.write(f"  {'would remove' if dry_run else 'removed'} {name}")
