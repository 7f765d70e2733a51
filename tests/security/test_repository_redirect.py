"""Issue 25, connectors: a repository token followed redirects to another allow-listed host. Two loopback
HTTP servers: the "repository" the token was stored for (127.0.0.1:A) and another allow-listed host
(localhost:B, another name and port). A redirect or a link from the first to the second must reach it
without the token; a redirect within the repository keeps it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from anonymizer_app.models import Dataset
from anonymizer_app.services import dataverse, remote, zenodo

pytestmark = pytest.mark.django_db
TOKEN = "stored-SECRET-token-0123456789"
CSV = b"name,age\nAnn,34\nBob,36\n"


class Server:
    """A loopback HTTP server answering from ``routes`` (path -> (status, headers, body)), recording every
    request's path and headers."""

    def __init__(self):
        self.routes: dict[str, tuple[int, dict, bytes]] = {}
        self.seen: list[tuple[str, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                outer.seen.append((self.path, dict(self.headers)))
                status, headers, body = outer.routes.get(self.path.split("?")[0], (404, {}, b"{}"))
                self.send_response(status)
                for k, v in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def tokens(self) -> list[str]:
        return [v for _, headers in self.seen for k, v in headers.items()
                if k.lower() in ("authorization", "x-dataverse-key") or TOKEN in v]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers(settings):
    repo, other = Server(), Server()
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = [f"127.0.0.1:{repo.port}", f"localhost:{other.port}"]
    yield repo, other
    repo.close()
    other.close()


def _redirect(to: str, status: int = 302) -> tuple[int, dict, bytes]:
    return status, {"Location": to}, b""


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_allowed_host_drops_the_token(servers, status):
    repo, other = servers
    repo.routes["/api/records/1"] = _redirect(f"http://localhost:{other.port}/api/records/1", status)
    other.routes["/api/records/1"] = (200, {"Content-Type": "application/json"}, b'{"files": []}')
    for client in (zenodo.client(f"http://127.0.0.1:{repo.port}", TOKEN),
                   dataverse.client(f"http://127.0.0.1:{repo.port}", TOKEN)):
        assert client.json("GET", "/api/records/1", "the record") == {"files": []}
    assert len(repo.seen) == 2 and repo.tokens() == [f"Bearer {TOKEN}", TOKEN]  # sent to its own host
    assert len(other.seen) == 2 and other.tokens() == []  # never to the other one


def test_the_same_name_on_another_port_is_another_host(servers, settings):
    repo, other = servers
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS.append(f"127.0.0.1:{other.port}")
    repo.routes["/x"] = _redirect(f"http://127.0.0.1:{other.port}/x")
    other.routes["/x"] = (200, {}, b"{}")
    zenodo.client(f"http://127.0.0.1:{repo.port}", TOKEN).request("GET", "/x", "x")
    assert other.seen and other.tokens() == []


def test_a_redirect_within_the_repository_keeps_the_token(servers):
    repo, _ = servers
    repo.routes["/api/records/1"] = _redirect("/api/records/1/v2")
    repo.routes["/api/records/1/v2"] = (200, {"Content-Type": "application/json"}, b'{"files": []}')
    zenodo.client(f"http://127.0.0.1:{repo.port}", TOKEN).json("GET", "/api/records/1", "the record")
    assert repo.tokens() == [f"Bearer {TOKEN}"] * 2


def test_a_file_link_to_another_host_is_fetched_without_the_token(servers, user):
    """A record whose file link (links.content) points at another allow-listed host: the file is imported,
    the token stays with the repository."""
    repo, other = servers
    record = {"files": [{"key": "visits.csv", "size": len(CSV),
                         "links": {"content": f"http://localhost:{other.port}/files/visits.csv/content"}}]}
    repo.routes["/api/records/7"] = (200, {"Content-Type": "application/json"}, json.dumps(record).encode())
    other.routes["/files/visits.csv/content"] = (200, {"Content-Type": "text/csv"}, CSV)
    client = zenodo.client(f"http://127.0.0.1:{repo.port}", TOKEN)
    files = zenodo.list_files(client, "7")
    ds = remote.import_file(user, client, remote.choose_file(files, None, "record 7"))
    assert ds.n_rows == 2 and Dataset.objects.count() == 1
    assert repo.tokens() == [f"Bearer {TOKEN}"] and other.tokens() == []


def test_a_redirect_off_the_allow_list_is_refused_before_any_request(servers, settings):
    repo, other = servers
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = [f"127.0.0.1:{repo.port}"]
    repo.routes["/x"] = _redirect(f"http://localhost:{other.port}/x")
    with pytest.raises(remote.RemoteError, match=f"localhost:{other.port}: https is required"):
        zenodo.client(f"http://127.0.0.1:{repo.port}", TOKEN).request("GET", "/x", "x")
    assert other.seen == []
