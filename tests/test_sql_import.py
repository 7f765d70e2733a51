"""Importing from SQL databases: a query streamed in chunks, values as CSV text, the upload's limits; the
refusals (the app's own database, SQLite on the web, more than one statement, anything but SELECT, writes
inside a query) and clear messages for an unreachable server, a bad login, a missing table, a bad query,
with nothing stored."""

from __future__ import annotations

import sqlite3

import pytest

from anonymizer_app.models import Dataset
from anonymizer_app.services import datasets, sql, storage, vault
from tests import sql_helpers
from tests.sql_helpers import pg_execute, pg_rows

pg_url, mariadb_url = sql_helpers.pg_url, sql_helpers.mariadb_url  # the fixtures

pytestmark = pytest.mark.django_db


def nothing_stored() -> bool:
    return not Dataset.objects.exists() and not storage.media_files()


@pytest.fixture
def people(pg_url):
    pg_execute(pg_url, "CREATE SCHEMA clinic",
               "CREATE TABLE clinic.people (id integer, name text, born date, weight numeric(5,2), ok boolean, "
               "note text)",
               "INSERT INTO clinic.people VALUES (1, 'Ann', '1980-02-01', 61.50, true, NULL), "
               "(2, 'Bob, Jr.', '1975-12-31', 80.00, false, 'line\nbreak'), (3, '=cmd', NULL, NULL, NULL, '\"q\"')")
    return pg_url


def test_a_query_by_hand(people, user):
    seen = []
    ds = sql.import_dataset(user, people, query="SELECT id, name, born, weight, ok, note FROM clinic.people "
                            "ORDER BY id;", name="People", web=False, progress=seen.append)
    assert (ds.name, ds.n_rows, ds.n_columns, ds.original_name) == ("People", 3, 6, "query.csv")
    frame = datasets.load_frame(ds)
    assert frame.values.tolist() == [["1", "Ann", "1980-02-01", "61.50", "true", ""],
                                     ["2", "Bob, Jr.", "1975-12-31", "80.00", "false", "line\nbreak"],
                                     ["3", "=cmd", "", "", "", '"q"']]
    assert {c.name: c.type for c in ds.columns.all()} == {"id": "integer", "name": "string", "born": "date",
                                                           "weight": "decimal", "ok": "string", "note": "string"}
    assert ds.sql_source["query"].startswith("SELECT id") and "password" not in ds.sql_source
    # the original (CSV of the same rows) re-reads to the same table
    datasets.reformat_dataset(ds, datasets.dataset_format(ds))
    assert datasets.load_frame(ds).equals(frame)


def test_chunks_and_the_row_limit(people, user, settings):
    pieces = list(sql.iter_rows(people, table="clinic.people", web=False, chunk_rows=2))
    assert [len(p) for p in pieces] == [2, 1]
    settings.ANONYMIZER_MAX_ROWS = 2
    with pytest.raises(sql.SqlError, match=r"the table 'clinic.people': more than the limit of 2 rows"):
        sql.import_dataset(user, people, table="clinic.people", web=True)
    assert nothing_stored()


def test_cell_and_column_limits(people, user, settings):
    settings.ANONYMIZER_MAX_CELL_CHARS = 5
    with pytest.raises(sql.SqlError, match=r"row 2, column 'name': a cell of 8 characters, more than the limit of 5"):
        sql.import_dataset(user, people, query="SELECT name FROM clinic.people ORDER BY id", web=True)
    settings.ANONYMIZER_MAX_CELL_CHARS = 100
    settings.ANONYMIZER_MAX_COLUMNS = 2
    with pytest.raises(sql.SqlError, match="6 columns, more than the limit of 2"):
        sql.import_dataset(user, people, table="clinic.people", web=True)
    assert nothing_stored()


def test_the_password_is_kept_only_encrypted(people, user):
    ds = sql.import_dataset(user, people.replace("postgres@", "postgres:s3cret@"), table="clinic.people",
                            web=False, keep_password=True)
    assert "s3cret" not in ds.sql_source["url"] and "s3cret" not in str(ds.sql_source)
    assert vault.decrypt_text(ds.sql_source["password"]) == "s3cret" == sql.reimport_password(ds)
    ds2 = sql.import_dataset(user, people.replace("postgres@", "postgres:s3cret@"), table="clinic.people", web=False)
    assert "password" not in ds2.sql_source and sql.reimport_password(ds2) is None


@pytest.mark.parametrize("query,message", [
    ("DELETE FROM clinic.people", "only a SELECT"),
    ("SELECT 1; DROP TABLE clinic.people", "only one statement"),
    ("SELECT 1; SELECT 2", "only one statement"),
    ("  ", "the query is empty"),
    ("SELECT 'unclosed", "unclosed quote"),
    ("/* x */ UPDATE clinic.people SET name = 'x'", "only a SELECT"),
    ("SELECT * INTO copy FROM clinic.people", "SELECT ... INTO writes"),
    ("SELECT 1 INTO OUTFILE '/tmp/x'", "SELECT ... INTO writes"),
])
def test_only_one_select(query, message):
    with pytest.raises(sql.SqlError, match=message):
        sql.check_query(query)


def test_semicolons_in_literals_and_comments_are_fine():
    assert sql.check_query("SELECT ';' AS a -- ; here\n, \"x;y\" FROM t;") == "SELECT ';' AS a -- ; here\n, \"x;y\" FROM t"
    assert sql.check_query("SELECT 'into', \"into\" FROM t") == "SELECT 'into', \"into\" FROM t"


def test_a_query_cannot_write(people, user):
    with pytest.raises(sql.SqlError, match="data-modifying|read-only transaction"):
        sql.import_dataset(user, people, query="WITH gone AS (DELETE FROM clinic.people RETURNING id) "
                           "SELECT * FROM gone", web=False)
    pg_execute(people, "CREATE SEQUENCE clinic.s")
    with pytest.raises(sql.SqlError, match=r"failed: cannot execute nextval\(\) in a read-only transaction"):
        sql.import_dataset(user, people, query="SELECT nextval('clinic.s')", web=False)
    assert pg_rows(people, "SELECT count(*) FROM clinic.people")[1] == [(3,)]
    assert nothing_stored()


def test_a_query_cannot_write_in_mariadb(mariadb_url, user):
    import pymysql

    db = mariadb_url.rsplit("/", 1)[1]
    conn = pymysql.connect(host="127.0.0.1", user="root", password="", database=db, autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (a int)")
        cur.execute("INSERT INTO t VALUES (1), (2)")
    ds = sql.import_dataset(user, mariadb_url, table="t", web=False)
    assert datasets.load_frame(ds)["a"].tolist() == ["1", "2"]
    # a statement that writes is refused by the read-only session (the query check aside)
    engine = sql.open_engine(mariadb_url, web=False)
    with engine.connect() as conn, pytest.raises(Exception, match="READ ONLY"):
        conn.exec_driver_sql("INSERT INTO t VALUES (3)")
    engine.dispose()
    conn.close()


def test_missing_table_bad_query_bad_login_unreachable(people, user):
    with pytest.raises(sql.SqlError, match=r"the table 'clinic.nothing' does not exist in the database"):
        sql.import_dataset(user, people, table="clinic.nothing", web=False)
    with pytest.raises(sql.SqlError, match=r"the query \('SELECT nope FROM clinic.people'\) failed: .*nope"):
        sql.import_dataset(user, people, query="SELECT nope FROM clinic.people", web=False)
    with pytest.raises(sql.SqlError, match=r"127.0.0.1:5432 refused the user name or password|role .* does not exist"):
        sql.import_dataset(user, people.replace("postgres@", "nobody_h6@"), table="clinic.people", web=False)
    with pytest.raises(sql.SqlError, match=r"the database 'no_such_db_h6' does not exist"):
        sql.import_dataset(user, people.rsplit("/", 1)[0] + "/no_such_db_h6", table="x", web=False)
    with pytest.raises(sql.SqlError, match=r"cannot connect to 127.0.0.1:1: "):
        sql.import_dataset(user, "postgresql://postgres@127.0.0.1:1/x", table="x", web=False)
    with pytest.raises(sql.SqlError, match=r"cannot connect to 127.0.0.1:1: "):
        sql.import_dataset(user, "mysql://root@127.0.0.1:1/x", table="x", web=False)
    assert nothing_stored()


def test_bad_login_mariadb(mariadb_url, user):
    with pytest.raises(sql.SqlError, match=r"127.0.0.1:3306 refused the user name or password"):
        sql.import_dataset(user, mariadb_url.replace("root@", "nobody_h6:wrong@"), table="t", web=False)


def test_unsupported_or_unreadable_urls():
    with pytest.raises(sql.SqlError, match="'oracle' is not supported"):
        sql.parse_url("oracle://u@h/db")
    with pytest.raises(sql.SqlError, match="cannot be read"):
        sql.parse_url("not a url")
    assert sql.public_url("postgresql://u:pw@h:5/db") == "postgresql+psycopg://u@h:5/db"


def test_the_apps_own_database_is_refused(settings):
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = ["127.0.0.1", "localhost", "::1"]
    own = {"default": {"ENGINE": "django.db.backends.postgresql", "HOST": "localhost", "PORT": "", "NAME": "anon"}}
    for url in ("postgresql://x@127.0.0.1:5432/anon", "postgresql://x@localhost/anon", "postgres://x@[::1]/anon"):
        with pytest.raises(sql.SqlError, match="the app's own database"):
            sql.check_web_url(sql.parse_url(url), own, "")
    for url in ("postgresql://x@127.0.0.1:5432/other", "postgresql://x@127.0.0.1:5433/anon",
                "mysql://x@127.0.0.1:5432/anon"):
        sql.check_web_url(sql.parse_url(url), own, "")  # another database, port or server kind


def test_sqlite_refused_on_the_web_allowed_in_a_folder_and_the_cli(tmp_path, user, settings):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    path = allowed / "d.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (a, b)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(1, "x"), (2.5, None)])
    outside = tmp_path / "outside.db"
    outside.write_bytes(path.read_bytes())
    with pytest.raises(sql.SqlError, match="SQLite files cannot be opened from the web app"):
        sql.import_dataset(user, f"sqlite:///{path}", table="t", web=True)
    settings.ANONYMIZER_SQL_SQLITE_DIR = str(allowed)
    with pytest.raises(sql.SqlError, match="SQLite files may only be opened inside"):
        sql.import_dataset(user, f"sqlite:///{outside}", table="t", web=True)
    with pytest.raises(sql.SqlError, match="SQLite files may only be opened inside"):
        sql.import_dataset(user, f"sqlite:///{allowed}/../outside.db", table="t", web=True)
    assert nothing_stored()
    ds = sql.import_dataset(user, f"sqlite:///{path}", table="t", web=True)
    assert datasets.load_frame(ds).values.tolist() == [["1", "x"], ["2.5", ""]]
    ds = sql.import_dataset(user, f"sqlite:///{outside}", query="SELECT b FROM t WHERE a = 1", web=False)
    assert datasets.load_frame(ds).values.tolist() == [["x"]]


def test_the_statement_timeout_stops_a_long_query(people, user, settings):
    settings.ANONYMIZER_SQL_TIMEOUT_SECONDS = 1
    with pytest.raises(sql.SqlError, match="failed: canceling statement due to statement timeout"):
        sql.import_dataset(user, people, query="SELECT pg_sleep(5), 1 AS a", web=False)
    assert nothing_stored()


def test_only_the_allowed_servers_when_a_list_is_set(settings):
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = ["db.example.org", "127.0.0.1"]
    sql.check_web_url(sql.parse_url("postgresql://x@DB.example.org/clinic"), {}, "")
    sql.check_web_url(sql.parse_url("mysql://x@127.0.0.1/clinic"), {}, "")
    with pytest.raises(sql.SqlError, match="the server 'intranet' is not one this app may connect to; allowed: "
                                           "db.example.org, 127.0.0.1"):
        sql.check_web_url(sql.parse_url("postgresql://x@intranet:5432/wiki"), {}, "")


def test_binary_columns_are_refused_naming_row_and_column(people, user):
    with pytest.raises(sql.SqlError, match=r"row 2, column 'b': binary data cannot be anonymized"):
        sql.import_dataset(user, people, query="SELECT name, CASE WHEN id = 2 THEN '\\x00ff'::bytea END AS b "
                           "FROM clinic.people ORDER BY id", web=False)
    assert nothing_stored()


def test_production_refuses_every_server_until_a_list_is_set(settings, user):
    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = False, []
    for url in ("postgresql://x@10.0.0.5:5432/wiki", "mysql://x@127.0.0.1/clinic", "postgresql://x@/local"):
        with pytest.raises(sql.SqlError, match="database servers cannot be named from the web app on this server "
                                               "until the administrator lists the ones allowed in the setting "
                                               "ANONYMIZER_SQL_ALLOWED_HOSTS"):
            sql.check_web_url(sql.parse_url(url), {}, "")
    with pytest.raises(sql.SqlError, match="ANONYMIZER_SQL_ALLOWED_HOSTS"):
        sql.import_dataset(user, "postgresql://x@10.0.0.5:5432/wiki", table="t", web=True)
    assert nothing_stored()
    settings.DEBUG = True  # make run: any server but the app's own database
    sql.check_web_url(sql.parse_url("postgresql://x@10.0.0.5:5432/wiki"), {}, "")
    assert sql.servers_refusal() is None
    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = False, ["db.example.org"]
    assert sql.servers_refusal() is None
    sql.check_web_url(sql.parse_url("postgresql://x@db.example.org/clinic"), {}, "")


def test_the_command_line_is_not_restricted(pg_url, user, settings):
    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = False, []
    sql_helpers.pg_execute(pg_url, "CREATE TABLE t (a int)", "INSERT INTO t VALUES (1), (2)")
    ds = sql.import_dataset(user, pg_url, table="t", web=False)
    assert datasets.load_frame(ds).values.tolist() == [["1"], ["2"]]
    with pytest.raises(sql.SqlError, match="ANONYMIZER_SQL_ALLOWED_HOSTS"):
        sql.import_dataset(user, pg_url, table="t", web=True)
