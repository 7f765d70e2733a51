"""A local stand-in for Zenodo and Dataverse (stdlib http.server on 127.0.0.1, a thread per request) that
answers the documented API calls with JSON bodies shaped as the APIs' documentation shows, and records every
request (method, path, headers, body) and every draft made. No network: the tests' base URL is this server.

Zenodo: GET /api/records/{id}, GET /api/records/{id}/files/{key}/content, POST /api/deposit/depositions,
PUT /api/files/{bucket}/{key}, DELETE /api/deposit/depositions/{id}; token as "Authorization: Bearer".
Dataverse: GET /api/datasets/:persistentId/?persistentId=, GET /api/files/{id}, GET /api/access/datafile/{id}
(?format=original), POST /api/dataverses/{alias}/datasets, POST /api/datasets/:persistentId/add,
DELETE /api/datasets/:persistentId/versions/:draft; token as "X-Dataverse-key".
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

ZENODO_TOKEN = "zen-SECRET-token-0123456789abcdef"
DATAVERSE_TOKEN = "dv-SECRET-token-0123456789abcdef"
VISITS_CSV = b"name,age,zip,disease\nAnn,34,10115,flu\nBob,36,10117,cold\nCid,35,10119,flu\nDan,51,20095,asthma\n" \
             b"Eve,53,20097,flu\nFay,52,20099,cold\n"
VISITS_TAB = VISITS_CSV.replace(b",", b"\t")


class Repository:
    """The server's state: records, datasets, the drafts made, the requests seen, switches for failures."""

    def __init__(self):
        self.requests: list[dict] = []
        self.drafts: dict[str, dict] = {}  # id or persistent id -> {"metadata": ..., "files": {name: bytes}}
        self.deleted: list[str] = []
        self.fail_uploads = False
        self.slow_seconds = 0.0
        self.omit_length = False  # file bodies sent without Content-Length (read until the connection closes)
        self.zenodo_records = {
            "101": {"adult-visits.csv": VISITS_CSV, "readme.pdf": b"%PDF-1.4 not a table"},
            "102": {"a.csv": VISITS_CSV, "b.csv": VISITS_CSV},
            "103": {"notes.pdf": b"%PDF-1.4"},
            "104": {"huge.csv": VISITS_CSV * 40000},
            "105": {"broken.csv": b"name,age\nAnn,34,extra\n"},
        }
        self.dataverse_files = {  # id -> (name as ingested, original name, original bytes)
            42: ("visits.tab", "visits.csv", VISITS_CSV),
            43: ("plain.xlsx", None, b"PK\x03\x04 not really a workbook"),
        }
        self.dataverse_datasets = {"doi:10.5072/FK2/AAAAAA": [42, 43]}
        self.counter = 5000


def _json(handler, status: int, body) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _bytes(handler, body: bytes, omit_length: bool = False) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/octet-stream")
    if not omit_length:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def make_handler(repo: Repository):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _record(self) -> tuple[str, dict, bytes]:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            repo.requests.append({"method": self.command, "path": parts.path, "query": parts.query,
                                  "headers": dict(self.headers.items()), "body": body})
            return unquote(parts.path), parse_qs(parts.query), body

        @property
        def base(self) -> str:
            return f"http://{self.headers['Host']}"

        def _zenodo_ok(self) -> bool:
            return self.headers.get("Authorization") == f"Bearer {ZENODO_TOKEN}"

        def _dv_key(self) -> str | None:
            return self.headers.get("X-Dataverse-key")

        def _dv_unauthorized(self) -> bool:
            key = self._dv_key()
            if key is not None and key != DATAVERSE_TOKEN:
                _json(self, 401, {"status": "ERROR", "message": "Bad API key"})
                return True
            return False

        def _zenodo_unauthorized(self) -> bool:
            if self.headers.get("Authorization") and not self._zenodo_ok():
                _json(self, 401, {"status": 401, "message": "The server could not verify that you are authorized "
                                                            "to access the URL requested."})
                return True
            return False

        def _dv_file(self, fid: int) -> dict:
            label, original, content = repo.dataverse_files[fid]
            data = {"id": fid, "persistentId": "", "filename": label, "filesize": len(content),
                    "contentType": "text/tab-separated-values" if original else "application/octet-stream"}
            if original:
                data.update({"originalFileFormat": "text/csv", "originalFileName": original,
                             "originalFileSize": len(content)})
            return {"label": label, "restricted": False, "version": 1, "dataFile": data}

        def do_GET(self):  # noqa: N802
            path, query, _ = self._record()
            if repo.slow_seconds:
                time.sleep(repo.slow_seconds)
            parts = path.strip("/").split("/")
            if path == "/api/deposit/depositions":
                if not self._zenodo_ok():
                    return _json(self, 401, {"status": 401, "message": "The server could not verify that you are "
                                                                       "authorized to access the URL requested."})
                return _json(self, 200, [])
            if path.startswith("/api/deposit/depositions/"):
                if not self._zenodo_ok():
                    return _json(self, 401, {"status": 401, "message": "unauthorized"})
                dep_id = path.rsplit("/", 1)[1]
                draft = repo.drafts.get(dep_id)
                if draft is None:
                    return _json(self, 404, {"status": 404, "message": "PID does not exist."})
                return _json(self, 200, {
                    "id": int(dep_id), "state": "unsubmitted", "submitted": False, "metadata": draft["metadata"],
                    "files": [{"id": str(uuid.uuid5(uuid.NAMESPACE_URL, k)), "filename": k, "filesize": len(v),
                               "checksum": hashlib.md5(v).hexdigest(),
                               "links": {"self": f"{self.base}/api/deposit/depositions/{dep_id}/files/x",
                                         "download": f"{self.base}/api/files/{draft['bucket']}/{k}"}}
                              for k, v in draft["files"].items()]})
            if path.startswith("/api/files/") and len(parts) == 4:
                if not self._zenodo_ok():
                    return _json(self, 401, {"status": 401, "message": "unauthorized"})
                draft = next((d for d in repo.drafts.values() if d.get("bucket") == parts[2]), None)
                if draft is None or parts[3] not in draft["files"]:
                    return _json(self, 404, {"status": 404, "message": "Object does not exist."})
                return _bytes(self, draft["files"][parts[3]])
            if path == "/api/users/:me":
                if self._dv_key() != DATAVERSE_TOKEN:
                    return _json(self, 401, {"status": "ERROR", "message": "Bad API key"})
                return _json(self, 200, {"status": "OK", "data": {"id": 1, "identifier": "@jane",
                                                                   "email": "jane@example.org"}})
            if path.startswith("/api/records/"):
                if self._zenodo_unauthorized():
                    return
                rid = parts[2]
                files = repo.zenodo_records.get(rid)
                if files is None:
                    return _json(self, 404, {"status": 404, "message": "PID does not exist."})
                if len(parts) == 3:
                    return _json(self, 200, {
                        "id": int(rid), "doi": f"10.5281/zenodo.{rid}", "metadata": {"title": f"Record {rid}"},
                        "links": {"self": f"{self.base}/api/records/{rid}"},
                        "files": [{"id": str(uuid.uuid5(uuid.NAMESPACE_URL, k)), "key": k, "size": len(v),
                                   "checksum": "md5:" + hashlib.md5(v).hexdigest(),
                                   "links": {"self": f"{self.base}/api/records/{rid}/files/{k}/content"}}
                                  for k, v in files.items()]})
                if len(parts) == 6 and parts[3] == "files" and parts[5] == "content" and parts[4] in files:
                    return _bytes(self, files[parts[4]], repo.omit_length)
                return _json(self, 404, {"status": 404, "message": "not found"})
            if path == "/api/datasets/:persistentId/" or path == "/api/datasets/:persistentId":
                if self._dv_unauthorized():
                    return
                pid = (query.get("persistentId") or [""])[0]
                if pid not in repo.dataverse_datasets:
                    return _json(self, 404, {"status": "ERROR",
                                             "message": f"Dataset with Persistent ID {pid} not found."})
                return _json(self, 200, {"status": "OK", "data": {
                    "id": 7, "identifier": pid.split("/", 1)[1], "persistentUrl": "https://doi.org/" + pid[4:],
                    "protocol": "doi", "authority": "10.5072", "publisher": "Demo Dataverse",
                    "latestVersion": {"id": 3, "versionNumber": 1, "versionState": "RELEASED",
                                      "files": [self._dv_file(f) for f in repo.dataverse_datasets[pid]]}}})
            if path.startswith("/api/files/") and len(parts) == 3:
                if self._dv_unauthorized():
                    return
                fid = int(parts[2]) if parts[2].isdigit() else -1
                if fid not in repo.dataverse_files:
                    return _json(self, 404, {"status": "ERROR", "message": f"File with ID {parts[2]} not found."})
                return _json(self, 200, {"status": "OK", "data": self._dv_file(fid)})
            if path.startswith("/api/access/datafile/"):
                if self._dv_unauthorized():
                    return
                fid = int(parts[3]) if parts[3].isdigit() else -1
                if fid not in repo.dataverse_files:
                    return _json(self, 404, {"status": "ERROR", "message": "File not found"})
                label, original, content = repo.dataverse_files[fid]
                original_asked = (query.get("format") or [""])[0] == "original"
                return _bytes(self, content if original_asked or not original else content.replace(b",", b"\t"))
            if path == "/redirect-out":
                self.send_response(302)
                self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            return _json(self, 404, {"status": 404, "message": "not found"})

        def do_POST(self):  # noqa: N802
            path, query, body = self._record()
            if path == "/api/deposit/depositions":
                if not self._zenodo_ok():
                    return _json(self, 401, {"status": 401, "message": "The server could not verify that you are "
                                                                       "authorized to access the URL requested."})
                repo.counter += 1
                dep_id, bucket = repo.counter, str(uuid.uuid4())
                repo.drafts[str(dep_id)] = {"metadata": json.loads(body or b"{}").get("metadata", {}), "files": {},
                                            "bucket": bucket}
                return _json(self, 201, {
                    "id": dep_id, "conceptrecid": str(dep_id - 1), "state": "unsubmitted", "submitted": False,
                    "metadata": repo.drafts[str(dep_id)]["metadata"], "files": [],
                    "links": {"self": f"{self.base}/api/deposit/depositions/{dep_id}",
                              "html": f"{self.base}/deposit/{dep_id}",
                              "bucket": f"{self.base}/api/files/{bucket}",
                              "publish": f"{self.base}/api/deposit/depositions/{dep_id}/actions/publish"}})
            if path.startswith("/api/dataverses/") and path.endswith("/datasets"):
                if self._dv_key() != DATAVERSE_TOKEN:
                    return _json(self, 401, {"status": "ERROR", "message": "Bad API key"})
                alias = path.split("/")[3]
                if alias != "anonymized":
                    return _json(self, 404, {"status": "ERROR", "message": f"Can't find dataverse with identifier='{alias}'"})
                repo.counter += 1
                pid = f"doi:10.5072/FK2/NEW{repo.counter}"
                repo.drafts[pid] = {"metadata": json.loads(body), "files": {}, "alias": alias}
                return _json(self, 201, {"status": "OK", "data": {"id": repo.counter, "persistentId": pid}})
            if path == "/api/datasets/:persistentId/add":
                if self._dv_key() != DATAVERSE_TOKEN:
                    return _json(self, 401, {"status": "ERROR", "message": "Bad API key"})
                pid = (query.get("persistentId") or [""])[0]
                if pid not in repo.drafts:
                    return _json(self, 404, {"status": "ERROR", "message": "Dataset not found"})
                if repo.fail_uploads:
                    return _json(self, 500, {"status": "ERROR", "message": "storage is full"})
                msg = BytesParser(policy=email_policy).parsebytes(
                    b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body)
                name, content, json_data = None, b"", {}
                for part in msg.iter_parts():
                    field = part.get_param("name", header="content-disposition")
                    if field == "file":
                        name, content = part.get_filename(), part.get_payload(decode=True)
                    elif field == "jsonData":
                        json_data = json.loads(part.get_payload(decode=True))
                repo.drafts[pid]["files"][name] = content
                repo.drafts[pid].setdefault("json", []).append(json_data)
                return _json(self, 200, {"status": "OK", "data": {"files": [{"label": name, "dataFile": {
                    "id": repo.counter + 1000, "filename": name, "filesize": len(content)}}]}})
            return _json(self, 404, {"status": 404, "message": "not found"})

        def do_PUT(self):  # noqa: N802
            path, _, body = self._record()
            parts = path.strip("/").split("/")
            if path.startswith("/api/files/") and len(parts) == 4:
                if not self._zenodo_ok():
                    return _json(self, 401, {"status": 401, "message": "unauthorized"})
                draft = next((d for d in repo.drafts.values() if d.get("bucket") == parts[2]), None)
                if draft is None:
                    return _json(self, 404, {"status": 404, "message": "Bucket does not exist."})
                if repo.fail_uploads:
                    return _json(self, 500, {"status": 500, "message": "Internal server error"})
                draft["files"][parts[3]] = body
                return _json(self, 201, {"key": parts[3], "size": len(body),
                                         "checksum": "md5:" + hashlib.md5(body).hexdigest(), "mimetype": "text/csv"})
            return _json(self, 404, {"status": 404, "message": "not found"})

        def do_DELETE(self):  # noqa: N802
            path, query, _ = self._record()
            if path.startswith("/api/deposit/depositions/"):
                dep_id = path.rsplit("/", 1)[1]
                repo.drafts.pop(dep_id, None)
                repo.deleted.append(dep_id)
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if path == "/api/datasets/:persistentId/versions/:draft":
                pid = (query.get("persistentId") or [""])[0]
                repo.drafts.pop(pid, None)
                repo.deleted.append(pid)
                return _json(self, 200, {"status": "OK", "data": {"message": "Draft version of dataset deleted"}})
            return _json(self, 404, {"status": 404, "message": "not found"})

    return Handler


@pytest.fixture
def repo_server(settings):
    """The local repository server; its host:port allowed over plain http. Yields (base URL, Repository)."""
    repo = Repository()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(repo))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host = f"127.0.0.1:{server.server_address[1]}"
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = [host]
    try:
        yield f"http://{host}", repo
    finally:
        server.shutdown()
        server.server_close()
