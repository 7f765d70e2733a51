"""API SQL endpoints: a PostgreSQL table (or a query) imported as a dataset by an import job (202, polled at
/api/v1/sql/imports/<id>/, cancelled at .../cancel/), a run's published rows written to a new table by a job
(202, polled at /api/v1/runs/<id>/); the web checks (SQLite refused, one SELECT, URL parameters) before any
job; a slow server never holds the request; owner-only (404), no key 401; the download formats."""

from __future__ import annotations

import io
import socket

import pandas as pd
import pytest
from api_helpers import api_for, eager_celery  # noqa: F401

from anonymizer_app.models import Dataset, Job, SourceImport
from anonymizer_app.services import exports, source_imports, storage
from tests import sql_helpers
from tests.anonymizer_helpers import finished_job, make_dataset
from tests.sql_helpers import pg_execute, pg_rows

pg_url = sql_helpers.pg_url  # the fixture
pytestmark = pytest.mark.django_db


@pytest.fixture
def source(pg_url):
    pg_execute(pg_url, "CREATE TABLE visits (name text, age integer)",
               "INSERT INTO visits VALUES ('Ann', 34), ('Bob', 36), ('Cid', 35)")
    return pg_url


def test_import_a_table_and_a_query(user, source, eager_celery):  # noqa: F811
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": source, "table": "visits", "keep_password": False})
    assert r.status_code == 202, r.content
    body = r.json()
    poll = f"/api/v1/sql/imports/{body['id']}/"
    assert (body["poll"], r["Location"], body["table"], body["url"]) == (
        poll, poll, "visits", source.replace("postgresql://", "postgresql+psycopg://"))
    polled = api.get(poll).json()
    ds = Dataset.objects.get(owner=user)
    assert {k: polled[k] for k in ("status", "rows", "total", "progress", "message", "finished_import",
                                   "dataset")} == {"status": "succeeded", "rows": 3, "total": 3, "progress": 1.0,
                                                   "message": "", "finished_import": True, "dataset": ds.pk}
    d = api.get(f"/api/v1/datasets/{ds.pk}/").json()
    assert (d["name"], d["n_rows"], d["n_columns"]) == ("visits", 3, 2)
    assert [(c["name"], c["type"]) for c in d["columns"]] == [("name", "string"), ("age", "integer")]
    r = api.post("/api/v1/sql/import/", {"url": source, "query": "SELECT age FROM visits WHERE age > 34",
                                         "name": "older"})
    polled = api.get(r.json()["poll"]).json()
    assert r.status_code == 202 and (polled["status"], polled["rows"], polled["total"]) == ("succeeded", 2, None)
    assert Dataset.objects.get(pk=polled["dataset"]).name == "older"


def test_refusals_before_any_import(user, source):
    api = api_for(user)
    for body, message in [
        ({"url": "sqlite:////tmp/x.db", "table": "t"}, "SQLite files cannot be opened"),
        ({"url": source, "query": "DELETE FROM visits"}, "only a SELECT"),
        ({"url": f"{source}?hostaddr=10.0.0.1", "table": "t"}, "parameter 'hostaddr' is refused"),
        ({"url": "nonsense", "table": "t"}, "url: the connection URL cannot be read"),
        ({"url": source}, "table: name the table to read"),
        ({"url": f"postgresql://{'u' * 1965}@127.0.0.1:5432/db", "table": "t"},  # 1,996: within the form's limit
         "the connection URL is 2,004 characters long (without its password), more than the limit of 2,000"),
    ]:
        r = api.post("/api/v1/sql/import/", body)
        assert r.status_code == 400 and message in r.json()["detail"], (body, r.json())
    assert not Dataset.objects.exists() and not SourceImport.objects.exists()
    assert api_for(None).post("/api/v1/sql/import/", {"url": source, "table": "visits"}).status_code == 401


def test_a_missing_table_fails_the_import_with_its_message_and_stores_nothing(user, source, eager_celery):  # noqa: F811
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": source, "table": "nothing", "password": "pw-given-apart"})
    assert r.status_code == 202
    polled = api.get(r.json()["poll"]).json()
    assert polled["status"] == "failed" and "the table 'nothing' does not exist" in polled["message"]
    assert polled["dataset"] is None and not Dataset.objects.exists() and not storage.media_files()
    assert SourceImport.objects.get().password == ""  # the password given apart is erased when it ends


@pytest.fixture
def silent_port(settings):
    """A loopback socket that accepts connections (the kernel's handshake) and never answers."""
    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = False, ["localhost"]
    settings.ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS = 2
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    yield server
    server.close()


def test_a_silent_server_never_holds_the_request(user, other_user, silent_port):
    """The POST answers 202 without connecting (nothing reached the socket); the worker's import then fails
    within the handshake limit naming it, nothing stored; others get 404 for the import."""
    api = api_for(user)
    port = silent_port.getsockname()[1]
    r = api.post("/api/v1/sql/import/", {"url": f"postgresql://reader@localhost:{port}/warehouse",
                                         "table": "patients"})
    assert r.status_code == 202, r.content
    body = r.json()
    assert (body["status"], body["rows"], body["phase"]) == ("queued", 0, "waiting for a worker")
    with pytest.raises(BlockingIOError):
        silent_port.accept()  # no connection was made by the request
    other = api_for(other_user)
    assert other.get(body["poll"]).status_code == 404
    assert other.post(f"{body['poll']}cancel/").status_code == 404
    source_imports.run(SourceImport.objects.get(pk=body["id"]))  # what the worker does
    polled = api.get(body["poll"]).json()
    assert polled["status"] == "failed"
    assert (f"localhost:{port} did not answer as a PostgreSQL server within 2 s "
            "(ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS)") in polled["message"]
    assert not Dataset.objects.exists() and not storage.media_files()


def test_cancel_a_queued_import(user, source):
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": source, "table": "visits"})
    assert r.status_code == 202 and r.json()["status"] == "queued"  # no worker takes it in the tests
    r = api.post(f"{r.json()['poll']}cancel/")
    assert r.status_code == 200 and (r.json()["status"], r.json()["message"]) == (
        "cancelled", "cancelled before it started")
    assert api.post(f"{r.json()['poll']}cancel/").json()["detail"] == "the import has already cancelled"
    imp = source_imports.run(SourceImport.objects.get(pk=r.json()["id"]))  # a late delivery does nothing
    assert imp.status == "cancelled" and not Dataset.objects.exists()


def test_export_a_run_as_a_job_and_the_download_formats(user, other_user, pg_url, eager_celery):  # noqa: F811
    job = finished_job(make_dataset(user), k=2)
    api = api_for(user)
    r = api.post(f"/api/v1/sql/export/{job.pk}/", {"url": pg_url, "table": "released", "password": "unused-pw"})
    assert r.status_code == 202, r.content
    export = r.json()
    assert (export["kind"], export["dataset"], export["poll"]) == ("sql-export", job.dataset_id,
                                                                  f"/api/v1/runs/{export['id']}/")
    assert r["Location"] == export["poll"]
    frame = exports.result_frame(job.result)
    polled = api.get(export["poll"]).json()
    assert (polled["status"], polled["progress"], polled["message"]) == ("succeeded", 1.0, "")
    assert polled["options"] == {"source_job": str(job.pk), "url": pg_url.replace("postgresql://",
                                 "postgresql+psycopg://"), "table": "released", "replace": False,
                                 "drop_suppressed": False, "rows": len(frame)}  # the password is gone
    assert sorted(tuple(str(v) for v in row) for row in pg_rows(pg_url, "SELECT * FROM released")[1]) == sorted(
        frame.itertuples(index=False))
    # an existing table: the job fails naming it, the table is left as it was
    r = api.post(f"/api/v1/sql/export/{job.pk}/", {"url": pg_url, "table": "released"})
    assert r.status_code == 202
    polled = api.get(r.json()["poll"]).json()
    assert polled["status"] == "failed" and "the table 'released' already exists" in polled["message"]
    assert pg_rows(pg_url, "SELECT count(*) FROM released")[1] == [(len(frame),)]
    # others: 404 for the run and for the export job
    assert api_for(other_user).post(f"/api/v1/sql/export/{job.pk}/", {"url": pg_url, "table": "x"}).status_code == 404
    assert api_for(other_user).get(export["poll"]).status_code == 404
    r = api.get(f"/api/v1/runs/{job.pk}/download/", {"format": "parquet"})
    assert r.status_code == 200  # the API download is the web download, ?format= included (api/runs.py)
    body = b"".join(r.streaming_content) if r.streaming else r.content
    assert pd.read_parquet(io.BytesIO(body)).astype(str).map(exports.neutralize).equals(
        frame.map(exports.neutralize).reset_index(drop=True))


def test_export_refusals_before_any_job(user, pg_url):
    job = finished_job(make_dataset(user), k=2)
    api = api_for(user)
    for body, message in [({"url": pg_url, "table": "bad name"}, "table: 'bad name': a table name is letters"),
                          ({"url": f"{pg_url}?host=10.0.0.1", "table": "t"}, "parameter 'host' is refused"),
                          ({"url": "sqlite:////tmp/x.db", "table": "t"}, "SQLite files cannot be opened")]:
        r = api.post(f"/api/v1/sql/export/{job.pk}/", body)
        assert r.status_code == 400 and message in r.json()["detail"], (body, r.json())
    assert list(Job.objects.values_list("pk", flat=True)) == [job.pk]


def test_production_default_refuses_every_server(user, source, settings):
    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = False, []
    job = finished_job(make_dataset(user), k=2)
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": source, "table": "visits"})
    assert r.status_code == 400 and "the setting ANONYMIZER_SQL_ALLOWED_HOSTS" in r.json()["detail"]
    assert not SourceImport.objects.exists()
    r = api.post(f"/api/v1/sql/export/{job.pk}/", {"url": source, "table": "released"})
    assert r.status_code == 400 and "the setting ANONYMIZER_SQL_ALLOWED_HOSTS" in r.json()["detail"]
    assert list(Dataset.objects.values_list("pk", flat=True)) == [job.dataset_id]
    assert list(Job.objects.values_list("pk", flat=True)) == [job.pk]  # no export job
    assert pg_rows(source, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")[1] == [(1,)]
