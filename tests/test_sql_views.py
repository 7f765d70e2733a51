"""The SQL pages: importing a table or a query as a dataset (web checks on: SQLite refused, the app's own
database refused, at once on the form), run as an import job with a page of its own; exporting a result to a
new table as a job; owner-only, errors shown escaped, nothing half-stored. Jobs run eagerly (in the request
that queues them)."""

from __future__ import annotations

import pytest
from api_helpers import eager_celery  # noqa: F401  (the fixture)
from django.contrib.messages import get_messages

from anonymizer_app.models import Dataset, Job, SourceImport
from anonymizer_app.services import connections, sql, storage
from tests import sql_helpers
from tests.anonymizer_helpers import finished_job, make_dataset
from tests.sql_helpers import pg_execute, pg_rows

pg_url = sql_helpers.pg_url  # the fixture
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


def import_page(client, response):
    """The import's page the form redirected to, and the import."""
    imp = SourceImport.objects.latest("created")
    assert response.status_code == 302 and response["Location"] == f"/datasets/imports/{imp.pk}/"
    return client.get(response["Location"]).content.decode(), imp


@pytest.fixture
def source(pg_url):
    pg_execute(pg_url, "CREATE TABLE visits (name text, age integer, zip text)",
               "INSERT INTO visits VALUES ('Ann', 34, '10115'), ('Bob', 36, '10117'), ('Cid', 35, '10119')")
    return pg_url


def test_the_datasets_page_links_the_import(client_alice):
    page = client_alice.get("/").content.decode()
    assert 'href="/datasets/import-sql/"' in page and "Import from a database" in page
    assert client_alice.get("/datasets/import-sql/").status_code == 200


def test_import_a_table_and_a_query(client_alice, user, source):
    response = client_alice.post("/datasets/import-sql/", {"url": source, "password": "", "source": "table",
                                                           "table": "visits", "name": ""})
    page, imp = import_page(client_alice, response)
    ds = Dataset.objects.get(owner=user)
    assert (imp.status, imp.dataset_id, imp.rows, imp.total) == ("succeeded", ds.pk, 3, 3)
    assert (ds.name, ds.n_rows, ds.n_columns) == ("visits", 3, 3)
    assert f'href="/datasets/{ds.pk}/" id="import-dataset-link"' in page and "Imported: 3 rows, 3 columns." in page
    status = client_alice.get(f"/datasets/imports/{imp.pk}/status/").json()
    assert status == {"status": "succeeded", "progress": 1.0, "rows": 3, "total": 3,
                      "phase": "imported 3 rows, 3 columns", "message": "", "finished": True,
                      "result_url": f"/datasets/{ds.pk}/"}
    response = client_alice.post("/datasets/import-sql/", {"url": source, "source": "query", "name": "Young",
                                                           "query": "SELECT name, age FROM visits WHERE age < 36"})
    assert response.status_code == 302
    young = Dataset.objects.get(owner=user, name="Young")
    assert young.n_rows == 2 and young.sql_source["query"] == "SELECT name, age FROM visits WHERE age < 36"


def test_refusals_are_shown_escaped_and_store_nothing(client_alice, source, monkeypatch):
    at_once = [  # needs no connection: the form page
        ({"url": "sqlite:////etc/passwd.db", "source": "table", "table": "t"}, "SQLite files cannot be opened"),
        ({"url": source, "source": "query", "query": "DROP TABLE visits"}, "only a SELECT"),
        ({"url": source, "source": "query", "query": "SELECT 1; SELECT 2"}, "only one statement"),
        ({"url": "oracle://x@h/db", "source": "table", "table": "t"}, "is not supported"),
        ({"url": source, "source": "table", "table": ""}, "name the table to read"),
        ({"url": f"{source}?hostaddr=10.0.0.1", "source": "table", "table": "t"}, "parameter &#x27;hostaddr&#x27;"),
    ]
    for data, message in at_once:
        response = client_alice.post("/datasets/import-sql/", data)
        page = response.content.decode()
        assert response.status_code == 400 and message in page, (data, page[:200])
    assert not SourceImport.objects.exists()
    on_the_worker = [  # the database answers: the import fails, its page says why
        ({"url": source, "source": "table", "table": "nothing"}, "the table &#x27;nothing&#x27; does not exist"),
        ({"url": source, "source": "query", "query": "SELECT '<b>x</b>' FROM nothing"},
         "SELECT &#x27;&lt;b&gt;x&lt;/b&gt;&#x27; FROM nothing"),
    ]
    for data, message in on_the_worker:
        page, imp = import_page(client_alice, client_alice.post("/datasets/import-sql/", data))
        assert imp.status == "failed" and 'id="job-message"' in page and message in page, (data, page[:200])
        assert "The import failed:" in page and "<b>x</b>" not in page
    own = [("postgresql", {"this machine"}, 5432, source.rsplit("/", 1)[1])]
    monkeypatch.setattr(connections, "own_servers", lambda databases=None: own)
    response = client_alice.post("/datasets/import-sql/", {"url": source, "source": "table", "table": "visits"})
    assert response.status_code == 400 and "the app&#x27;s own database" in response.content.decode()
    assert not Dataset.objects.exists() and not storage.media_files()
    assert pg_rows(source, "SELECT count(*) FROM visits")[1] == [(3,)]


def test_the_password_field_is_never_shown_back(client_alice, source):
    response = client_alice.post("/datasets/import-sql/", {"url": source, "password": "hunter2-secret",
                                                           "source": "query", "query": "DROP TABLE x"})
    assert response.status_code == 400 and "hunter2-secret" not in response.content.decode()
    response = client_alice.post("/datasets/import-sql/", {"url": source, "password": "hunter2-secret",
                                                           "source": "table", "table": "nothing"})
    page, imp = import_page(client_alice, response)
    assert imp.status == "failed" and "hunter2-secret" not in page and imp.password == ""


def test_the_import_pages_are_owner_only(client_alice, user, other_user, source):
    from django.test import Client

    from anonymizer_app.services import source_imports

    imp = source_imports.create_sql(user, source, table="visits")  # created, not queued: it waits
    bob = Client()
    bob.force_login(other_user)
    for url in (f"/datasets/imports/{imp.pk}/", f"/datasets/imports/{imp.pk}/status/"):
        assert bob.get(url).status_code == 404
    assert bob.post(f"/datasets/imports/{imp.pk}/cancel/").status_code == 404
    imp.refresh_from_db()
    assert (imp.status, imp.cancel_requested) == ("queued", False)
    page = client_alice.get(f"/datasets/imports/{imp.pk}/").content.decode()
    assert 'id="import-cancel"' in page and "waiting for a worker" in page
    response = client_alice.post(f"/datasets/imports/{imp.pk}/cancel/", follow=True)
    assert "Import cancelled; nothing was stored." in response.content.decode()
    imp.refresh_from_db()
    assert (imp.status, imp.message) == ("cancelled", "cancelled before it started")
    assert not Dataset.objects.exists()


@pytest.fixture
def job(user):
    return finished_job(make_dataset(user), k=2)


def test_export_a_result_to_a_new_table(client_alice, job, pg_url):
    from anonymizer_app.services import exports

    page = client_alice.get(f"/jobs/{job.pk}/result/export-sql/")
    assert page.status_code == 200
    response = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "released"})
    export = Job.objects.get(kind=Job.SQL_EXPORT)
    assert response.status_code == 302 and response["Location"] == f"/jobs/{export.pk}/"
    assert export.status == "succeeded" and export.options["rows"] == len(exports.result_frame(job.result))
    status = client_alice.get(f"/jobs/{export.pk}/status/").json()
    assert status["result_url"] == f"/jobs/{job.pk}/result/"  # back to the run whose rows it wrote
    page = client_alice.get(f"/jobs/{export.pk}/").content.decode()
    assert f'href="/jobs/{job.pk}/result/" id="result-link"' in page and "Export to a database table" in page
    frame = exports.result_frame(job.result)
    names, rows = pg_rows(pg_url, "SELECT * FROM released")
    assert names == list(frame.columns)
    assert sorted(tuple(str(v) for v in r) for r in rows) == sorted(frame.itertuples(index=False))
    again = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "released"})
    failed = Job.objects.filter(kind=Job.SQL_EXPORT).exclude(pk=export.pk).get()
    assert again["Location"] == f"/jobs/{failed.pk}/" and failed.status == "failed"
    assert "the table &#x27;released&#x27; already exists" in client_alice.get(again["Location"]).content.decode()
    bad = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "<script>x"})
    assert bad.status_code == 400 and "<script>x" not in bad.content.decode()
    web_sqlite = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": "sqlite:////tmp/x.db", "table": "t"})
    assert web_sqlite.status_code == 400 and "SQLite files cannot be opened" in web_sqlite.content.decode()
    assert Job.objects.filter(kind=Job.SQL_EXPORT).count() == 2


def test_export_is_owner_only(client, job, other_user, pg_url):
    client.force_login(other_user)
    assert client.get(f"/jobs/{job.pk}/result/export-sql/").status_code == 404
    assert client.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "t"}).status_code == 404
    assert pg_rows(pg_url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")[1] == [(0,)]


def test_reimport_a_new_dataset_from_the_same_source(client_alice, user, other_user, source):
    from django.test import Client

    client_alice.post("/datasets/import-sql/", {"url": source.replace("postgres@", "postgres:pw<x>@"),
                                                "source": "table", "table": "visits", "keep_password": "on"})
    first = Dataset.objects.get(owner=user)
    page = client_alice.get(f"/datasets/{first.pk}/").content.decode()
    assert "Imported from a database" in page and "kept, encrypted" in page and "pw&lt;x&gt;" not in page
    assert "pw<x>" not in page and source.rsplit("/", 1)[1] in page
    pg_execute(source, "INSERT INTO visits VALUES ('Dee', 52, '20095')")
    response = client_alice.post(f"/datasets/{first.pk}/reimport-sql/")
    page, imp = import_page(client_alice, response)
    fresh = Dataset.objects.exclude(pk=first.pk).get(owner=user)
    assert imp.dataset_id == fresh.pk and imp.keep_password and imp.password == ""
    assert (first.n_rows, fresh.n_rows) == (3, 4) and fresh.sql_source["password"] and fresh.name == first.name
    bob = Client()
    bob.force_login(other_user)
    assert bob.post(f"/datasets/{first.pk}/reimport-sql/").status_code == 404
    pg_execute(source, "DROP TABLE visits")
    page, imp = import_page(client_alice, client_alice.post(f"/datasets/{first.pk}/reimport-sql/"))
    assert imp.status == "failed" and "the table &#x27;visits&#x27; does not exist" in page
    assert Dataset.objects.filter(owner=user).count() == 2


def test_production_default_refuses_every_server_naming_the_setting(client_alice, user, job, source, settings):
    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = False, []
    message = "until the administrator lists the ones allowed in the setting ANONYMIZER_SQL_ALLOWED_HOSTS"
    page = client_alice.get("/datasets/import-sql/").content.decode()
    assert 'id="sql-servers-refused"' in page and message in page
    response = client_alice.post("/datasets/import-sql/", {"url": source, "source": "table", "table": "visits"})
    assert response.status_code == 400 and message in response.content.decode()
    assert message in client_alice.get(f"/jobs/{job.pk}/result/export-sql/").content.decode()
    response = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": source, "table": "released"})
    assert response.status_code == 400 and message in response.content.decode()
    assert not Dataset.objects.exclude(pk=job.dataset_id).exists() and not SourceImport.objects.exists()
    assert pg_rows(source, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")[1] == [(1,)]
    imported = Dataset.objects.create(owner=user, name="visits", original_name="visits.csv",
                                      sql_source={"url": sql.public_url(source), "table": "visits"})
    response = client_alice.post(f"/datasets/{imported.pk}/reimport-sql/")
    assert response.status_code == 302 and response["Location"] == f"/datasets/{imported.pk}/"
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    assert shown == [f"The re-import failed: database servers cannot be named from the web app on this server "
                     f"{message}{sql.servers_refusal().split('ANONYMIZER_SQL_ALLOWED_HOSTS', 1)[1]}"]
    assert Dataset.objects.filter(owner=user).count() == 2
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = ["127.0.0.1"]  # the administrator lists the server
    assert 'id="sql-servers-refused"' not in client_alice.get("/datasets/import-sql/").content.decode()
    response = client_alice.post("/datasets/import-sql/", {"url": source, "source": "table", "table": "visits"})
    assert response.status_code == 302


def test_development_keeps_any_server(client_alice, source, settings):
    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = True, []
    assert 'id="sql-servers-refused"' not in client_alice.get("/datasets/import-sql/").content.decode()
    response = client_alice.post("/datasets/import-sql/", {"url": source, "source": "table", "table": "visits"})
    assert response.status_code == 302
