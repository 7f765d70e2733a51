"""manage.py deposit: a finished run's published rows as a NEW DRAFT on Zenodo or Dataverse (never published).

    python manage.py deposit JOB_ID --to zenodo --creator "Doe, Jane" [--title T] [--description D] \\
        [--format csv|tsv|parquet|xlsx|jsonl|dta|sav] [--drop-suppressed] [--with-report] [--token-file F | --account NAME]
    python manage.py deposit JOB_ID --to dataverse --dataverse ALIAS --contact-email jane@example.org ...

The file holds the same bytes as the web download in that format; --with-report adds the release report
(HTML). The token: --account (a stored connection of the job's owner), --token-file, or $ZENODO_TOKEN /
$DATAVERSE_TOKEN. The draft's URL goes to stdout; a draft left half-made by a failure is deleted again.
Exit status 2 when anything fails."""

from __future__ import annotations

import uuid

from anonymizer_app.engine import EngineError
from anonymizer_app.management.base import OneLineCommand, UserError
from anonymizer_app.management.remote_flags import add_connection_flags, connection
from anonymizer_app.models import Job
from anonymizer_app.services import exports, remote
from anonymizer_app.services.release_report import standalone_html


class Command(OneLineCommand):
    prog = "deposit"
    help = "Deposit a finished run's published rows as a new draft on Zenodo or Dataverse."
    requires_system_checks = "__all__"

    def add_arguments(self, parser):
        parser.add_argument("job", metavar="JOB_ID", help="the run's id (its result page's URL holds it)")
        parser.add_argument("--to", required=True, choices=["zenodo", "dataverse"], dest="service")
        parser.add_argument("--title", default=None, help="default: '<dataset>, anonymized'")
        parser.add_argument("--description", default=None, help="default: the algorithm, k and record count")
        parser.add_argument("--creator", action="append", default=[], metavar="'FAMILY, GIVEN'",
                            help="a creator (repeat for several); at least one")
        parser.add_argument("--contact-email", default="", help="Dataverse: the dataset's contact (required)")
        parser.add_argument("--dataverse", default="", metavar="ALIAS", help="Dataverse: the collection's alias")
        parser.add_argument("--format", default="csv", choices=list(exports.EXPORT_FORMATS))
        parser.add_argument("--drop-suppressed", action="store_true", help="leave out suppressed records")
        parser.add_argument("--with-report", action="store_true", help="add the release report (HTML)")
        add_connection_flags(parser)

    def handle(self, *args, **opts):
        try:
            job = Job.objects.select_related("dataset", "owner").get(pk=uuid.UUID(opts["job"]))
        except (ValueError, Job.DoesNotExist):
            raise UserError(f"JOB_ID: no job {opts['job']!r}") from None
        service = opts["service"]
        if service == "dataverse" and not opts["dataverse"]:
            raise UserError("--dataverse ALIAS is required with --to dataverse")
        records = job.result.report.get("records", "") if hasattr(job, "result") else ""
        meta = remote.DepositMetadata(
            title=opts["title"] or f"{job.dataset.name}, anonymized",
            description=opts["description"] or f"{job.dataset.name} anonymized with {job.algorithm} (k={job.k}); "
                                               f"{records} records.",
            creators=opts["creator"], contact_email=opts["contact_email"])
        try:
            client = connection(service, opts, job.owner)
            remote.check_depositable(job)
            report = standalone_html(job, job.owner.get_username()) if opts["with_report"] else None
            files = remote.deposit_files(job, opts["format"], opts["drop_suppressed"], report)
            draft = remote.deposit(service, client, files, meta, opts["dataverse"])
        except EngineError as exc:
            raise UserError(str(exc)) from None
        self.stderr.write(f"draft {draft.identifier} on {client.label}: {', '.join(draft.files)} (not published)")
        self.stdout.write(draft.url)
