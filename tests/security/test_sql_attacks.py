"""Issue 25, connectors: the SQL allow-list bypasses a reviewer measured, replayed against the real PostgreSQL
and MariaDB in the documented production setup (DEBUG off, ANONYMIZER_SQL_ALLOWED_HOSTS=warehouse.internal, the
name made to resolve to 127.0.0.1 here). Each is refused with a clear message and nothing is stored: no
dataset row, no file, no table created or replaced."""

from __future__ import annotations

import socket

import pytest
from api_helpers import api_for
from django.db import connection

from anonymizer_app.models import Dataset
from anonymizer_app.services import connections, sql, storage
from tests import sql_helpers
from tests.anonymizer_helpers import finished_job, make_dataset
from tests.sql_helpers import mariadb_rows, pg_execute, pg_rows

pg_url, mariadb_url = sql_helpers.pg_url, sql_helpers.mariadb_url  # the fixtures
pytestmark = pytest.mark.django_db
WAREHOUSE = "warehouse.internal"
HASH = "pbkdf2_sha256$1000000$salt$c2VjcmV0LWhhc2gtb2YtYWxpY2U="


@pytest.fixture
def lookups(monkeypatch):
    """warehouse.internal resolves to 127.0.0.1 (every other name as usual); the look-ups of it are counted."""
    real = socket.getaddrinfo
    calls: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        if isinstance(host, str) and host.rstrip(".").lower() == WAREHOUSE:
            calls.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port or 0)))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return calls


@pytest.fixture
def production(settings, lookups):
    settings.DEBUG = False
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = [WAREHOUSE]
    return lookups


@pytest.fixture
def app_like(pg_url, production):
    """A PostgreSQL database holding what an attacker wants from the app's own: auth_user with a password
    hash and django_admin_log with a row. Returns (the database's name, its URL through warehouse.internal)."""
    pg_execute(pg_url, "CREATE TABLE auth_user (username text, password text)",
               f"INSERT INTO auth_user VALUES ('alice', '{HASH}')",
               "CREATE TABLE django_admin_log (id int, change_message text)",
               "INSERT INTO django_admin_log VALUES (1, 'kept')")
    name = pg_url.rsplit("/", 1)[1]
    return name, f"postgresql://postgres@{WAREHOUSE}:5432/{name}"


def nothing_stored(owner_datasets: int = 0) -> bool:
    return Dataset.objects.count() == owner_datasets and (owner_datasets or not storage.media_files())


def refused(response, message: str) -> None:
    assert response.status_code == 400, response.content
    assert message in response.json()["detail"], response.json()


def test_the_production_setup_reads_the_warehouse(user, app_like, production):
    """The control: the same server named as the administrator allows is read (so every refusal below is
    the attack's, not the setup's); warehouse.internal was looked up once, the connection went to that
    address (psycopg hostaddr: libpq did not look the name up again)."""
    name, url = app_like
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": url, "query": "SELECT change_message FROM django_admin_log"})
    assert _job_message(api, r).startswith("succeeded")  # an import job (202), run and polled
    assert Dataset.objects.get().n_rows == 1
    assert production == [WAREHOUSE]


@pytest.mark.parametrize("param", ["hostaddr=127.0.0.1", "host=127.0.0.1", "host=/var/run/postgresql",
                                   "service=app", "passfile=/etc/passwd", "sslkey=/etc/shadow",
                                   "options=-c%20default_transaction_read_only%3Doff", "port=5432"])
def test_postgresql_parameters_that_choose_the_server_or_read_files_are_refused_by_name(user, app_like, param):
    name, url = app_like
    key = param.split("=", 1)[0]
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": f"{url}?{param}", "query": "SELECT username, password FROM auth_user"})
    refused(r, f"url: the connection URL's parameter '{key}' is refused: ")
    assert nothing_stored()


def test_the_hostaddr_attack_on_import_and_export(user, app_like):
    """The measured attack: the app's database named through an allowed host and hostaddr=; import of
    auth_user and export over django_admin_log with replace."""
    name, url = app_like
    attack = f"{url}?hostaddr=127.0.0.1"
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": attack, "query": "SELECT username, password FROM auth_user"})
    refused(r, "the connection URL's parameter 'hostaddr' is refused: it would choose another server")
    assert nothing_stored()
    job = finished_job(make_dataset(user), k=2)
    files = storage.media_files()
    r = api.post(f"/api/v1/sql/export/{job.pk}/", {"url": attack, "table": "django_admin_log", "replace": True})
    refused(r, "the connection URL's parameter 'hostaddr' is refused")
    assert pg_rows(sql_helpers_url(name), "SELECT * FROM django_admin_log")[1] == [(1, "kept")]
    assert Dataset.objects.count() == 1 and storage.media_files() == files
    assert HASH not in r.content.decode()


def sql_helpers_url(name: str) -> str:
    return f"postgresql://postgres@127.0.0.1:5432/{name}"


def test_unknown_parameters_are_refused_too(user, app_like):
    name, url = app_like
    r = api_for(user).post("/api/v1/sql/import/", {"url": f"{url}?gssencmode=disable", "table": "auth_user"})
    refused(r, "the connection URL's parameter 'gssencmode' is not one this app passes to PostgreSQL "
               "(accepted: application_name, sslmode)")
    r = api_for(user).post("/api/v1/sql/import/", {"url": f"{url}?sslmode=bogus", "table": "auth_user"})
    refused(r, "the connection URL's parameter sslmode='bogus': one of allow, disable, prefer, require, verify-ca, "
               "verify-full")
    assert nothing_stored()


@pytest.mark.parametrize("param, key", [("host=127.0.0.1", "host"), ("unix_socket=/run/mysqld/mysqld.sock",
                                                                      "unix_socket"),
                                        ("local_infile=1", "local_infile"), ("port=abc", "port"),
                                        ("read_default_file=/etc/mysql/my.cnf", "read_default_file"),
                                        ("init_command=SET%20SESSION%20TRANSACTION%20READ%20WRITE", "init_command"),
                                        ("ssl_ca=/etc/shadow", "ssl_ca")])
def test_mysql_parameters_are_refused_by_name(user, mariadb_url, production, param, key):
    """mysql://root@warehouse.internal:3306/mysql?host=127.0.0.1 read mysql.user; ?port=abc was a 500."""
    r = api_for(user).post("/api/v1/sql/import/", {"url": f"mysql://root@{WAREHOUSE}:3306/mysql?{param}",
                                                   "query": "SELECT User, authentication_string FROM mysql.user"})
    refused(r, f"the connection URL's parameter '{key}' is refused: ")
    assert nothing_stored()


def test_the_apps_own_database_is_judged_on_the_resolved_address(user, app_like, monkeypatch, settings):
    """An allowed name that resolves to the app's own database server (here: this machine, where the
    'app-like' database is declared as one of the app's own) is refused after resolution, import and
    export; a database of the same server that is not the app's is read (the control above)."""
    name, url = app_like
    probe = {"ENGINE": "django.db.backends.postgresql", "HOST": "localhost", "PORT": "5432", "NAME": name}
    real = connections.own_servers
    monkeypatch.setattr(connections, "own_servers",
                        lambda databases=None: real({**settings.DATABASES, "own_probe": probe}))
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": url, "query": "SELECT username, password FROM auth_user"})
    body = r.content.decode() if r.status_code == 400 else _job_message(api, r)
    assert "this is the app's own database: it cannot be a source or a destination" in body and HASH not in body
    assert nothing_stored()
    job = finished_job(make_dataset(user), k=2)
    files = storage.media_files()
    r = api.post(f"/api/v1/sql/export/{job.pk}/", {"url": url, "table": "django_admin_log", "replace": True})
    body = r.content.decode() if r.status_code == 400 else _job_message(api, r)
    assert "this is the app's own database" in body
    assert pg_rows(sql_helpers_url(name), "SELECT * FROM django_admin_log")[1] == [(1, "kept")]
    assert Dataset.objects.count() == 1 and storage.media_files() == files


def test_an_app_database_on_mysql_refuses_its_whole_server(user, mariadb_url, production, monkeypatch, settings):
    """Were the app's database on MariaDB, any database of that server is refused: a query there reaches
    the app's tables by their qualified names (appdb.auth_user)."""
    probe = {"ENGINE": "django.db.backends.mysql", "HOST": "127.0.0.1", "PORT": "3306", "NAME": "appdb"}
    real = connections.own_servers
    monkeypatch.setattr(connections, "own_servers",
                        lambda databases=None: real({**settings.DATABASES, "own_probe": probe}))
    db = mariadb_url.rsplit("/", 1)[1]
    with pytest.raises(sql.SqlError, match=r"this is the server of the app's own database \(on MySQL/MariaDB a "
                                           r"query reaches every database of its server\)"):
        sql.import_dataset(user, f"mysql://root@{WAREHOUSE}:3306/{db}", query="SELECT 1 AS a", web=True)
    assert nothing_stored()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the app's database is PostgreSQL in the second pass")
def test_the_real_app_database_through_an_allowed_name(user, production):
    """On the PostgreSQL pass the app's own test database itself: alice's hash stays where it is."""
    own = connection.settings_dict
    url = f"postgresql://{own['USER'] or 'postgres'}@{WAREHOUSE}:{own['PORT'] or 5432}/{own['NAME']}"
    api = api_for(user)
    r = api.post("/api/v1/sql/import/", {"url": url, "query": "SELECT username, password FROM auth_user"})
    body = r.content.decode() if r.status_code == 400 else _job_message(api, r)
    assert "this is the app's own database" in body and user.password not in body
    assert nothing_stored()


def test_names_not_listed_and_urls_without_a_server(user, pg_url, production):
    api = api_for(user)
    name = pg_url.rsplit("/", 1)[1]
    r = api.post("/api/v1/sql/import/", {"url": f"postgresql://postgres@localhost:5432/{name}", "table": "t"})
    refused(r, f"the server 'localhost' is not one this app may connect to; allowed: {WAREHOUSE}")
    r = api.post("/api/v1/sql/import/", {"url": "postgresql://", "table": "t"})
    refused(r, "name the database server in the URL: postgresql://user@host:5432/database")
    r = api.post("/api/v1/sql/import/", {"url": f"postgresql://postgres@{WAREHOUSE}", "table": "t"})
    refused(r, "name the database in the URL: postgresql://user@host:5432/database")
    r = api.post("/api/v1/sql/import/", {"url": f"postgresql://postgres@{WAREHOUSE},127.0.0.1:5432/x", "table": "t"})
    assert r.status_code == 400 and "127.0.0.1" in r.json()["detail"]  # a second host is not a host name
    assert nothing_stored()


def test_dns_rebinding_changes_nothing(user, mariadb_url, app_like, monkeypatch):
    """warehouse.internal answers 127.0.0.1 once, then a name that fails: the connection still goes to
    the address checked (psycopg and PyMySQL never look the name up themselves)."""
    real = socket.getaddrinfo
    answers: list[str] = []

    def rebinding(host, port, *args, **kwargs):
        if host == WAREHOUSE:
            answers.append(host)
            if len(answers) > 1:
                raise OSError("looked up twice")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port)))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    name, url = app_like
    ds = sql.import_dataset(user, url, query="SELECT change_message FROM django_admin_log", web=True)
    assert ds.n_rows == 1 and answers == [WAREHOUSE]
    answers.clear()
    db = mariadb_url.rsplit("/", 1)[1]
    sql_helpers_mariadb(db)
    ds = sql.import_dataset(user, f"mysql://root@{WAREHOUSE}:3306/{db}", table="t", web=True)
    assert ds.n_rows == 2 and answers == [WAREHOUSE]


def sql_helpers_mariadb(db: str) -> None:
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", user="root", password="", database=db, autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (a int)")
        cur.execute("INSERT INTO t VALUES (1), (2)")
    conn.close()
    assert mariadb_rows(f"mysql://root@127.0.0.1:3306/{db}", "SELECT count(*) FROM t")[1] == [(2,)]


def test_the_command_line_refuses_the_file_parameters_too(user, pg_url):
    """The operator's CLI may name any server, but never makes the client read a file."""
    for param, key in (("passfile=/etc/passwd", "passfile"), ("sslkey=/etc/shadow", "sslkey")):
        with pytest.raises(sql.SqlError, match=f"parameter '{key}' is refused: it makes the database client read"):
            sql.import_dataset(user, f"{pg_url}?{param}", table="t", web=False)
    with pytest.raises(sql.SqlError, match="parameter 'local_infile' is refused"):
        sql.import_dataset(user, "mysql://root@127.0.0.1:3306/mysql?local_infile=1", table="user", web=False)
    assert nothing_stored()


def test_parameters_on_the_allow_list_are_passed_on(user, app_like):
    name, url = app_like
    target = connections.parse(f"{url}?sslmode=disable&application_name=anonymizer-test")
    assert target.params == (("application_name", "anonymizer-test"), ("sslmode", "disable"))
    r = api_for(user).post("/api/v1/sql/import/", {"url": f"{url}?sslmode=disable", "query":
                                                   "SELECT current_setting('application_name') AS a"})
    assert r.status_code in (201, 202), r.content


def _job_message(api, response) -> str:
    """The final message of an accepted (202) job, polled to its end."""
    from tests.security.sql_jobs import job_outcome

    return job_outcome(api, response)
