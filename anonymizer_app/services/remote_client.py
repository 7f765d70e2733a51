"""Research repositories (Zenodo, Dataverse): what both clients (zenodo.py, dataverse.py) and the service
that chooses between them (remote.py) share: the allow-listed, token-safe HTTP client, the files and drafts
it describes, a deposit's metadata and RemoteError. See remote.py for the safety rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests
from django.conf import settings
from urllib3.exceptions import ReadTimeoutError

from ..engine import InputError

SERVICES = {"zenodo": "Zenodo", "dataverse": "Dataverse"}
DEFAULT_BASE_URLS = {"zenodo": "https://zenodo.org", "dataverse": "https://demo.dataverse.org"}
TABLE_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt", ".xlsx", ".dta", ".sav", ".zsav", ".sas7bdat")
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
