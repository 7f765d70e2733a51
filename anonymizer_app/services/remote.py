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

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests
from django.conf import settings

from ..engine import InputError

SERVICES = {"zenodo": "Zenodo", "dataverse": "Dataverse"}
DEFAULT_BASE_URLS = {"zenodo": "https://zenodo.org", "dataverse": "https://demo.dataverse.org"}
TABLE_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt", ".xlsx")
MAX_REDIRECTS = 3
CHUNK_BYTES = 1 << 16


class RemoteError(InputError):
    """A repository cannot be used as asked (the message names the server and what went wrong)."""


@dataclass(frozen=True)
class RemoteFile:
    """A file of a record or dataset: its name, size (bytes; None when not said), and where to fetch it."""

    name: str
    size: int | None
    url: str
    file_id: str = ""

    @property
    def is_table(self) -> bool:
        return Path(self.name).suffix.lower() in TABLE_EXTENSIONS


@dataclass(frozen=True)
class Draft:
    """A draft deposit made on a repository: its identifier and the page where its owner reviews it."""

    service: str
    identifier: str
    url: str
    files: list[str] = field(default_factory=list)


# ---- base URLs and the allow-list --------------------------------------------------------------------
def _allowed_hosts() -> list[str]:
    return [h.strip().lower() for h in getattr(settings, "ANONYMIZER_REMOTE_HOSTS", []) if h.strip()]


def _http_hosts() -> list[str]:
    return [h.strip().lower() for h in getattr(settings, "ANONYMIZER_REMOTE_HTTP_HOSTS", []) if h.strip()]


def check_url(url: str) -> str:
    """``url`` when its host is allow-listed and the scheme fits (https; http only for a test host)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise RemoteError(f"{url[:200]!r} is not a URL") from None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise RemoteError(f"{url[:200]!r} is not an http(s) URL")
    if parts.username or parts.password:
        raise RemoteError("a repository URL may not hold a user name or password; store the token instead")
    netloc = f"{host}:{port}" if port else host
    if parts.scheme == "http":
        if netloc not in _http_hosts():
            raise RemoteError(f"{netloc}: https is required")
    elif host not in _allowed_hosts() and netloc not in _allowed_hosts():
        allowed = ", ".join(_allowed_hosts()) or "none"
        raise RemoteError(f"{host} is not one of the repositories this server may reach ({allowed}); "
                          "the administrator may add it to ANONYMIZER_REMOTE_HOSTS")
    return url.strip()


def normalize_base_url(url: str) -> str:
    """The repository's root URL (scheme, host, port and path, no trailing slash), checked."""
    url = check_url(url)
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise RemoteError("the repository URL is its root, e.g. https://zenodo.org (no ? or #)")
    return f"{parts.scheme}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def base_url_choices() -> list[str]:
    """The https roots of the allow-listed hosts, and the plain-http test hosts."""
    return [f"https://{h}" for h in _allowed_hosts()] + [f"http://{h}" for h in _http_hosts()]


# ---- HTTP -----------------------------------------------------------------------------------------------
class Client:
    """Requests to one repository: its base URL checked, a token in the service's header, a timeout, every
    URL and redirect checked against the allow-list, answers turned into RemoteError messages."""

    def __init__(self, service: str, base_url: str, token: str | None = None, token_header: str = "Authorization",
                 token_prefix: str = "Bearer ", timeout: float | None = None):
        self.service = service
        self.base_url = normalize_base_url(base_url)
        self.host = urlsplit(self.base_url).netloc
        self.timeout = float(timeout if timeout is not None else getattr(settings, "ANONYMIZER_REMOTE_TIMEOUT_SECONDS", 30))
        self.session = requests.Session()
        self.session.trust_env = False  # no proxy or .netrc credentials from the environment
        self.session.headers["User-Agent"] = "anonymizer (data anonymization web app)"
        self.has_token = bool(token)
        # never a session header: added per request, to the repository's own origin only (token_for)
        self._token = {token_header: f"{token_prefix}{token}"} if token else {}
        self.origin = _origin(self.base_url)

    def token_for(self, url: str) -> dict[str, str]:
        """The token's header when ``url`` is on the origin (scheme, host, port) the token was stored for;
        nothing for any other host, a redirect's or a link's in an answer, even an allow-listed one."""
        return dict(self._token) if _origin(url) == self.origin else {}

    @property
    def label(self) -> str:
        return f"{SERVICES.get(self.service, self.service)} at {self.host}"

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else self.base_url + path

    def request(self, method: str, path: str, what: str, expect: tuple[int, ...] = (200,),
                stream: bool = False, **kwargs) -> requests.Response:
        """One request, redirects followed by hand (each checked); errors as RemoteError about ``what``."""
        url = check_url(self.url(path))
        extra = kwargs.pop("headers", None) or {}
        for _ in range(MAX_REDIRECTS + 1):
            try:
                response = self.session.request(method, url, timeout=self.timeout, allow_redirects=False,
                                                stream=stream, headers={**extra, **self.token_for(url)}, **kwargs)
            except requests.Timeout:
                raise RemoteError(f"{self.label} did not answer within {self.timeout:g} s ({what})") from None
            except requests.ConnectionError:
                raise RemoteError(f"cannot reach {self.label}: the server is unreachable or refused the "
                                  f"connection ({what})") from None
            except requests.RequestException as exc:
                raise RemoteError(f"{self.label}: the request failed ({what}): {type(exc).__name__}") from None
            if response.status_code in (301, 302, 303, 307, 308) and response.headers.get("Location"):
                response.close()
                url = check_url(urljoin(url, response.headers["Location"]))
                if response.status_code == 303:
                    method = "GET"
                continue
            break
        else:
            raise RemoteError(f"{self.label}: too many redirects ({what})")
        if response.status_code not in expect:
            raise self.error(response, what)
        return response

    def error(self, response: requests.Response, what: str) -> RemoteError:
        status = response.status_code
        detail = _message(response)
        if status in (401, 403):
            if self.has_token:
                return RemoteError(f"{self.label} refused the token ({status}{': ' + detail if detail else ''}); "
                                   f"check the token and its scopes ({what})")
            return RemoteError(f"{self.label} needs a token for this ({status}); add a connection with your "
                               f"API token ({what})")
        if status == 404:
            return RemoteError(f"{self.label}: {what} was not found (404)")
        return RemoteError(f"{self.label} answered {status} to {what}{': ' + detail if detail else ''}")

    def json(self, method: str, path: str, what: str, expect: tuple[int, ...] = (200,), **kwargs) -> dict:
        response = self.request(method, path, what, expect=expect, **kwargs)
        try:
            data = response.json()
        except ValueError:
            raise RemoteError(f"{self.label} answered {what} with something that is not JSON") from None
        if not isinstance(data, dict):
            raise RemoteError(f"{self.label} answered {what} with unexpected JSON")
        return data

    def download(self, url: str, name: str, out, limit: int,
                 progress: Callable[[int], None] | None = None) -> int:
        """Stream ``url`` into the binary file ``out``, at most ``limit`` bytes; returns the bytes written."""
        response = self.request("GET", url, f"the file {name!r}", stream=True)
        with response:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > limit:
                raise RemoteError(f"{name}: {int(declared) / 1048576:.1f} MB, more than the limit of "
                                  f"{limit / 1048576:.0f} MB")
            written = 0
            try:
                for chunk in response.iter_content(CHUNK_BYTES):
                    written += len(chunk)
                    if written > limit:
                        raise RemoteError(f"{name}: more than the limit of {limit / 1048576:.0f} MB")
                    out.write(chunk)
                    if progress is not None:
                        progress(written)
            except requests.RequestException as exc:
                if _timed_out(exc):  # a server that stalls mid-body: the read timeout, not a job's time limit
                    raise RemoteError(f"{self.label} sent nothing more of {name!r} for {self.timeout:g} s "
                                      f"(after {written:,} bytes): the download was stopped") from None
                raise RemoteError(f"{self.label}: the download of {name!r} broke off") from None
        return written


def _timed_out(exc: requests.RequestException) -> bool:
    """Whether a failed read was the read timeout (requests wraps urllib3's ReadTimeoutError in a
    ConnectionError while streaming a body)."""
    from urllib3.exceptions import ReadTimeoutError

    return isinstance(exc, requests.Timeout) or any(isinstance(a, ReadTimeoutError) for a in exc.args)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"https": 443, "http": 80}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _message(response: requests.Response) -> str:
    """The server's own error message, short (JSON "message", else the start of the text)."""
    try:
        data = response.json()
    except ValueError:
        text = response.text.strip() if response.text else ""
        return text[:200] if text and not text.lstrip().startswith("<") else ""
    if isinstance(data, dict):
        return str(data.get("message") or data.get("error") or "")[:300]
    return ""


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
        raise RemoteError(f"{chosen.name}: not a table file this app reads (CSV, TSV, tab, txt or xlsx)")
    return chosen


def check_importable(remote: RemoteFile) -> None:
    """Refuse, before any download, a file that is not a table or whose declared size is over the upload
    limit."""
    if not remote.is_table:
        raise RemoteError(f"{remote.name}: not a table file this app reads (CSV, TSV, tab, txt or xlsx)")
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
    from . import datasets

    return datasets.create_dataset(owner, path, dataset_filename(remote), name=name)


def import_file(owner, client: Client, remote: RemoteFile, name: str | None = None,
                progress: Callable[[int], None] | None = None):
    """Download ``remote`` and make it a dataset of ``owner`` in this process (the command line's way; the web
    and the API run services.source_imports jobs); nothing is kept when anything fails."""
    check_importable(remote)
    with tempfile.TemporaryDirectory(prefix="remote-import-") as folder:
        path = Path(folder) / f"download{Path(dataset_filename(remote)).suffix}"
        download_file(client, remote, path, progress)
        return store_download(owner, path, remote, name)


# ---- depositing ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DepositMetadata:
    """What a draft is described by: title, description, creators ("Family, Given"), a contact e-mail
    (Dataverse requires one)."""

    title: str
    description: str
    creators: list[str]
    contact_email: str = ""

    def check(self, service: str) -> None:
        if not self.title.strip():
            raise RemoteError("the deposit needs a title")
        if not self.description.strip():
            raise RemoteError("the deposit needs a description")
        if not [c for c in self.creators if c.strip()]:
            raise RemoteError("the deposit needs at least one creator (Family, Given)")
        if service == "dataverse" and "@" not in self.contact_email:
            raise RemoteError("a Dataverse dataset needs a contact e-mail address")


def check_depositable(job) -> None:
    """Refuse what has no published table: an unfinished job, a comparison, a set-valued result."""
    from ..models import Job

    if job.kind != Job.RUN or job.status != Job.SUCCEEDED or not hasattr(job, "result"):
        raise RemoteError("only a finished run's published rows can be deposited")
    if job.dataset.is_transactions or job.result.report.get("kind") == "set-valued":
        raise RemoteError("a set-valued result cannot be deposited as a table")


def deposit_files(job, fmt: str = "csv", drop_suppressed: bool = False,
                  report_html: str | None = None) -> list[tuple[str, bytes]]:
    """The files a deposit holds: the published rows in ``fmt`` (exports.export_result: the same bytes as the
    download) and, when given, the release report as HTML."""
    from . import exports

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
        from .zenodo import client
    elif service == "dataverse":
        from .dataverse import client
    else:
        raise RemoteError(f"unknown repository {service!r}: zenodo or dataverse")
    return client(base_url, token)


def verify_token(service: str, client: Client) -> None:
    """One cheap authenticated call: a wrong token or an unreachable server raises RemoteError."""
    from . import dataverse, zenodo

    (zenodo if service == "zenodo" else dataverse).verify_token(client)


def list_files(service: str, client: Client, identifier: str) -> list[RemoteFile]:
    from . import dataverse, zenodo

    return (zenodo if service == "zenodo" else dataverse).list_files(client, identifier)


def account_client(account) -> Client:
    """The client of a stored connection (its token decrypted by the vault)."""
    from .vault import VaultError

    try:
        token = account.token()
    except VaultError as exc:
        raise RemoteError(f"the token of {account.name!r} cannot be read: {exc}; store it again") from None
    return make_client(account.service, account.base_url, token)


def deposit(service: str, client: Client, files: list[tuple[str, bytes]], meta: DepositMetadata,
            dataverse_alias: str = "", before_file: Callable[[str, int], None] | None = None) -> Draft:
    from . import dataverse, zenodo

    meta.check(service)
    if service == "zenodo":
        return zenodo.deposit(client, files, meta, before_file)
    return dataverse.deposit(client, dataverse_alias, files, meta, before_file)
