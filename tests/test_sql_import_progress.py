"""A long SQL import is a job (models.SourceImport, services/source_imports.py): the rows read so far (of how
many when the table is counted) are written to its row a chunk at a time, a cancel stops it at the next
chunk, a failure, a time limit or a dead worker ends it with the reason; in every ending but success nothing
is stored (no dataset, no file) and the password given apart is erased. The export's progress callback."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from anonymizer_app.engine import Cancelled
from anonymizer_app.models import Dataset, SourceImport
from anonymizer_app.services import datasets, jobs, source_imports, sql, storage
from tests import sql_helpers
from tests.sql_helpers import pg_execute

pg_url, mariadb_url = sql_helpers.pg_url, sql_helpers.mariadb_url  # the fixtures
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


@pytest.fixture
def seen(monkeypatch):
    """The import's row as the worker left it after each chunk (read back from the database): (status,
    rows, total, phase)."""
    rows: list[tuple] = []
    checked = source_imports._cancelled

    def record(pk) -> bool:
        imp = SourceImport.objects.get(pk=pk)
        rows.append((imp.status, imp.rows, imp.total, imp.phase))
        return checked(pk)

    monkeypatch.setattr(source_imports, "_cancelled", record)
    return rows


def test_the_callback_reports_the_rows_read_and_the_count(five, user):
    read: list[int] = []
    staged = sql.stage_import(five, table="five", progress=read.append)
    assert read == [2, 4, 5] and (staged.n_rows, staged.columns) == (5, ["id", "name"])
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


def test_a_callback_that_cancels_leaves_nothing(five, user):
    def cancel(rows: int) -> None:
        if rows >= 4:
            raise Cancelled("stop")

    with pytest.raises(Cancelled):
        sql.import_dataset(user, five, table="five", progress=cancel)
    assert nothing_stored()


def test_the_progress_is_written_to_the_import_a_chunk_at_a_time(five, user, seen):
    imp = source_imports.create_sql(user, five.replace("postgres@", "postgres:pw@"), table="five", name="Five")
    assert imp.password and "pw" not in imp.url and imp.phase == "waiting for a worker"
    imp = source_imports.run(imp)
    assert seen == [("running", 2, 5, "read 2 of 5 rows of five"), ("running", 4, 5, "read 4 of 5 rows of five"),
                    ("running", 5, 5, "read 5 of 5 rows of five"), ("running", 5, 5, "read 5 of 5 rows of five")]
    ds = Dataset.objects.get(owner=user)
    assert (imp.status, imp.dataset_id, imp.rows, imp.total, imp.phase, imp.password, imp.staging) == (
        "succeeded", ds.pk, 5, 5, "imported 5 rows, 2 columns", "", "")
    assert (ds.name, ds.n_rows, source_imports.fraction(imp)) == ("Five", 5, 1.0)
    assert imp.started is not None and imp.finished is not None


def test_a_query_has_no_total(five, user, seen):
    imp = source_imports.run(source_imports.create_sql(user, five, query="SELECT name FROM five WHERE id > 1"))
    assert [s[1:] for s in seen[:2]] == [(2, None, "read 2 rows of the query"), (4, None, "read 4 rows of the query")]
    assert (imp.status, imp.rows, imp.total) == ("succeeded", 4, None)
    assert Dataset.objects.get(owner=user).n_rows == 4


def test_an_unreachable_server_fails_the_import_and_stores_nothing(five, user):
    imp = source_imports.run(source_imports.create_sql(user, "postgresql://x@127.0.0.1:1/db", table="t"))
    assert imp.status == "failed" and imp.message.startswith("cannot connect to 127.0.0.1:1")
    assert imp.dataset_id is None and nothing_stored()


def test_cancel_while_it_reads_stops_at_the_next_chunk_and_stores_nothing(five, user, seen, monkeypatch):
    imp = source_imports.create_sql(user, five, table="five", password="pw")
    checked = source_imports._cancelled

    def cancel_at_the_second_chunk(pk) -> bool:
        if SourceImport.objects.get(pk=pk).rows == 4:
            assert source_imports.cancel(SourceImport.objects.get(pk=pk)) is False  # running: asked, not ended
        return checked(pk)

    monkeypatch.setattr(source_imports, "_cancelled", cancel_at_the_second_chunk)
    imp = source_imports.run(imp)
    assert (imp.status, imp.message, imp.rows, imp.password) == (
        "cancelled", "cancelled by the user; nothing was stored", 4, "")
    assert nothing_stored()


def test_a_failure_after_the_first_chunk_stores_nothing(five, user):
    query = "SELECT name, CASE WHEN id = 3 THEN '\\x00ff'::bytea END AS b FROM five ORDER BY id"
    imp = source_imports.run(source_imports.create_sql(user, five, query=query))
    assert imp.status == "failed" and imp.rows == 2
    assert "row 3, column 'b': binary data cannot be anonymized" in imp.message
    assert nothing_stored()


def test_the_time_limit_fails_it_naming_the_setting(five, user, settings, monkeypatch):
    from billiard.exceptions import SoftTimeLimitExceeded

    settings.ANONYMIZER_JOB_TIME_LIMITS = {"sql-import": 30}
    files: list[str] = []

    def slow(rows: int) -> None:  # the soft limit's exception arrives while the second chunk is read
        if rows == 4:
            # the first chunk is written on a thread of its own (ingestion.write_parquet), submitted before the
            # second chunk is read: under load its file may not be there yet when this runs, so wait for it
            deadline = time.monotonic() + 30
            while not storage.media_files() and time.monotonic() < deadline:
                time.sleep(0.01)
            files.extend(name for name, _ in storage.media_files())
            raise SoftTimeLimitExceeded()

    real = sql.stage_import
    monkeypatch.setattr(sql, "stage_import", lambda *a, progress=None, **k: real(*a, progress=slow, **k))
    imp = source_imports.run(source_imports.create_sql(user, five, table="five"))
    assert (imp.status, imp.message) == ("failed", "stopped after 30 s: the time limit for sql-import jobs (setting "
                                                   "ANONYMIZER_JOB_TIME_LIMIT_SQL_IMPORT_SECONDS); nothing was stored")
    assert files and all(name.startswith("tables/.staging-") for name in files)  # the table being staged, then gone
    assert nothing_stored() and imp.staging == ""


def test_an_import_job_from_mariadb_with_progress_and_a_cancel(mariadb_url, user, seen, monkeypatch):
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", user="root", password="", database=mariadb_url.rsplit("/", 1)[1],
                           autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE five (id int, name varchar(10))")
        cur.execute("INSERT INTO five VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
    conn.close()
    monkeypatch.setattr(sql, "CHUNK_ROWS", 2)
    imp = source_imports.run(source_imports.create_sql(user, mariadb_url, table="five"))
    assert [s[1:3] for s in seen] == [(2, 5), (4, 5), (5, 5), (5, 5)]
    ds = Dataset.objects.get(owner=user)
    assert (imp.status, imp.dataset_id, imp.url) == ("succeeded", ds.pk, mariadb_url.replace("mysql://",
                                                                                                "mysql+pymysql://"))
    assert datasets.load_frame(ds).values.tolist() == [["1", "a"], ["2", "b"], ["3", "c"], ["4", "d"], ["5", "e"]]
    checked = source_imports._cancelled
    monkeypatch.setattr(source_imports, "_cancelled", lambda pk: SourceImport.objects.filter(pk=pk).update(
        cancel_requested=True) and checked(pk))
    imp = source_imports.run(source_imports.create_sql(user, mariadb_url, query="SELECT name FROM five"))
    assert (imp.status, imp.rows) == ("cancelled", 2)  # stopped at the first chunk
    assert Dataset.objects.filter(owner=user).count() == 1 and len(storage.media_files()) == 2  # ds's own files


def test_the_hard_limit_settles_a_killed_import(user, settings):
    """What tasks.SourceImportRequest.on_timeout does when the hard limit killed the reading process."""
    from unittest import mock

    from celery.worker.request import Request
    from django.db import connection

    from anonymizer_app.tasks import SourceImportRequest

    settings.ANONYMIZER_JOB_TIME_LIMITS = {"sql-import": 30}
    settings.ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS = 10
    staging = storage.staging_path()
    storage.make_folder(staging.parent)
    staging.write_bytes(b"a staged table")
    imp = SourceImport.objects.create(owner=user, url="postgresql+psycopg://x@127.0.0.1:5432/db", table="t",
                                      status="running", staging=staging.relative_to(storage.media_root()).as_posix())
    request = SourceImportRequest.__new__(SourceImportRequest)  # the worker's view of the message: its args
    with mock.patch.object(SourceImportRequest, "args", new_callable=mock.PropertyMock, return_value=[str(imp.pk)]), \
            mock.patch.object(Request, "on_timeout"), \
            mock.patch.object(connection, "close"):  # the handler's thread closes its own, here the test's
        request.on_timeout(False, 40)
    imp.refresh_from_db()
    assert (imp.status, imp.message) == ("failed", "stopped after 40 s: the time limit for sql-import jobs (setting "
                                                   "ANONYMIZER_JOB_TIME_LIMIT_SQL_IMPORT_SECONDS); nothing was stored")
    assert not staging.exists()


def test_a_dead_workers_import_is_failed_by_the_sweep_and_its_staged_file_removed(user, settings):
    staging = storage.staging_path()
    storage.make_folder(staging.parent)
    staging.write_bytes(b"a staged table")
    half = staging.with_name(f".{staging.name}.4242.tmp")  # what AtomicParquet leaves when its process dies
    half.write_bytes(b"half a table")
    old = timezone.now() - timedelta(seconds=settings.ANONYMIZER_JOB_STALE_SECONDS + 5)
    name = staging.relative_to(storage.media_root()).as_posix()
    dead = SourceImport.objects.create(owner=user, url="postgresql+psycopg://x@127.0.0.1:5432/db", table="t",
                                       status="running", started=old, heartbeat=old, staging=name, password="token")
    live = SourceImport.objects.create(owner=user, url="postgresql+psycopg://x@127.0.0.1:5432/db", table="t",
                                       status="running", started=old, heartbeat=timezone.now())
    out = jobs.sweep_stale_jobs()
    assert out["imports_failed"] == [str(dead.pk)]
    dead.refresh_from_db()
    assert (dead.status, dead.message, dead.password, dead.staging) == (
        "failed", "the worker running it stopped (killed, out of memory or shut down); nothing was stored: import "
        "again", "", "")
    assert not staging.exists() and not half.exists() and not storage.media_files()
    assert SourceImport.objects.get(pk=live.pk).status == "running"
    assert "imports_failed" not in jobs.sweep_stale_jobs()  # nothing more to sweep


def test_erasing_the_account_erases_its_imports(five, user, other_user, django_capture_on_commit_callbacks):
    from anonymizer_app.services import erasure

    source_imports.run(source_imports.create_sql(user, five, table="five"))
    kept = source_imports.create_sql(other_user, five, table="five")
    with django_capture_on_commit_callbacks(execute=True):
        erasure.erase_user(user)
    assert list(SourceImport.objects.values_list("pk", flat=True)) == [kept.pk]
    assert not Dataset.objects.exists() and not storage.media_files()


def test_the_export_callback_reports_the_batches_written(user, pg_url, monkeypatch):
    from anonymizer_app.services import exports
    from tests.anonymizer_helpers import finished_job, make_dataset
    from tests.sql_helpers import pg_rows

    job = finished_job(make_dataset(user), k=2)
    monkeypatch.setattr(sql, "INSERT_ROWS", 2)
    frame = exports.result_frame(job.result)
    n = len(frame)
    assert n > 2  # more than one batch
    written: list[int] = []
    assert sql.write_table(frame, pg_url, "direct", exports.column_kinds(frame, None), progress=written.append) == n
    assert written == [min(i, n) for i in range(2, n + 2, 2)]
    assert pg_rows(pg_url, "SELECT count(*) FROM direct")[1] == [(n,)]


# ---- through a real Celery worker -----------------------------------------------------------------------------
SUBMIT_IMPORT = r'''
import sys

import django

django.setup()

from django.contrib.auth import get_user_model

from anonymizer_app.services import source_imports

owner = get_user_model().objects.create_user("importer", password="x" * 20)
print(source_imports.submit(source_imports.create_sql(owner, sys.argv[1], table="five", name="Five")).pk)
'''


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    """A migrated SQLite database for the worker's processes (no demo data: the import brings its own)."""
    import test_celery_worker

    folder = tmp_path_factory.mktemp("import-worker-template")
    test_celery_worker._manage(test_celery_worker._base_env(folder), "migrate", "--noinput")
    return folder


@pytest.mark.celery
@pytest.mark.timeout(180)
def test_an_import_through_a_real_worker(migrated, tmp_path, pg_url):
    """The web's submit puts the import on the broker; a worker process (anonymizer.run_source_import) reads
    the PostgreSQL table and stores the dataset; the row says so."""
    import subprocess
    import sys
    import time
    import uuid

    import test_celery_worker

    pg_execute(pg_url, "CREATE TABLE five (id integer, name text)",
               "INSERT INTO five VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
    d = test_celery_worker.Deployment(migrated, tmp_path, None)
    try:
        d.env["ANONYMIZER_SQL_ALLOWED_HOSTS"] = "127.0.0.1"
        proc = subprocess.run([sys.executable, "-c", SUBMIT_IMPORT, pg_url], cwd=test_celery_worker.REPO, env=d.env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        pk = uuid.UUID(proc.stdout.split()[-1]).hex
        query = ("SELECT status, rows, total, message, dataset_id, password FROM anonymizer_app_sourceimport "
                 "WHERE id = ?")
        assert d.db.execute(query, (pk,)).fetchone()[0] == "queued"
        d.start_worker()
        deadline = time.monotonic() + test_celery_worker.JOB_TIMEOUT
        while (row := d.db.execute(query, (pk,)).fetchone())[0] in ("queued", "running"):
            assert time.monotonic() < deadline and d.worker.poll() is None, d.log_tail()
            time.sleep(0.1)
        assert row[:4] == ("succeeded", 5, 5, ""), d.log_tail()
        assert d.db.execute("SELECT name, n_rows FROM anonymizer_app_dataset WHERE id = ?",
                            (row[4],)).fetchone() == ("Five", 5)
        assert row[5] == ""
        assert "anonymizer.run_source_import" in d.worker_log.read_text(errors="replace")
    finally:
        d.close()
