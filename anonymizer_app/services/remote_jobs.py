"""A run's published rows deposited on Zenodo or Dataverse as a job (Job.REPOSITORY_DEPOSIT) on a worker, so
that no web request or API call waits for the uploads: the request checks what needs no connection (the
form: the connection is the user's, the metadata, the format; the run has a table of published rows) and
answers at once with the job; the job renders the files, makes the draft and uploads them one by one with
the file being uploaded as its phase. A cancel is honoured before each file; a failure, a cancel or the time
limit (ANONYMIZER_JOB_TIME_LIMIT_REPOSITORY_DEPOSIT_SECONDS) deletes the half-made draft (services/zenodo.py,
dataverse.py). The draft is never published; its identifier and page are options["draft"] once made.

The job's options hold the source run, the connection's id (its token stays in the connection) and the
deposit form's fields; nothing secret.
"""

from __future__ import annotations

from ..engine import Cancelled, InputError
from ..models import Job, RemoteAccount
from . import job_support, release_report, remote

FIELDS = ("dataverse", "title", "description", "contact_email", "format", "drop_suppressed", "with_report")


def create_deposit(run: Job, form) -> Job:
    """A queued deposit job of ``run`` through the connection chosen in a valid DepositForm; refused at once
    (InputError) when the run has no published table or the metadata is incomplete. Nothing connects here."""
    remote.check_depositable(run)
    d = form.cleaned_data
    account = d["account"]
    meta = remote.DepositMetadata(d["title"], d["description"], form.creators_list(), d["contact_email"] or "")
    meta.check(account.service)
    options = {"source_job": str(run.pk), "account": account.pk, "creators": meta.creators,
               **{k: d[k] if d[k] is not None else "" for k in FIELDS}}
    return Job.objects.create(owner=run.owner, dataset=run.dataset, kind=Job.REPOSITORY_DEPOSIT,
                              algorithm="repository-deposit", k=run.k, options=options, config={},
                              phase="waiting for a worker")


def _cancelled(job: Job) -> bool:
    flag = Job.objects.filter(pk=job.pk).values_list("cancel_requested", flat=True).first()
    return flag is not False  # None: the job was deleted meanwhile


def run_deposit(job: Job) -> None:
    """The handler of Job.REPOSITORY_DEPOSIT: the files rendered (the published rows as the download's bytes,
    the release report when asked), a new draft made and the files uploaded; RemoteError fails the job with
    its message, and the draft goes again."""
    options = job.options or {}
    source_job, account_id = options.get("source_job"), options.get("account")
    run = Job.objects.select_related("dataset", "result").filter(pk=source_job, owner=job.owner).first() \
        if source_job else None
    if run is None:
        raise InputError("the run whose rows were to be deposited no longer exists")
    account = RemoteAccount.objects.filter(pk=account_id, owner=job.owner).first() if account_id else None
    if account is None:
        raise InputError("the connection chosen for the deposit was deleted; choose another")
    progress = job_support.Progress(job)
    progress(0.0, "preparing the files")
    owner = job.owner.get_username()
    report = release_report.standalone_html(run, owner) if options.get("with_report") else None
    files = remote.deposit_files(run, options.get("format") or "csv", bool(options.get("drop_suppressed")), report)
    client = remote.account_client(account)
    meta = remote.DepositMetadata(options.get("title", ""), options.get("description", ""),
                                  list(options.get("creators") or []), options.get("contact_email", ""))

    def before_file(name: str, i: int) -> None:
        if _cancelled(job):
            raise Cancelled("cancelled by the user")
        progress(min(0.99, (i + 1) / (len(files) + 1)),
                 f"uploading {name} ({i + 1} of {len(files)}) to {client.label}")

    if _cancelled(job):
        raise Cancelled("cancelled by the user")
    progress(0.05, f"making a new draft on {client.label}")
    draft = remote.deposit(account.service, client, files, meta, options.get("dataverse", ""), before_file)
    Job.objects.filter(pk=job.pk).update(
        options={**options, "draft": {"service": draft.service, "identifier": draft.identifier, "url": draft.url,
                                      "files": draft.files}},
        phase=f"made the draft {draft.identifier} on {client.label} (not published)"[:255])


job_support.register(Job.REPOSITORY_DEPOSIT, run_deposit)
