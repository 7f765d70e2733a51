"""A run's published rows written to a database table as a job (Job.SQL_EXPORT) on a worker, so that the
API never holds a request for the length of an export: the request checks what can be checked without a
connection (the URL's parts and parameters, the allow-list, the table's name, that the run has a table of
published rows) and answers 202 with the job; the job connects (services/connections.py: the resolved
address, the handshake limit), writes (sql.write_table: all or nothing) and reports its progress as rows
written of the total.

The job's options hold the source run, the URL without its password, the table, replace and
drop_suppressed; a password typed apart is kept vault-encrypted in the options while the job waits and
removed when it ends, whatever the ending.
"""

from __future__ import annotations

from ..engine import Cancelled, InputError
from ..models import Job
from . import exports, job_support, sql, vault


def check_source(run: Job) -> None:
    """A finished run or synthetic set with a table of published rows (not a comparison, a set-valued result or
    a job without a result); a synthetic set's rows pass its publication check when they are read
    (exports.result_frame)."""
    if run.kind not in (Job.RUN, Job.SYNTHESIS) or run.status != Job.SUCCEEDED or run.dataset.is_transactions \
            or not hasattr(run, "result"):
        raise InputError("only a finished run's table of published rows can be written to a database")


def create_export(run: Job, url: str, table: str, replace: bool = False, drop_suppressed: bool = False,
                  password: str | None = None) -> Job:
    """A queued export job of ``run``'s published rows to the new table ``table`` at ``url`` (checked as for
    the web: sql.check_web_url). Nothing connects here."""
    check_source(run)
    target = sql.parse_url(url).with_password(password)
    sql.check_web_url(target)
    sql.check_table_name(table)
    options = {"source_job": str(run.pk), "url": target.public_url(), "table": table.strip(),
               "replace": bool(replace), "drop_suppressed": bool(drop_suppressed)}
    if target.password:
        options["password"] = vault.encrypt_text(str(target.password))
    return Job.objects.create(owner=run.owner, dataset=run.dataset, kind=Job.SQL_EXPORT, algorithm="sql-export",
                              k=run.k, options=options, config={}, phase="waiting for a worker")


def _forget_password(job: Job) -> None:
    options = dict(Job.objects.filter(pk=job.pk).values_list("options", flat=True).first() or {})
    if options.pop("password", None) is not None:
        Job.objects.filter(pk=job.pk).update(options=options)


def run_export(job: Job) -> None:
    """The handler of Job.SQL_EXPORT: the rows written with progress; SqlError fails the job with its
    message; the table appears only when every row is written (sql.write_table)."""
    options = job.options or {}
    try:
        source_job = options.get("source_job")
        run = Job.objects.select_related("dataset", "result").filter(
            pk=source_job, owner=job.owner).first() if source_job else None
        if run is None:
            raise InputError("the run whose rows were to be written no longer exists")
        check_source(run)
        try:
            password = vault.decrypt_text(options["password"]) if options.get("password") else None
        except vault.VaultError as exc:
            raise InputError(f"the password given for the export cannot be read: {exc}") from None
        frame = exports.result_frame(run.result, bool(options.get("drop_suppressed")))
        kinds = exports.column_kinds(frame, exports.job_column_types(run))
        total = max(1, len(frame))
        progress = job_support.Progress(job)
        where = f"the table {options['table']} at {options['url']}"
        progress(0.0, f"connecting to write {len(frame):,} rows to {where}")

        def wrote(rows: int) -> None:
            if not progress(min(0.99, rows / total), f"wrote {rows:,} of {len(frame):,} rows to {where}"):
                raise Cancelled("cancelled by the user")

        written = sql.write_table(frame, options["url"], options["table"], kinds, replace=bool(options.get("replace")),
                                  web=True, password=password, progress=wrote)
        Job.objects.filter(pk=job.pk).update(options={**{k: v for k, v in options.items() if k != "password"},
                                                      "rows": written},
                                             phase=f"wrote {written:,} rows to {where}")
    finally:
        _forget_password(job)


job_support.register(Job.SQL_EXPORT, run_export)
