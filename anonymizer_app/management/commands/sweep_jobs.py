"""`manage.py sweep_jobs`: queue again (or fail, after the attempts) the running jobs whose worker died."""

from django.core.management.base import BaseCommand

from anonymizer_app.services.jobs import sweep_stale_jobs


class Command(BaseCommand):
    help = ("Find running jobs whose heartbeat is stale (their worker was killed, ran out of memory or was shut "
            "down) and queue them again, or fail them with the cause after ANONYMIZER_JOB_MAX_ATTEMPTS.")

    def handle(self, *args, **options):
        done = sweep_stale_jobs()
        scratch = done.pop("scratch_removed", [])
        for what, ids in done.items():
            for job_id in ids:
                self.stdout.write(f"{what}: {job_id}")
        self.stdout.write(f"{sum(len(v) for v in done.values())} stale job(s)")
        if scratch:  # folders of dead workers' jobs (ANONYMIZER_JOB_TMP)
            self.stdout.write(f"{len(scratch)} stale scratch folder(s) removed: {', '.join(scratch)}")
