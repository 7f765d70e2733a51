"""Research repositories (Zenodo, Dataverse) as a source and a destination: the parts both clients share.

Safety: the web app must not become a way to reach arbitrary hosts (SSRF). Every URL requested, the links a
server's answers point to and every redirect, must be on a host of ANONYMIZER_REMOTE_HOSTS over https;
plain http only for the hosts of ANONYMIZER_REMOTE_HTTP_HOSTS (host:port, a local test server). Redirects
are followed by hand, each checked. Tokens travel in a header only (never in a URL, so never in a log), and
only to the origin (scheme, host, port) of the repository they were stored for: a redirect or a link to
another host, allow-listed or not, gets no token (Client.token_for). They are stored vault-encrypted
(RemoteAccount) and shown back as their last four characters.

Importing: the file is streamed to a temporary file under the upload's size cap, then goes through the same
ingestion as an upload (datasets.create_dataset: sniffing, limits, errors); nothing is stored on failure.
Depositing: a NEW draft only, never published; a draft left half-made by a failure is deleted again.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from ..engine.io import sas_bundle, statfiles
from ..models import Job
from . import datasets, dataverse, exports, zenodo
from .remote_client import (  # noqa: F401  (the shared part, re-exported: callers use remote.X)
    CHUNK_BYTES,
    DEFAULT_BASE_URLS,
    SERVICES,
    TABLE_EXTENSIONS,
    Client,
    DepositMetadata,
    Draft,
    RemoteError,
    RemoteFile,
    base_url_choices,
    check_url,
    normalize_base_url,
)
from .vault import VaultError


# ---- importing ----------------------------------------------------------------------------------------
def choose_file(files: list[RemoteFile], name: str | None, where: str) -> RemoteFile:
    """The file named ``name`` (or the one table file when no name is given)."""
    if not files:
        raise RemoteError(f"{where} has no files")
    if name:
        found = [f for f in files if f.name == name]
        if not found:
            raise RemoteError(f"{where} has no file {name!r}; its files: " + ", ".join(f.name for f in files[:20]))
        chosen = found[0]
    else:
        tables = [f for f in files if f.is_table]
        if len(tables) != 1:
            names = ", ".join(f.name for f in (tables or files)[:20])
            raise RemoteError(f"{where} has {len(tables)} table files; choose one: {names}" if tables else
                              f"{where} has no CSV, TSV or Excel file; its files: {names}")
        chosen = tables[0]
    if not chosen.is_table:
        raise RemoteError(f"{chosen.name}: not a table file this app reads (CSV, TSV, tab, txt, xlsx, Stata .dta, SPSS .sav or SAS .sas7bdat)")
    return chosen


def check_importable(remote: RemoteFile) -> None:
    """Refuse, before any download, a file that is not a table or whose declared size is over the upload
    limit."""
    if not remote.is_table:
        raise RemoteError(f"{remote.name}: not a table file this app reads (CSV, TSV, tab, txt, xlsx, Stata .dta, SPSS .sav or SAS .sas7bdat)")
    limit = settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024
    if remote.size is not None and remote.size > limit:
        raise RemoteError(f"{remote.name}: {remote.size / 1048576:.1f} MB, more than the limit of "
                          f"{settings.ANONYMIZER_MAX_UPLOAD_MB} MB")


def dataset_filename(remote: RemoteFile) -> str:
    filename = Path(remote.name).name
    if Path(filename).suffix.lower() == ".tab":  # Dataverse's ingested tabular files are tab-separated
        filename = Path(filename).stem + ".tsv"
    return filename


def download_file(client: Client, remote: RemoteFile, path: Path,
                  progress: Callable[[int], None] | None = None) -> int:
    """Download ``remote`` into ``path`` under the upload limit (checked first); returns the bytes written.
    The caller removes ``path`` whatever happens."""
    check_importable(remote)
    with open(path, "wb") as out:
        return client.download(remote.url, remote.name, out, settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024,
                               progress)


def store_download(owner, path: Path, remote: RemoteFile, name: str | None = None):
    """The downloaded file as a dataset of ``owner`` through the upload's ingestion (nothing kept on failure)."""
    return datasets.create_dataset(owner, path, dataset_filename(remote), name=name)


def import_file(owner, client: Client, remote: RemoteFile, name: str | None = None,
                progress: Callable[[int], None] | None = None, catalog: RemoteFile | None = None):
    """Download ``remote`` (with ``catalog``, a SAS file's format catalog: sas_catalog) and make it a dataset of
    ``owner`` in this process (the command line's way; the web and the API run services.source_imports jobs);
    nothing is kept when anything fails."""
    check_importable(remote)
    with tempfile.TemporaryDirectory(prefix="remote-import-") as folder:
        path = Path(folder) / f"download{Path(dataset_filename(remote)).suffix}"
        download_file(client, remote, path, progress)
        attach_catalog(client, catalog, path, remote.name)
        return store_download(owner, path, remote, name)


# ---- a SAS file's format catalog in the same record ------------------------------------------------------
def sas_catalog(files: list[RemoteFile], chosen: RemoteFile) -> RemoteFile | None:
    """The .sas7bcat format catalog (SAS's value labels) that goes with a .sas7bdat ``chosen``, from the files of
    its record: the one of the same name, else the record's only one; None for another file, or when the record
    has none (or several, none of the same name)."""
    if Path(chosen.name).suffix.lower() != sas_bundle.DATA_SUFFIX:
        return None
    catalogs = [f for f in files if Path(f.name).suffix.lower() == sas_bundle.CATALOG_SUFFIX]
    same = [f for f in catalogs if Path(f.name).stem.lower() == Path(chosen.name).stem.lower()]
    if len(same) == 1:
        return same[0]
    return catalogs[0] if len(catalogs) == 1 else None


def attach_catalog(client: Client, catalog: RemoteFile | None, path: Path, data_name: str) -> None:
    """Download ``catalog`` (under the upload limit; refused by name when it is not a readable catalog) and pack
    it with the SAS data downloaded at ``path`` into one bundle in its place (engine.io.sas_bundle), which the
    upload's ingestion reads with the labels. Nothing when ``catalog`` is None."""
    if catalog is None:
        return
    limit = settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024
    if catalog.size is not None and catalog.size > limit:
        raise RemoteError(f"{catalog.name}: {catalog.size / 1048576:.1f} MB, more than the limit of "
                          f"{settings.ANONYMIZER_MAX_UPLOAD_MB} MB")
    buffer = io.BytesIO()
    client.download(catalog.url, catalog.name, buffer, limit)
    statfiles.check_catalog(buffer.getvalue(), catalog.name)
    data = path.read_bytes()
    if statfiles.stat_kind(data[:64]) != "sas7bdat":
        return  # not a SAS file after all: read (and refused) as it is
    bundle = sas_bundle.pack(sas_bundle.SasPair(data, Path(data_name).name, buffer.getvalue(), catalog.name))
    if len(bundle) > limit:
        raise RemoteError(f"{data_name} with {catalog.name}: {len(bundle) / 1048576:.1f} MB together, more than "
                          f"the limit of {settings.ANONYMIZER_MAX_UPLOAD_MB} MB")
    path.write_bytes(bundle)


# ---- depositing ---------------------------------------------------------------------------------------
def check_depositable(job) -> None:
    """Refuse what has no published table: an unfinished job, a comparison, a set-valued result. A synthetic set
    is deposited once its publication check passes (exports.result_frame)."""
    if job.kind not in (Job.RUN, Job.SYNTHESIS) or job.status != Job.SUCCEEDED or not hasattr(job, "result"):
        raise RemoteError("only a finished run's published rows can be deposited")
    if job.dataset.is_transactions or job.result.report.get("kind") == "set-valued":
        raise RemoteError("a set-valued result cannot be deposited as a table")


def deposit_files(job, fmt: str = "csv", drop_suppressed: bool = False,
                  report_html: str | None = None) -> list[tuple[str, bytes]]:
    """The files a deposit holds: the published rows in ``fmt`` (exports.export_result: the same bytes as the
    download) and, when given, the release report as HTML."""
    check_depositable(job)
    spec = exports.EXPORT_FORMATS.get(fmt)
    if spec is None:
        raise RemoteError(f"unknown format {fmt!r}: one of " + ", ".join(exports.EXPORT_FORMATS))
    stem = f"{Path(job.dataset.original_name).stem}-{job.algorithm}-k{job.k}-anonymized"
    files = [(stem + spec.extension, exports.export_result(job.result, fmt, drop_suppressed))]
    if report_html is not None:
        files.append((f"{Path(job.dataset.original_name).stem}-release-report.html", report_html.encode("utf-8")))
    return files


def make_client(service: str, base_url: str, token: str | None) -> Client:
    """The client of ``service`` (zenodo or dataverse) for ``base_url`` with ``token`` (None: public only)."""
    if service == "zenodo":
        return zenodo.client(base_url, token)
    if service == "dataverse":
        return dataverse.client(base_url, token)
    raise RemoteError(f"unknown repository {service!r}: zenodo or dataverse")


def verify_token(service: str, client: Client) -> None:
    """One cheap authenticated call: a wrong token or an unreachable server raises RemoteError."""
    (zenodo if service == "zenodo" else dataverse).verify_token(client)


def list_files(service: str, client: Client, identifier: str) -> list[RemoteFile]:
    return (zenodo if service == "zenodo" else dataverse).list_files(client, identifier)


def account_client(account) -> Client:
    """The client of a stored connection (its token decrypted by the vault)."""
    try:
        token = account.token()
    except VaultError as exc:
        raise RemoteError(f"the token of {account.name!r} cannot be read: {exc}; store it again") from None
    return make_client(account.service, account.base_url, token)


def deposit(service: str, client: Client, files: list[tuple[str, bytes]], meta: DepositMetadata,
            dataverse_alias: str = "", before_file: Callable[[str, int], None] | None = None) -> Draft:
    meta.check(service)
    if service == "zenodo":
        return zenodo.deposit(client, files, meta, before_file)
    return dataverse.deposit(client, dataverse_alias, files, meta, before_file)
