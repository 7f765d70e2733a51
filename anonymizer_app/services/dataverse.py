"""Dataverse's Native and Data Access APIs (https://guides.dataverse.org/en/latest/api/): a dataset's files
(GET /api/datasets/:persistentId/?persistentId=doi:...) or one file's (GET /api/files/{id}) to import, the
file fetched by GET /api/access/datafile/{id} (?format=original for an ingested tabular file: the file as
it was deposited, not the .tab Dataverse made of it); a deposit is a new draft dataset in a dataverse
(POST /api/dataverses/{alias}/datasets with the citation block) and its files
(POST /api/datasets/:persistentId/add, multipart "file" + "jsonData"); never published.

The token goes as ``X-Dataverse-key: <token>``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from urllib.parse import quote

from .remote_client import Client, DepositMetadata, Draft, RemoteError, RemoteFile

PID = re.compile(r"^(?:doi|hdl|perma):\S+$", re.I)
DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/(10\.\S+)$", re.I)
ALIAS = re.compile(r"^[A-Za-z0-9_-]{1,60}$")


def client(base_url: str, token: str | None) -> Client:
    return Client("dataverse", base_url, token, token_header="X-Dataverse-key", token_prefix="")


def parse_identifier(identifier: str) -> tuple[str, str]:
    """("pid", "doi:...") for a dataset's persistent id, ("file", "42") for a file's database id."""
    text = identifier.strip()
    if text.isdigit():
        return "file", text
    match = DOI_URL.match(text)
    if match:
        return "pid", f"doi:{match.group(1)}"
    if text.lower().startswith("10.") and "/" in text:
        return "pid", f"doi:{text}"
    if PID.match(text):
        return "pid", text
    raise RemoteError(f"{identifier[:200]!r} is not a Dataverse dataset or file: give the dataset's persistent "
                      "id (doi:10.5072/FK2/ABCDEF) or a file's id (a number)")


def _data(body: dict, c: Client, what: str) -> dict:
    if body.get("status") != "OK" or not isinstance(body.get("data"), dict):
        raise RemoteError(f"{c.label} answered {what} with an error: {str(body.get('message', ''))[:300]}")
    return body["data"]


def _file(entry: dict, c: Client) -> RemoteFile | None:
    df = entry.get("dataFile") or {}
    fid = df.get("id")
    if fid is None:
        return None
    original = df.get("originalFileName")  # a tabular file Dataverse ingested: fetch what was deposited
    name = original or df.get("filename") or entry.get("label") or f"file-{fid}"
    size = df.get("originalFileSize") if original else df.get("filesize")
    url = f"{c.base_url}/api/access/datafile/{int(fid)}" + ("?format=original" if original else "")
    return RemoteFile(name=str(name), size=int(size) if isinstance(size, (int, float)) else None, url=url,
                      file_id=str(fid))


def list_files(c: Client, identifier: str) -> list[RemoteFile]:
    """The files of the dataset's latest version (the draft when the token's user may see it), or the one
    file named by its id."""
    kind, value = parse_identifier(identifier)
    if kind == "file":
        data = _data(c.json("GET", f"/api/files/{value}", f"the file {value}"), c, f"the file {value}")
        found = _file(data if "dataFile" in data else {"dataFile": data}, c)
        return [found] if found else []
    what = f"the dataset {value}"
    data = _data(c.json("GET", f"/api/datasets/:persistentId/?persistentId={quote(value, safe=':/')}", what), c, what)
    entries = (data.get("latestVersion") or {}).get("files") or []
    return [f for f in (_file(e, c) for e in entries if isinstance(e, dict)) if f]


def verify_token(c: Client) -> None:
    """Check the token by asking whose it is (GET /api/users/:me): a refused token raises RemoteError."""
    _data(c.json("GET", "/api/users/:me", "checking the token"), c, "checking the token")


def citation(meta: DepositMetadata) -> dict:
    """The dataset JSON with the citation block's required fields (title, author, contact, description,
    subject)."""
    def primitive(name, value):
        return {"typeName": name, "multiple": False, "typeClass": "primitive", "value": value}

    fields = [
        primitive("title", meta.title.strip()),
        {"typeName": "author", "multiple": True, "typeClass": "compound",
         "value": [{"authorName": primitive("authorName", c.strip())} for c in meta.creators if c.strip()]},
        {"typeName": "datasetContact", "multiple": True, "typeClass": "compound",
         "value": [{"datasetContactEmail": primitive("datasetContactEmail", meta.contact_email.strip()),
                    "datasetContactName": primitive("datasetContactName", meta.creators[0].strip())}]},
        {"typeName": "dsDescription", "multiple": True, "typeClass": "compound",
         "value": [{"dsDescriptionValue": primitive("dsDescriptionValue", meta.description.strip())}]},
        {"typeName": "subject", "multiple": True, "typeClass": "controlledVocabulary", "value": ["Other"]},
    ]
    return {"datasetVersion": {"metadataBlocks": {"citation": {"displayName": "Citation Metadata",
                                                               "fields": fields}}}}


def deposit(c: Client, alias: str, files: list[tuple[str, bytes]], meta: DepositMetadata,
            before_file: Callable[[str, int], None] | None = None) -> Draft:
    """A new draft dataset in the dataverse ``alias`` holding ``files``; deleted again if a step fails (or
    ``before_file(name, i)``, called before each upload, raises: a cancel)."""
    if not c.has_token:
        raise RemoteError("depositing on Dataverse needs an API token")
    alias = alias.strip()
    if not ALIAS.match(alias):
        raise RemoteError(f"{alias[:80]!r} is not a dataverse alias (letters, digits, - and _)")
    what = f"creating a draft dataset in the dataverse {alias!r}"
    data = _data(c.json("POST", f"/api/dataverses/{alias}/datasets", what, expect=(200, 201), json=citation(meta)),
                 c, what)
    pid = str(data.get("persistentId", ""))
    try:
        if not pid:
            raise RemoteError(f"{c.label} created a dataset without a persistent id")
        for i, (name, body) in enumerate(files):
            if before_file is not None:
                before_file(name, i)
            add = f"adding {name!r} to {pid}"
            _data(c.json("POST", f"/api/datasets/:persistentId/add?persistentId={quote(pid, safe=':/')}", add,
                         files={"file": (name, body, "application/octet-stream")},
                         data={"jsonData": json.dumps({"description": meta.title.strip(), "restrict": "false"})}),
                  c, add)
    except BaseException:
        if pid:  # nothing half-made: the draft goes
            try:
                c.request("DELETE", f"/api/datasets/:persistentId/versions/:draft?persistentId={quote(pid, safe=':/')}",
                          "deleting the unfinished draft", expect=(200, 204, 404))
            except RemoteError:
                pass
        raise
    url = f"{c.base_url}/dataset.xhtml?persistentId={quote(pid, safe=':/')}&version=DRAFT"
    return Draft(service="dataverse", identifier=pid, url=url, files=[n for n, _ in files])
