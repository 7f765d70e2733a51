"""Zenodo's REST API (https://developers.zenodo.org): a record's files (GET /api/records/{id}) to import one,
and a new draft deposition (POST /api/deposit/depositions with the metadata, each file PUT into the
deposition's bucket, links.bucket) to deposit a result; never published (no actions/publish call).

The token goes as ``Authorization: Bearer <token>``. A record is named by its id, its DOI
(10.5281/zenodo.N, also as https://doi.org/...) or its page (https://zenodo.org/records/N)."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote, urlsplit

from .remote_client import Client, DepositMetadata, Draft, RemoteError, RemoteFile, check_url

DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)?10\.\d{4,9}/zenodo\.(\d+)$", re.I)
PAGE = re.compile(r"^https?://[^/]+/(?:records?|deposit|uploads)/(\d+)/?(?:[?#].*)?$", re.I)


def client(base_url: str, token: str | None) -> Client:
    return Client("zenodo", base_url, token, token_header="Authorization", token_prefix="Bearer ")


def record_id(identifier: str) -> str:
    """The record id of ``identifier`` (a number, a Zenodo DOI or a record page)."""
    text = identifier.strip()
    if text.isdigit():
        return text
    for pattern in (DOI, PAGE):
        match = pattern.match(text)
        if match:
            return match.group(1)
    raise RemoteError(f"{identifier[:200]!r} is not a Zenodo record: give its number, its DOI "
                      "(10.5281/zenodo.123) or its page (https://zenodo.org/records/123)")


def _file(entry: dict, base: str, rid: str) -> RemoteFile | None:
    name = entry.get("key") or entry.get("filename")
    if not isinstance(name, str) or not name:
        return None
    links = entry.get("links") or {}
    # the records API links a file's content as links.self (legacy: .../api/files/<bucket>/<key>) or links.content
    # a deposition's file: links.download (links.self is its metadata)
    url = links.get("content") or links.get("download") or links.get("self") or \
        f"{base}/api/records/{rid}/files/{quote(name, safe='')}/content"
    path = urlsplit(url).path.rstrip("/")
    if "/api/records/" in path and "/files/" in path and not path.endswith("/content"):
        url = url.rstrip("/") + "/content"  # the file's metadata link: its bytes are under /content
    size = entry.get("size", entry.get("filesize"))
    return RemoteFile(name=name, size=int(size) if isinstance(size, (int, float)) else None, url=url,
                      file_id=str(entry.get("id", "")))


def list_files(c: Client, identifier: str) -> list[RemoteFile]:
    """The files of the record ``identifier``."""
    rid = record_id(identifier)
    try:
        data = c.json("GET", f"/api/records/{rid}", f"the record {rid}")
    except RemoteError:
        if not c.has_token:
            raise
        # not a published record: perhaps the token owner's draft deposition (GET /api/deposit/depositions/{id})
        try:
            data = c.json("GET", f"/api/deposit/depositions/{rid}", f"the record or draft {rid}")
        except RemoteError as exc:
            if "(404)" not in str(exc):
                raise
            raise RemoteError(f"{c.label}: the record {rid} was not found (404), nor a draft of yours") from None
    entries = data.get("files")
    if isinstance(entries, dict):  # InvenioRDM's {"enabled":..., "entries": {key: {...}}}
        entries = list((entries.get("entries") or {}).values())
    if not isinstance(entries, list):
        entries = []
    files = [f for f in (_file(e, c.base_url, rid) for e in entries if isinstance(e, dict)) if f]
    return files


def verify_token(c: Client) -> None:
    """Check the token by listing the user's depositions (one): a refused token raises RemoteError."""
    c.request("GET", "/api/deposit/depositions?size=1", "checking the token")


def metadata(meta: DepositMetadata) -> dict:
    """The deposition metadata Zenodo requires for a dataset."""
    return {"metadata": {
        "title": meta.title.strip(),
        "upload_type": "dataset",
        "description": meta.description.strip(),
        "creators": [{"name": c.strip()} for c in meta.creators if c.strip()],
    }}


def deposit(c: Client, files: list[tuple[str, bytes]], meta: DepositMetadata,
            before_file: Callable[[str, int], None] | None = None) -> Draft:
    """A new draft deposition holding ``files``; deleted again if a step fails (or ``before_file(name, i)``,
    called before each upload, raises: a cancel). Never published."""
    if not c.has_token:
        raise RemoteError("depositing on Zenodo needs an API token (scope deposit:write)")
    created = c.json("POST", "/api/deposit/depositions", "creating a draft deposition", expect=(200, 201),
                     json=metadata(meta))
    dep_id = str(created.get("id", ""))
    links = created.get("links") or {}
    try:
        bucket = links.get("bucket")
        if not dep_id or not bucket:
            raise RemoteError(f"{c.label} created a deposition without an id or a file bucket")
        for i, (name, body) in enumerate(files):
            if before_file is not None:
                before_file(name, i)
            c.request("PUT", f"{bucket.rstrip('/')}/{quote(name, safe='')}", f"uploading {name!r}", expect=(200, 201),
                      data=body, headers={"Content-Type": "application/octet-stream"})
    except BaseException:
        if dep_id:  # nothing half-made: the draft goes
            try:
                c.request("DELETE", f"/api/deposit/depositions/{dep_id}", "deleting the unfinished draft",
                          expect=(200, 201, 204, 404, 410))
            except RemoteError:
                pass
        raise
    url = links.get("html")
    try:  # shown as a link: only an allow-listed page
        url = check_url(url) if isinstance(url, str) else None
    except RemoteError:
        url = None
    url = url or f"{c.base_url}/deposit/{dep_id}"
    return Draft(service="zenodo", identifier=dep_id, url=url, files=[n for n, _ in files])
