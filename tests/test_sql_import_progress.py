"""A long SQL import shows its progress: the rows read so far (of how many when the table is counted),
reported by the service's callback and streamed by the import and re-import pages a line per chunk; a page
left (cancel) or a failure after the first chunk leaves nothing stored; the re-import is owner-only."""

from __future__ import annotations

import threading
from unittest import mock

import pytest
from django.core.signals import request_finished
from django.test import Client

from anonymizer_app.engine import Cancelled
from anonymizer_app.models import Dataset
from anonymizer_app.services import datasets, sql, storage
from anonymizer_app.views import sources_sql
from tests import sql_helpers
from tests.sql_helpers import pg_execute

pg_url = sql_helpers.pg_url  # the fixture
pytestmark = pytest.mark.django_db


@pytest.fixture
def five(pg_url, monkeypatch):
    """Five rows read two at a time: chunks of 2, 2 and 1."""
    pg_execute(pg_url, "CREATE TABLE five (id integer, name text)",
               "INSERT INTO five VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
    monkeypatch.setattr(sql, "CHUNK_ROWS", 2)
    return pg_url


def nothing_stored() -> bool:
    return not Dataset.objects.exists() and not storage.media_files()


def wait_for_readers() -> None:
    for thread in threading.enumerate():
        if thread.name == "sql-import":
            thread.join(timeout=60)


def test_the_callback_reports_the_rows_read_and_the_count(five, user):
    seen: list[int] = []
    staged = sql.stage_import(five, table="five", progress=seen.append)
    assert seen == [2, 4, 5] and (staged.n_rows, staged.columns) == (5, ["id", "name"])
    assert not Dataset.objects.exists()  # staging touches no app database
    ds = sql.store_import(user, staged, five, table="five")
    assert datasets.load_frame(ds).values.tolist() == [["1", "a"], ["2", "b"], ["3", "c"], ["4", "d"], ["5", "e"]]
    assert not staged.staging.exists()
    assert sql.count_rows(five, "five") == 5
    assert sql.count_rows(five, "") is None  # a query is not run twice to count it
    assert sql.count_rows(five, "nothing") is None
    assert sql.count_rows(five, "a.b.c") is None
    with pytest.raises(sql.SqlError, match="cannot connect to 127.0.0.1:1"):
        sql.count_rows("postgresql://x@127.0.0.1:1/db", "t")


def test_an_unreachable_server_is_the_form_page_at_once(client_alice, five):
    response = client_alice.post("/datasets/import-sql/", {"url": "postgresql://x@127.0.0.1:1/db", "source": "table",
                                                           "table": "t"})
    assert response.status_code == 400 and "cannot connect to 127.0.0.1:1" in response.content.decode()
    assert nothing_stored()


def test_a_callback_that_cancels_leaves_nothing(five, user):
    def cancel(rows: int) -> None:
        if rows >= 4:
            raise Cancelled("stop")

    with pytest.raises(Cancelled):
        sql.import_dataset(user, five, table="five", progress=cancel)
    assert nothing_stored()


def test_the_page_streams_a_line_per_chunk_then_stores(client_alice, user, five):
    response = client_alice.post("/datasets/import-sql/", {"url": five, "source": "table", "table": "five",
                                                           "name": "Five <rows>"})
    assert response.status_code == 200 and response.streaming
    page = b"".join(response.streaming_content).decode()
    ds = Dataset.objects.get(owner=user)
    assert [line for line in page.split("\n") if line.startswith("<li>")] == [
        "<li>[ 40%] read 2 of 5 rows</li>", "<li>[ 80%] read 4 of 5 rows</li>", "<li>[100%] read 5 of 5 rows</li>"]
    assert f'url=/datasets/{ds.pk}/"' in page and "Imported Five &lt;rows&gt;: 5 rows, 2 columns." in page
    assert 'id="sql-cancel" ' not in page and 'href="/datasets/import-sql/" id="sql-cancel"' in page
    assert (ds.name, ds.n_rows) == ("Five <rows>", 5)


def test_a_query_is_streamed_without_a_total(client_alice, user, five):
    response = client_alice.post("/datasets/import-sql/", {"url": five, "source": "query",
                                                           "query": "SELECT name FROM five WHERE id > 1"})
    page = b"".join(response.streaming_content).decode()
    assert [line for line in page.split("\n") if line.startswith("<li>")] == [
        "<li>read 2 rows</li>", "<li>read 4 rows</li>"]
    assert Dataset.objects.get(owner=user).n_rows == 4


def test_one_chunk_or_an_early_failure_answers_at_once(client_alice, user, five):
    response = client_alice.post("/datasets/import-sql/", {"url": five, "source": "query",
                                                           "query": "SELECT name FROM five WHERE id = 1"})
    assert response.status_code == 302 and Dataset.objects.get(owner=user).n_rows == 1
    response = client_alice.post("/datasets/import-sql/", {"url": five, "source": "table", "table": "nothing"})
    assert response.status_code == 400 and "the table &#x27;nothing&#x27; does not exist" in response.content.decode()


def test_a_failure_after_the_first_chunk_is_shown_and_stores_nothing(client_alice, five):
    query = "SELECT name, CASE WHEN id = 3 THEN '\\x00ff'::bytea END AS b FROM five ORDER BY id"
    response = client_alice.post("/datasets/import-sql/", {"url": five, "source": "query", "query": query})
    page = b"".join(response.streaming_content).decode()
    assert "<li>read 2 rows</li>" in page
    assert "Importing from a database failed: the query" in page and "row 3, column &#x27;b&#x27;: binary data" in page
    wait_for_readers()
    assert nothing_stored()


def leave(response) -> None:
    """Close a streamed response as the server does when the client goes away, without its request_finished
    signal: that runs close_old_connections, which closes the test's own database connection on PostgreSQL (a
    test transaction is not autocommit), and the test client's wrapper reconnects the receiver mid-close."""
    with mock.patch.object(request_finished, "send"):
        response.close()


def test_leaving_the_page_cancels_and_stores_nothing(client_alice, five, monkeypatch):
    left = threading.Event()
    progress = sources_sql.Beside.progress
    calls: list[int] = []

    def held(self, rows: int) -> None:  # the second chunk waits until the page is left: a cut mid-way
        calls.append(rows)
        if rows > 2:
            left.wait(timeout=60)
        progress(self, rows)

    monkeypatch.setattr(sources_sql.Beside, "progress", held)
    response = client_alice.post("/datasets/import-sql/", {"url": five, "source": "table", "table": "five"})
    assert response.streaming
    leave(response)  # what the server does when the client goes away (the Cancel link, the tab closed)
    left.set()
    wait_for_readers()
    assert calls == [2, 4] and nothing_stored()  # stopped at the second chunk
    monkeypatch.setattr(sources_sql.Beside, "progress", progress)
    response = client_alice.post("/datasets/import-sql/", {"url": five, "source": "table", "table": "five"})
    lines = iter(response.streaming_content)
    assert b"Importing from a database" in next(lines)
    leave(response)  # after the first line
    wait_for_readers()
    assert nothing_stored()


def test_a_reading_closed_before_its_first_chunk_stops_there(five):
    reading = sources_sql.reading(five, "five", "", None)
    reading.closed = True
    reading.start()
    wait_for_readers()
    events = []
    while not reading.events.empty():
        events.append(reading.events.get())
    assert events[0] == ("total", 5)
    assert events[1][0] == "error" and isinstance(events[1][1], Cancelled) and len(events) == 2
    assert not storage.media_files()


def test_the_reimport_streams_too_and_is_owner_only(client_alice, user, other_user, five):
    assert client_alice.post("/datasets/import-sql/", {"url": five, "source": "query",
                                                       "query": "SELECT * FROM five WHERE id = 1"}).status_code == 302
    first = Dataset.objects.get(owner=user)
    first.sql_source = {"url": first.sql_source["url"], "table": "five"}
    first.save()
    bob = Client()
    bob.force_login(other_user)
    assert bob.post(f"/datasets/{first.pk}/reimport-sql/").status_code == 404
    response = client_alice.post(f"/datasets/{first.pk}/reimport-sql/")
    page = b"".join(response.streaming_content).decode()
    fresh = Dataset.objects.exclude(pk=first.pk).get(owner=user)
    assert "<li>[100%] read 5 of 5 rows</li>" in page and f'href="/datasets/{first.pk}/" id="sql-cancel"' in page
    assert fresh.n_rows == 5 and f"url=/datasets/{fresh.pk}/" in page
    assert not Dataset.objects.filter(owner=other_user).exists()


@pytest.fixture
def job(user):
    from tests.anonymizer_helpers import finished_job, make_dataset

    return finished_job(make_dataset(user), k=2)


def test_the_export_streams_batches_written_and_the_table_appears_at_the_end(client_alice, job, pg_url,
                                                                              monkeypatch):
    from anonymizer_app.services import exports
    from tests.sql_helpers import pg_rows

    monkeypatch.setattr(sql, "INSERT_ROWS", 2)
    n = len(exports.result_frame(job.result))
    assert n > 2  # more than one batch
    seen: list[int] = []
    frame = exports.result_frame(job.result)
    sql.write_table(frame, pg_url, "direct", exports.column_kinds(frame, None), progress=seen.append)
    assert seen == [min(i, n) for i in range(2, n + 2, 2)]
    response = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "released"})
    assert response.streaming
    page = b"".join(response.streaming_content).decode()
    lines = [line for line in page.split("\n") if line.startswith("<li>")]
    assert lines == [f"<li>[{round(r * 100 / n):3d}%] wrote {r:,} of {n:,} rows</li>" for r in seen]
    assert f"Wrote {n:,} rows to the table released at" in page and f"url=/jobs/{job.pk}/result/" in page
    assert pg_rows(pg_url, "SELECT count(*) FROM released")[1] == [(n,)]
    # an early refusal is the form page, as for a small result
    again = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "released"})
    assert again.status_code == 400 and "already exists" in again.content.decode()


def test_leaving_the_export_page_leaves_no_table(client_alice, job, pg_url, monkeypatch):
    from tests.sql_helpers import pg_rows

    monkeypatch.setattr(sql, "INSERT_ROWS", 2)
    left = threading.Event()
    progress = sources_sql.Beside.progress

    def held(self, rows: int) -> None:  # the second batch waits until the page is left: a cut mid-way
        if rows > 2:
            left.wait(timeout=60)
        progress(self, rows)

    monkeypatch.setattr(sources_sql.Beside, "progress", held)
    response = client_alice.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "released"})
    assert response.streaming
    response.close()
    left.set()
    for thread in threading.enumerate():
        if thread.name == "sql-export":
            thread.join(timeout=60)
    assert pg_rows(pg_url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")[1] == [(0,)]


def test_the_export_page_is_owner_only(client, job, other_user, pg_url):
    client.force_login(other_user)
    assert client.post(f"/jobs/{job.pk}/result/export-sql/", {"url": pg_url, "table": "t"}).status_code == 404
