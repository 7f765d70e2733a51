"""Importing from Zenodo or Dataverse on the web, against the local repository server: the request lists the
record's files and answers at once with the import's page (a SourceImport job, services/source_imports.py);
the worker downloads the file with the bytes read written to the row each MiB, a cancel honoured between
chunks, and stores it through the upload's ingestion. Refusals that need no download are the form at once,
escaped, with nothing stored; a failure, a cancel or a stalled server store nothing; a token typed for one
import is kept encrypted only while the import runs; another user gets 404."""

from __future__ import annotations

import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from anonymizer_app.models import Dataset, RemoteAccount, SourceImport
from anonymizer_app.services import source_imports, storage, vault
from tests import remote_helpers
from tests.remote_helpers import DATAVERSE_TOKEN, VISITS_CSV, ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
pytestmark = pytest.mark.django_db


@pytest.fixture
def client_bob(other_user):
    from django.test import Client

    bob = Client()
    bob.force_login(other_user)
    return bob


def add_connection(client, base, service="zenodo", token=ZENODO_TOKEN, name="Test Zenodo"):
    return client.post("/connections/", {"name": name, "service": service, "base_url": base, "token": token})


def file_requests(repo) -> list[str]:
    return [r["path"] for r in repo.requests if r["path"].endswith("/content")
            or r["path"].startswith("/api/access/datafile/")]


def run_last(owner) -> SourceImport:
    """What the worker does with the import just queued (the tests' broker has no worker)."""
    return source_imports.run(SourceImport.objects.filter(owner=owner).latest("created"))


def nothing_stored() -> bool:
    return not Dataset.objects.exists() and not storage.media_files()


def test_import_a_public_record_and_choose_among_files(client_alice, user, repo_server):
    base, repo = repo_server
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "10.5281/zenodo.101"})
    imp = SourceImport.objects.get(owner=user)
    assert response.status_code == 302 and response["Location"] == f"/datasets/imports/{imp.pk}/"
    # the request listed the record only: the download is the worker's
    assert file_requests(repo) == [] and not Dataset.objects.exists()
    assert (imp.source, imp.status, imp.table, imp.record, imp.server, imp.total, imp.account_id, imp.password) == (
        "zenodo", "queued", "adult-visits.csv", "10.5281/zenodo.101", base, len(VISITS_CSV), None, "")
    assert imp.url == f"{base}/api/records/101/files/adult-visits.csv/content"
    page = client_alice.get(response["Location"]).content.decode()
    assert "Importing adult-visits.csv from Zenodo" in page and 'id="import-cancel"' in page
    imp = run_last(user)
    ds = Dataset.objects.get(owner=user)
    assert (imp.status, imp.dataset_id, imp.rows, imp.total, imp.staging) == (
        "succeeded", ds.pk, len(VISITS_CSV), len(VISITS_CSV), "")
    assert (ds.name, ds.n_rows, ds.n_columns) == ("adult-visits", 6, 4)
    assert file_requests(repo) == ["/api/records/101/files/adult-visits.csv/content"]
    status = client_alice.get(f"/datasets/imports/{imp.pk}/status/").json()
    assert (status["status"], status["progress"], status["result_url"]) == ("succeeded", 1.0, f"/datasets/{ds.pk}/")

    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "102"})
    page = response.content.decode()
    assert response.status_code == 200 and 'id="remote-file-choice"' in page
    assert 'value="a.csv"' in page and 'value="b.csv"' in page
    assert SourceImport.objects.count() == 1  # a choice offered queues nothing
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "102", "file": "b.csv", "name": "B"})
    assert response.status_code == 302
    imp = run_last(user)
    assert imp.status == "succeeded" and Dataset.objects.get(owner=user, name="B").n_rows == 6


def test_import_refusals_are_escaped_and_store_nothing(client_alice, user, repo_server, settings):
    base, repo = repo_server
    dv = RemoteAccount(owner=user, service="dataverse", base_url=base, name="DV")  # a token revoked since
    dv.set_token("wrong-token-0000")
    dv.save()
    settings.ANONYMIZER_MAX_UPLOAD_MB = 1  # record 104's huge.csv declares 4.9 MB
    cases = [
        ({"service": "zenodo", "base_url": base, "identifier": "999"}, "the record 999 was not found (404)"),
        ({"service": "zenodo", "base_url": base, "identifier": "103"}, "has no CSV, TSV or Excel file"),
        ({"service": "zenodo", "base_url": base, "identifier": "101", "file": "readme.pdf"}, "not a table file"),
        ({"service": "zenodo", "base_url": base, "identifier": "104"}, "huge.csv: 4.9 MB, more than the limit of 1 MB"),
        ({"service": "zenodo", "base_url": base, "identifier": "<b>x</b>"}, "&#x27;&lt;b&gt;x&lt;/b&gt;&#x27; is not a Zenodo record"),
        ({"account": dv.pk, "service": "zenodo", "identifier": "doi:10.5072/FK2/AAAAAA"},
         "refused the token (401: Bad API key)"),
        ({"account": dv.pk, "identifier": "doi:10.5072/FK2/AAAAAA", "token": "x"}, "a connection brings its own token"),
        ({"service": "zenodo", "base_url": "https://evil.example.org", "identifier": "1"}, "Select a valid choice"),
    ]
    for data, message in cases:
        response = client_alice.post("/datasets/import-remote/", data)
        page = response.content.decode()
        assert response.status_code == 400 and message in page, (data, page[:300])
        assert "<b>x</b>" not in page
    assert not SourceImport.objects.exists() and file_requests(repo) == [] and nothing_stored()


def test_a_file_the_ingestion_refuses_fails_the_import_and_stores_nothing(client_alice, user, repo_server):
    base, _ = repo_server
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "105"})
    assert response.status_code == 302
    imp = run_last(user)
    assert imp.status == "failed" and "broken.csv, line 2" in imp.message and imp.staging == ""
    page = client_alice.get(f"/datasets/imports/{imp.pk}/").content.decode()
    assert "The import failed" in page and "broken.csv, line 2" in page
    assert nothing_stored()


def test_import_with_a_dataverse_connection_fetches_the_original(client_alice, user, repo_server):
    base, repo = repo_server
    add_connection(client_alice, base, "dataverse", DATAVERSE_TOKEN, name="DV")
    dv = RemoteAccount.objects.get(name="DV")
    response = client_alice.post("/datasets/import-remote/", {"account": dv.pk, "identifier": "doi:10.5072/FK2/AAAAAA",
                                                               "file": "visits.csv", "service": "zenodo"})
    assert response.status_code == 302
    imp = SourceImport.objects.get(owner=user)
    assert (imp.source, imp.account_id, imp.server, imp.password) == ("dataverse", dv.pk, base, "")
    assert "Importing visits.csv from Dataverse" in client_alice.get(response["Location"]).content.decode()
    imp = run_last(user)
    ds = Dataset.objects.get(owner=user)
    assert (imp.status, ds.original_name, ds.n_rows) == ("succeeded", "visits.csv", 6)
    fetched = [r for r in repo.requests if r["path"].startswith("/api/access/datafile/")]
    assert [(r["path"], r["query"]) for r in fetched] == [("/api/access/datafile/42", "format=original")]
    assert fetched[0]["headers"]["X-Dataverse-key"] == DATAVERSE_TOKEN


def test_a_token_typed_for_one_import_lives_only_while_it_runs(client_alice, user, repo_server):
    base, repo = repo_server
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "101", "token": ZENODO_TOKEN})
    assert response.status_code == 302
    imp = SourceImport.objects.get(owner=user)
    assert ZENODO_TOKEN not in str(list(SourceImport.objects.filter(pk=imp.pk).values().get().values()))
    assert vault.decrypt_text(imp.password) == ZENODO_TOKEN  # encrypted while it waits
    assert ZENODO_TOKEN not in client_alice.get(response["Location"]).content.decode()
    imp = run_last(user)
    assert imp.status == "succeeded" and imp.password == ""
    fetched = [r for r in repo.requests if r["path"].endswith("/content")]
    assert fetched[0]["headers"]["Authorization"] == f"Bearer {ZENODO_TOKEN}"
    assert not RemoteAccount.objects.exists()
    # erased too when the import fails or is cancelled before it starts
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "105",
                                                   "token": ZENODO_TOKEN})
    assert run_last(user).password == ""
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "101",
                                                   "token": ZENODO_TOKEN})
    queued = SourceImport.objects.filter(owner=user).latest("created")
    assert queued.password and source_imports.cancel(queued)
    queued.refresh_from_db()
    assert (queued.status, queued.password) == ("cancelled", "")
    assert not SourceImport.objects.exclude(password="").exists()


def test_cancel_mid_download_stores_nothing(client_alice, user, repo_server, monkeypatch):
    base, _ = repo_server
    size = len(VISITS_CSV) * 40000  # record 104's huge.csv: 4.9 MB, written to the row each MiB
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "104"})
    seen: list[tuple] = []
    checked = source_imports._cancelled

    def cancel_at_two_mib(pk) -> bool:
        imp = SourceImport.objects.get(pk=pk)
        seen.append((imp.status, imp.rows, imp.total))
        if imp.rows >= 2 << 20 and not imp.cancel_requested:
            assert client_alice.post(f"/datasets/imports/{pk}/cancel/").status_code == 302
        return checked(pk)

    monkeypatch.setattr(source_imports, "_cancelled", cancel_at_two_mib)
    imp = run_last(user)
    assert [s[0] for s in seen] == ["running", "running"] and all(s[2] == size for s in seen)
    # each write is the first chunk at or past a MiB (64 KiB chunks: exactly 1 and 2 MiB)
    assert [s[1] for s in seen] == [1 << 20, 2 << 20]
    assert (imp.status, imp.message, imp.rows, imp.password, imp.staging) == (
        "cancelled", "cancelled by the user; nothing was stored", 2 << 20, "", "")
    assert nothing_stored()


class _Stalling(BaseHTTPRequestHandler):
    """A Zenodo record whose one file declares 1,000,000 bytes, sends 100,004 and then nothing (until the
    test ends): the client has its first 64 KiB chunk, then waits for the second."""

    release = threading.Event()

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        host = self.headers["Host"]
        if self.path == "/api/records/7":
            body = (b'{"files": [{"key": "slow.csv", "size": 1000000, "links": {"self": "http://%s/api/records/7/'
                    b'files/slow.csv/content"}}]}' % host.encode())
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        self.wfile.write(b"a,b\n" + b"1,2\n" * 25000)
        self.wfile.flush()
        self.release.wait(30)


@pytest.fixture
def stalling_server(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = [host]
    settings.ANONYMIZER_REMOTE_TIMEOUT_SECONDS = 1
    try:
        yield f"http://{host}"
    finally:
        _Stalling.release.set()
        server.shutdown()
        server.server_close()
        _Stalling.release.clear()


def test_a_server_that_stalls_mid_body_fails_the_job_not_the_request(client_alice, user, stalling_server):
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": stalling_server,
                                                               "identifier": "7"})
    imp = SourceImport.objects.get(owner=user)
    assert response.status_code == 302 and (imp.status, imp.total) == ("queued", 1000000)
    imp = run_last(user)
    assert imp.status == "failed" and imp.message == (
        f"Zenodo at {stalling_server.removeprefix('http://')} sent nothing more of 'slow.csv' for 1 s (after "
        "65,536 bytes): the download was stopped")
    assert imp.staging == "" and nothing_stored()


def test_another_user_gets_404(client_alice, client_bob, user, repo_server):
    base, _ = repo_server
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "104"})
    imp = SourceImport.objects.get(owner=user)
    for url in (f"/datasets/imports/{imp.pk}/", f"/datasets/imports/{imp.pk}/status/"):
        assert client_bob.get(url).status_code == 404
    assert client_bob.post(f"/datasets/imports/{imp.pk}/cancel/").status_code == 404
    imp.refresh_from_db()
    assert (imp.status, imp.cancel_requested) == ("queued", False)
    # another user's connection is not a choice
    account = RemoteAccount(owner=user, service="zenodo", base_url=base, name="Z")
    account.set_token(ZENODO_TOKEN)
    account.save()
    response = client_bob.post("/datasets/import-remote/", {"account": account.pk, "identifier": "101"})
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert SourceImport.objects.count() == 1


def test_the_time_limit_and_the_sweep_use_the_repository_import_kind(client_alice, user, repo_server, settings,
                                                                      monkeypatch):
    from billiard.exceptions import SoftTimeLimitExceeded

    base, _ = repo_server
    settings.ANONYMIZER_JOB_TIME_LIMITS = {"repository-import": 30, "sql-import": 99}
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "104"})
    imp = SourceImport.objects.get(owner=user)
    assert source_imports.kind_of(imp) == "repository-import"

    def limit_reached(pk) -> bool:  # the soft limit's exception arrives during the download
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(source_imports, "_cancelled", limit_reached)
    imp = source_imports.run(imp)
    assert (imp.status, imp.message, imp.rows, imp.staging) == (
        "failed", "stopped after 30 s: the time limit for repository-import jobs (setting "
                  "ANONYMIZER_JOB_TIME_LIMIT_REPOSITORY_IMPORT_SECONDS); nothing was stored", 1 << 20, "")
    assert nothing_stored()

    # a worker that died mid-download: its half-written file goes, the import fails naming the limit
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "101"})
    dead = SourceImport.objects.filter(owner=user).latest("created")
    assert source_imports._claim(dead)
    dead.refresh_from_db()
    leftover = storage.media_root() / dead.staging
    leftover.parent.mkdir(parents=True, exist_ok=True)
    leftover.write_bytes(b"name,age\n")
    long_ago = timezone.now() - timedelta(seconds=60)
    SourceImport.objects.filter(pk=dead.pk).update(started=long_ago, heartbeat=long_ago)
    settings.ANONYMIZER_JOB_STALE_SECONDS = 10
    assert source_imports.sweep_stale_imports() == [str(dead.pk)]
    dead.refresh_from_db()
    assert (dead.status, dead.message, dead.staging) == (
        "failed", "stopped after 30 s: the time limit for repository-import jobs (setting "
                  "ANONYMIZER_JOB_TIME_LIMIT_REPOSITORY_IMPORT_SECONDS); nothing was stored", "")
    assert not leftover.exists() and nothing_stored()
