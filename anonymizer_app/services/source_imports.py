"""Imports of a dataset from an outside source as jobs of their own (models.SourceImport) on a Celery worker,
so that no web request or API call waits for a connection or a long read: the request checks what needs no
connection (the form, the URL's parts and parameters, the allow-list: services/connections.py through
sql.check_web_url) and answers at once; the worker connects, reads in chunks (sql.stage_import) with the rows
read written to the row, and stores the dataset at the end (sql.store_import). A cancel is honoured at the
next chunk; a failure, a cancel, a time limit or a dead worker (sweep_stale_imports) leaves no dataset and no
file. A password given apart is kept vault-encrypted on the row only while the import waits or runs.

Repository imports (Zenodo, Dataverse) are the same rows: the request lists the record's files (one quick
metadata call, bounded by ANONYMIZER_REMOTE_TIMEOUT_SECONDS) and chooses the file; the worker downloads it
(services/remote.py: allow-listed hosts, the token only to its own server) with the bytes read of the declared
size written to the row each MiB, a cancel honoured at the next MiB, then stores it through the upload's
ingestion. A token typed for one import (no stored connection) is kept vault-encrypted only while it runs.

The time limits are the jobs' (services.jobs.time_limit) for the kinds "sql-import" and "repository-import":
the settings ANONYMIZER_JOB_TIME_LIMIT_SQL_IMPORT_SECONDS and ANONYMIZER_JOB_TIME_LIMIT_REPOSITORY_IMPORT_SECONDS,
else ANONYMIZER_JOB_TIME_LIMIT_SECONDS.

The reading itself is the source's (services/sources: each source's ``queued`` step, chosen by the row's
``source`` from the registry); this module runs it as a job: claiming, progress and cancel on the row, endings.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from ..engine import Cancelled, EngineError, InputError
from ..models import SourceImport, max_length
from . import job_support, remote, sources, sql, storage, vault

KIND = "sql-import"  # the name of the time-limit settings (services.jobs.time_limit)
REPOSITORY_KIND = "repository-import"
log = logging.getLogger(__name__)


def kind_of(imp: SourceImport) -> str:
    """The job kind whose time limits the import runs under."""
    return REPOSITORY_KIND if imp.is_repository else KIND


# ---- creation ---------------------------------------------------------------------------------------------
def create_sql(owner, url: str, table: str = "", query: str = "", name: str = "", keep_password: bool = False,
               password: str | None = None) -> SourceImport:
    """A queued import of ``table`` or ``query`` at ``url``, checked as for the web (sql.check_web_url: the
    URL's parts and parameters, the allow-list, the app's own database, SQLite) without connecting."""
    table, query = table.strip(), query.strip()
    if bool(table) == bool(query):
        raise InputError("name a table or give a query (one of the two)")
    target = sql.parse_url(url).with_password(password)
    sql.check_web_url(target)
    if query:
        sql.check_query(query)
    else:
        sql.split_name(table)
    public, limit = target.public_url(), max_length(SourceImport, "url")
    if len(public) > limit:
        raise InputError(f"the connection URL is {len(public):,} characters long (without its password), more than "
                         f"the limit of {limit:,}")
    secret = target.password
    return SourceImport.objects.create(
        owner=owner, source=SourceImport.SQL, url=public, table=table, query=query, name=name.strip(),
        keep_password=bool(keep_password), password=vault.encrypt_text(str(secret)) if secret else "",
        phase="waiting for a worker")


def create_repository(owner, service: str, chosen: remote.RemoteFile, record: str, account=None,
                      server: str = "", name: str = "", token: str | None = None) -> SourceImport:
    """A queued download of the file ``chosen`` (listed from the record ``record`` in the request) from
    ``service`` through the connection ``account`` (its token stays in the connection) or, without one, from
    ``server`` with ``token`` typed for this import (kept vault-encrypted until the import ends). Refused at
    once: a file that is not a table or is declared over the upload limit, a link or name too long to keep."""
    if service not in SourceImport.REPOSITORIES:
        raise InputError(f"unknown repository {service!r}: zenodo or dataverse")
    remote.check_importable(chosen)
    for value, field in ((chosen.url, "url"), (chosen.name, "table"), (record.strip(), "record")):
        limit = max_length(SourceImport, field)
        if len(value) > limit:
            raise InputError(f"{value[:60]!r}...: {len(value):,} characters, more than the limit of {limit:,}")
    server = account.base_url if account is not None else remote.normalize_base_url(server)
    secret = token.strip() if token and account is None else ""
    return SourceImport.objects.create(
        owner=owner, source=service, account=account, server=server, record=record.strip(), url=chosen.url,
        table=chosen.name, total=chosen.size, name=name.strip(),
        password=vault.encrypt_text(secret) if secret else "", phase="waiting for a worker")


def submit(imp: SourceImport) -> SourceImport:
    """Queue the import on the broker under its time limits; a broker that refuses it ends the import failed
    with the reason (it would wait forever)."""
    try:
        result = job_support.send_task("run_source_import_task", (str(imp.pk),), kind_of(imp))
    except Exception as exc:
        log.exception("could not queue import %s", imp.pk)
        _end(imp.pk, SourceImport.FAILED, f"could not queue the import: {exc}", statuses=(SourceImport.QUEUED,))
    else:
        SourceImport.objects.filter(pk=imp.pk, celery_id="").update(celery_id=result.id or "")
    imp.refresh_from_db()
    return imp


# ---- cancelling --------------------------------------------------------------------------------------------
def cancel(imp: SourceImport) -> bool:
    """Ask the import to stop; one still queued (or whose worker died) stops at once. True: it has stopped."""
    SourceImport.objects.filter(pk=imp.pk).exclude(status__in=SourceImport.FINISHED).update(cancel_requested=True)
    if _end(imp.pk, SourceImport.CANCELLED, "cancelled before it started", statuses=(SourceImport.QUEUED,)):
        return True
    stale = SourceImport.objects.filter(_stale(timezone.now()), pk=imp.pk).first()
    return stale is not None and _settle(stale, SourceImport.CANCELLED, "cancelled (its worker had stopped)")


# ---- running -----------------------------------------------------------------------------------------------
def _update(pk, **fields) -> None:
    SourceImport.objects.filter(pk=pk).update(**fields)


def run(imp: SourceImport) -> SourceImport:
    """Run a queued import to its end: succeeded with its dataset, failed with the reason, or cancelled; in
    every ending but success nothing is stored, and the password given apart is erased."""
    soft_limit = job_support.soft_time_limit_error()
    try:
        _run(imp, soft_limit)
    except soft_limit:  # raised outside the reading (claiming, settling): the same ending
        stop_for_time_limit(imp.pk)
    finally:
        _update(imp.pk, password="")
    imp.refresh_from_db()
    return imp


def _claim(imp: SourceImport) -> bool:
    now = timezone.now()
    if _end(imp.pk, SourceImport.CANCELLED, "cancelled before it started", statuses=(SourceImport.QUEUED,),
            cancel_requested=True):
        return False
    path = storage.staging_path()
    if imp.is_repository:  # the downloaded file, not a table, until the ingestion reads it
        path = path.with_suffix(".download")
        phase = f"connecting to {imp.get_source_display()} at {imp.server}"
    else:
        phase = f"connecting to {imp.url}"
    return bool(SourceImport.objects.filter(pk=imp.pk, status=SourceImport.QUEUED).update(
        status=SourceImport.RUNNING, started=now, heartbeat=now, phase=phase[:255],
        staging=path.relative_to(storage.media_root()).as_posix()))


def _run(imp: SourceImport, soft_limit: type[BaseException]) -> None:
    if not _claim(imp):
        return  # finished, cancelled, or another delivery runs it
    imp.refresh_from_db()
    try:
        with job_support.Heartbeat(imp):
            dataset = _read(imp)
    except Exception as exc:
        if job_support.from_time_limit(exc, soft_limit):
            stop_for_time_limit(imp.pk)
        elif isinstance(exc, Cancelled):
            _end(imp.pk, SourceImport.CANCELLED, "cancelled by the user; nothing was stored")
        elif isinstance(exc, (EngineError, vault.VaultError)):
            _end(imp.pk, SourceImport.FAILED, str(exc))
        else:  # it must end failed, whatever went wrong, with the reason shown
            _end(imp.pk, SourceImport.FAILED, f"internal error: {exc.__class__.__name__}: {exc}")
            raise
    else:
        done = SourceImport.objects.filter(pk=imp.pk, status=SourceImport.RUNNING).update(
            status=SourceImport.SUCCEEDED, dataset=dataset, finished=timezone.now(), staging="",
            phase=f"imported {dataset.n_rows:,} rows, {dataset.n_columns} columns"[:255], message="")
        if not done:  # deleted or settled meanwhile (its owner erased): the dataset would belong to no import
            log.info("import %s ended meanwhile; its dataset %s is kept", imp.pk, dataset.pk)


def _cancelled(pk) -> bool:
    flag = SourceImport.objects.filter(pk=pk).values_list("cancel_requested", flat=True).first()
    return flag is not False  # None: the import was deleted meanwhile


class _Steps:
    """What a source's reading step (services/sources: ``Source.queued``) writes to the import's row: its phase,
    how far it is (rows or bytes; a cancel looked for after each), where it stages what it reads."""

    def __init__(self, imp: SourceImport):
        self.imp = imp

    @property
    def staging(self) -> Path:
        path = storage.media_root() / self.imp.staging
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def phase(self, text: str) -> None:
        _update(self.imp.pk, phase=text[:255])

    def counted(self, done: int, total: int | None, phase: str) -> None:
        _update(self.imp.pk, rows=done, total=total, phase=phase[:255])

    def check_cancel(self) -> None:
        if _cancelled(self.imp.pk):
            raise Cancelled("cancelled by the user")


def _read(imp: SourceImport):
    """The import's source reads and stores it (the registry's reading step of ``imp.source``)."""
    source = sources.get_source(imp.source)
    if source.queued is None:
        raise InputError(f"{source.label} is not read on a worker")
    return source.queued(imp, _Steps(imp))


def _end(pk, status: str, message: str, statuses=(SourceImport.RUNNING,), **where) -> bool:
    """Move the import to a final state from one of ``statuses``; its staged file removed, its password
    erased."""
    found = SourceImport.objects.filter(pk=pk, status__in=statuses, **where).first()
    if found is None:
        return False
    _discard_staging(found)
    return bool(SourceImport.objects.filter(pk=pk, status__in=statuses, **where).update(
        status=status, message=message, finished=timezone.now(), password="", staging=""))


def _discard_staging(imp: SourceImport) -> None:
    """The staged table and the half-written file it is made from (ingestion.AtomicParquet's
    ``.<name>.<pid>.tmp``), which a dead worker leaves behind."""
    if not imp.staging:
        return
    path = storage.media_root() / imp.staging
    for leftover in (path, *path.parent.glob(f".{path.name}.*.tmp")):
        storage.discard(leftover)


# ---- time limits and dead workers --------------------------------------------------------------------------
def stop_for_time_limit(pk, hard: bool = False) -> bool:
    """Fail an import its time limit stopped (soft: the exception in the task; hard: the worker process
    killed), its staged file removed."""
    found = SourceImport.objects.filter(pk=pk).only("source").first()
    kind = kind_of(found) if found is not None else KIND
    soft, hard_seconds, _ = job_support.time_limit(kind)
    message = stop_message(hard_seconds if hard else soft, kind)
    states = (SourceImport.RUNNING, SourceImport.QUEUED) if hard else (SourceImport.RUNNING,)
    return _end(pk, SourceImport.FAILED, message, statuses=states)


def _stale(now) -> Q:
    stale = now - timedelta(seconds=settings.ANONYMIZER_JOB_STALE_SECONDS)
    return Q(status=SourceImport.RUNNING) & (Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, started__lt=stale))


def _settle(imp: SourceImport, status: str, message: str) -> bool:
    """Move a stale running import to a final state, only if nobody took it meanwhile."""
    _discard_staging(imp)
    return bool(SourceImport.objects.filter(pk=imp.pk, status=SourceImport.RUNNING, heartbeat=imp.heartbeat).update(
        status=status, message=message, finished=timezone.now(), password="", staging=""))


def sweep_stale_imports(now=None) -> list[str]:
    """Running imports whose heartbeat is stale (their worker died) end failed (or cancelled, when asked) with
    their staged file removed; not run again: the owner imports again. Returns their ids. Called by the jobs'
    sweep (services.jobs.sweep_stale_jobs)."""
    now = now or timezone.now()
    stopped = []
    for imp in SourceImport.objects.filter(_stale(now)):
        soft, _, _ = job_support.time_limit(kind_of(imp))
        if imp.cancel_requested:
            status, message = SourceImport.CANCELLED, "cancelled (its worker had stopped)"
        elif imp.started is not None and (now - imp.started).total_seconds() >= soft:
            status, message = SourceImport.FAILED, stop_message(soft, kind_of(imp))
        else:
            status, message = SourceImport.FAILED, ("the worker running it stopped (killed, out of memory or shut "
                                                    "down); nothing was stored: import again")
        if _settle(imp, status, message):
            stopped.append(str(imp.pk))
    return stopped


def stop_message(seconds: float, kind: str = KIND) -> str:
    return job_support.time_limit_message(kind, seconds).replace("its partial outputs were discarded", "nothing was stored")


# ---- what a client sees --------------------------------------------------------------------------------------
def fraction(imp: SourceImport) -> float:
    """The share read, when the table was counted (else 0 until it ends)."""
    if imp.status == SourceImport.SUCCEEDED:
        return 1.0
    return round(min(0.99, imp.rows / imp.total), 4) if imp.total else 0.0
