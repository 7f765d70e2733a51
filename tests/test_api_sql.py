"""API SQL endpoints: a PostgreSQL table (or a query) imported as a dataset, a run's published rows written to
a new table by a job (202, polled at /api/v1/runs/<id>/); the web checks (SQLite refused, one SELECT, URL
parameters) before any job; owner-only (404), no key 401; the download formats."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from api_helpers import api_for, eager_celery  # noqa: F401

from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import exports
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


def test_import_a_table_and_a_query(user, source):
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": source, "table": "visits", "keep_password": False})
    assert r.status_code == 201, r.content
    d = r.json()
    assert (d["name"], d["n_rows"], d["n_columns"]) == ("visits", 3, 2)
    assert [(c["name"], c["type"]) for c in d["columns"]] == [("name", "string"), ("age", "integer")]
    r = api.post("/api/v1/sql/import/", {"url": source, "query": "SELECT age FROM visits WHERE age > 34",
                                         "name": "older"})
    assert r.status_code == 201 and r.json()["n_rows"] == 2


def test_refusals(user, source):
    api = api_for(user)
    for body, message in [
        ({"url": "sqlite:////tmp/x.db", "table": "t"}, "SQLite files cannot be opened"),
        ({"url": source, "query": "DELETE FROM visits"}, "only a SELECT"),
        ({"url": source, "table": "nothing"}, "the table 'nothing' does not exist"),
        ({"url": "nonsense", "table": "t"}, "url: the connection URL cannot be read"),
        ({"url": source}, "table: name the table to read"),
    ]:
        r = api.post("/api/v1/sql/import/", body)
        assert r.status_code == 400 and message in r.json()["detail"], (body, r.json())
    assert not Dataset.objects.exists()
    assert api_for(None).post("/api/v1/sql/import/", {"url": source, "table": "visits"}).status_code == 401


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
    r = api.post(f"/api/v1/sql/export/{job.pk}/", {"url": source, "table": "released"})
    assert r.status_code == 400 and "the setting ANONYMIZER_SQL_ALLOWED_HOSTS" in r.json()["detail"]
    assert list(Dataset.objects.values_list("pk", flat=True)) == [job.dataset_id]
    assert list(Job.objects.values_list("pk", flat=True)) == [job.pk]  # no export job
    assert pg_rows(source, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")[1] == [(1,)]
