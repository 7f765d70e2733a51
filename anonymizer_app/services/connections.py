"""Every outbound database connection of the app, built here from explicit, checked parts (scheme, host,
port, user, database) and nothing else: the one place where a user's URL becomes a socket.

Why: a driver reads more than the URL's host. libpq takes ``host=``/``hostaddr=`` from the query and
connects there; PyMySQL takes ``host=``/``unix_socket=``/``local_infile=``. A check of the URL's host alone
was bypassed that way (issue 25). So:

- A URL's query parameters are refused unless on a short allow-list per driver (PARAMETERS) that can
  neither change the target nor make the client read a file; the known dangerous ones are refused by name
  with the reason (REFUSED), every other one as unknown. This holds on the web and on the command line.
- The host is resolved once; web connections check the address against the app's own database servers
  (servers of this machine count as one: loopback or any address bound here) and then connect to that
  address (psycopg ``hostaddr``, PyMySQL ``host``), the name kept for TLS and messages: a name that
  resolves elsewhere the second time (DNS rebinding) changes nothing.
- MySQL/MariaDB: LOAD DATA LOCAL is off (``local_infile=False``) and a server's request for a local file
  is refused with a clear message; the client never sends a byte of it.
- The handshake (TCP connect, greeting, authentication, session setup) must finish within
  ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS, else "did not answer as a ... server within N s"; statements then
  run under ANONYMIZER_SQL_TIMEOUT_SECONDS (server side, and reads wait that long plus 5 s).

docs/connectors.md describes the rules for administrators.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from ..engine import InputError

DRIVERS = {  # what a URL's scheme names -> (backend, the SQLAlchemy dialect+driver this app ships)
    "postgresql": ("postgresql", "postgresql+psycopg"), "postgres": ("postgresql", "postgresql+psycopg"),
    "postgresql+psycopg": ("postgresql", "postgresql+psycopg"), "mysql": ("mysql", "mysql+pymysql"),
    "mysql+pymysql": ("mysql", "mysql+pymysql"), "mariadb": ("mysql", "mariadb+pymysql"),
    "mariadb+pymysql": ("mysql", "mariadb+pymysql"), "sqlite": ("sqlite", "sqlite"),
    "sqlite+pysqlite": ("sqlite", "sqlite"),
}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}
SERVER_NAMES = {"postgresql": "PostgreSQL", "mysql": "MySQL/MariaDB"}
# The only query parameters passed on, per backend, with the values each may take (None: any short text).
PARAMETERS: dict[str, dict[str, frozenset[str] | None]] = {
    "postgresql": {"sslmode": frozenset({"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}),
                   "application_name": None},
    "mysql": {"charset": frozenset({"utf8mb4", "utf8mb3", "utf8", "latin1", "ascii"})},
    "sqlite": {},
}
_TARGET = "it would choose another server, socket or database than the URL's own"
_FILES = "it makes the database client read or send a file of this server"
_LIMITS = "the app sets it itself (time limits, read-only session)"
REFUSED: dict[str, str] = {
    **dict.fromkeys(("host", "hostaddr", "port", "unix_socket", "service", "dbname", "db", "database", "user",
                     "username", "passwd", "password", "bind_address", "target_session_attrs",
                     "load_balance_hosts", "require_auth"), _TARGET),
    **dict.fromkeys(("local_infile", "passfile", "servicefile", "sslkey", "sslcert", "sslrootcert", "sslcrl",
                     "sslcrldir", "sslpassword", "ssl_key", "ssl_cert", "ssl_ca", "ssl_capath", "ssl",
                     "read_default_file", "read_default_group", "sslkeylogfile", "mode", "uri", "vfs"), _FILES),
    **dict.fromkeys(("options", "connect_timeout", "read_timeout", "write_timeout", "init_command", "autocommit",
                     "client_flag", "statement_timeout", "sql_mode", "defer_connect", "max_allowed_packet",
                     "isolation_level"), _LIMITS),
}
HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}))*\.?")


class SqlError(InputError):
    """A database source or destination cannot be used (the message says which and why)."""


@dataclass(frozen=True)
class Target:
    """A database named by a user: the parts a connection is built from, nothing else."""

    backend: str  # postgresql, mysql or sqlite
    drivername: str  # the SQLAlchemy dialect+driver
    host: str | None = None
    port: int | None = None  # as written (None: the backend's default)
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    params: tuple[tuple[str, str], ...] = ()

    @property
    def real_port(self) -> int:
        return self.port or DEFAULT_PORTS.get(self.backend, 0)

    @property
    def server(self) -> str:
        """How messages name it: host:port, or the SQLite file."""
        if self.backend == "sqlite":
            return f"the SQLite file {self.database}"
        host = self.host or "localhost"
        return f"{f'[{host}]' if ':' in host else host}:{self.real_port}"

    def url(self, password: bool = False):
        """The SQLAlchemy URL of these parts (the password left out unless asked for)."""
        from sqlalchemy.engine import URL

        return URL.create(self.drivername, username=self.user, password=self.password if password else None,
                          host=self.host, port=self.port, database=self.database, query=dict(self.params))

    def public_url(self) -> str:
        return self.url().render_as_string(hide_password=False)

    def with_password(self, password: str | None) -> Target:
        from dataclasses import replace

        return replace(self, password=password) if password else self

    # what the checks written for SQLAlchemy URLs read
    def get_backend_name(self) -> str:
        return self.backend


def check_params(backend: str, query: dict) -> tuple[tuple[str, str], ...]:
    """The URL's query parameters when every one is on ``backend``'s allow-list; else SqlError naming it."""
    allowed = PARAMETERS[backend]
    out = []
    for name in sorted(query):
        values = query[name]
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        key = name.lower()
        if key in REFUSED:
            raise SqlError(f"the connection URL's parameter {name!r} is refused: {REFUSED[key]}")
        if key not in allowed:
            accepted = ", ".join(sorted(allowed)) or "none"
            raise SqlError(f"the connection URL's parameter {name!r} is not one this app passes to "
                           f"{SERVER_NAMES.get(backend, 'SQLite')} (accepted: {accepted})")
        if len(values) != 1:
            raise SqlError(f"the connection URL's parameter {name!r} is given {len(values)} times")
        value = str(values[0])
        choices = allowed[key]
        if choices is not None and value not in choices:
            raise SqlError(f"the connection URL's parameter {name}={value[:40]!r}: one of "
                           + ", ".join(sorted(choices)))
        if choices is None and not re.fullmatch(r"[\w .-]{0,63}", value):
            raise SqlError(f"the connection URL's parameter {name}: letters, digits, spaces, '.', '-' and '_' "
                           "(at most 63)")
        out.append((key, value))
    return tuple(out)


def parse(url: str, password: str | None = None) -> Target:
    """The parts of ``url``, checked (scheme, host, port, names, query parameters); a password given
    apart wins over one in the URL."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url.strip())
        port = parsed.port
    except (ArgumentError, ValueError):
        raise SqlError("the connection URL cannot be read; write it as postgresql://user@host:5432/db, "
                       "mysql://user@host:3306/db or sqlite:///path/file.db") from None
    if parsed.drivername not in DRIVERS:
        raise SqlError(f"the database kind {parsed.drivername!r} is not supported: use postgresql://, mysql://, "
                       "mariadb:// or sqlite:///")
    backend, driver = DRIVERS[parsed.drivername]
    params = check_params(backend, dict(parsed.query))
    if backend == "sqlite":
        if parsed.host or parsed.username or port:
            raise SqlError("a SQLite URL names a file only: sqlite:///path/to/file.db")
        return Target(backend, driver, database=parsed.database, params=params)
    host = parsed.host
    if host is not None and not (HOST.fullmatch(host) or is_ip(host)):
        raise SqlError(f"{host[:80]!r} is not a server name or address")
    if port is not None and not 0 < port < 65536:
        raise SqlError(f"the port {port} is not a port number (1 to 65535)")
    database = parsed.database
    if database is not None and (len(database) > 64 or "=" in database or "://" in database
                                 or any(ord(c) < 32 for c in database)):
        raise SqlError(f"{database[:80]!r} is not a database name")
    return Target(backend, driver, host=host, port=port, user=parsed.username,
                  password=password or parsed.password, database=database, params=params)


def require_server(target: Target) -> None:
    """A web connection names its server and its database: no local socket, no driver default."""
    if target.backend == "sqlite":
        return
    example = f"{target.drivername.split('+')[0]}://user@host:{DEFAULT_PORTS[target.backend]}/database"
    if not target.host:
        raise SqlError(f"name the database server in the URL: {example}")
    if not target.database:
        raise SqlError(f"name the database in the URL: {example}")


# ---- addresses --------------------------------------------------------------------------------------------
def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def resolve(host: str, port: int) -> list[str]:
    """The addresses of ``host`` (IPv4 first), looked up once; SqlError when it has none."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise SqlError(f"the server name {host!r} cannot be resolved to an address") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise SqlError(f"the server name {host!r} cannot be resolved to an address")
    return sorted(addresses, key=lambda a: ":" in a)


def is_this_machine(address: str) -> bool:
    """Loopback, unspecified, or an address bound to one of this machine's interfaces (a socket can bind
    to it: nothing is sent anywhere)."""
    ip = ipaddress.ip_address(address)
    if ip.is_loopback or ip.is_unspecified:
        return True
    try:
        with socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
    except OSError:
        return False
    return True


def _where(address: str) -> str:
    return "this machine" if is_this_machine(address) else str(ipaddress.ip_address(address))


def own_servers(databases: dict | None = None) -> list[tuple[str, set[str], int, str]]:
    """The app's own database servers: (backend, where each address is, port, database name)."""
    databases = settings.DATABASES if databases is None else databases
    out = []
    for conf in databases.values():
        engine = str(conf.get("ENGINE", ""))
        if "sqlite" in engine:
            continue
        backend = "postgresql" if "postgres" in engine else "mysql"
        port = int(conf.get("PORT") or DEFAULT_PORTS[backend])
        host = str(conf.get("HOST") or "")
        if not host or host.startswith("/"):  # a Unix socket: a server of this machine
            where = {"this machine"}
        else:
            try:
                where = {_where(a) for a in resolve(host, port)}
            except SqlError:
                where = {host.lower()}
        out.append((backend, where, port, str(conf.get("NAME") or "")))
    return out


def check_address(target: Target, address: str | None, databases: dict | None = None) -> None:
    """Refuse the app's own database, judged on the address connected to (after name resolution). On
    MySQL/MariaDB the whole server: a query names any database of its server (appdb.auth_user)."""
    where = "this machine" if address is None else _where(address)
    for backend, places, port, name in own_servers(databases):
        if backend != target.backend or port != target.real_port or where not in places:
            continue
        if backend == "mysql":
            raise SqlError("this is the server of the app's own database (on MySQL/MariaDB a query reaches "
                           "every database of its server): it cannot be a source or a destination")
        if name == (target.database or ""):
            raise SqlError("this is the app's own database: it cannot be a source or a destination")


def address_for(target: Target, web: bool) -> str | None:
    """The one address a connection to ``target`` goes to (None: the driver's local socket, command line
    only), checked against the app's own databases when ``web``."""
    if target.backend == "sqlite":
        return None
    if not target.host:
        if web:
            require_server(target)
        return None
    address = resolve(target.host, target.real_port)[0]
    if web:
        check_address(target, address)
    return address


# ---- connecting -------------------------------------------------------------------------------------------
def _timeouts() -> tuple[int, int]:
    """(handshake, statement) seconds from the settings."""
    return (max(1, int(getattr(settings, "ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS", 5))),
            max(1, int(getattr(settings, "ANONYMIZER_SQL_TIMEOUT_SECONDS", 300))))


def _no_answer(target: Target, seconds: int) -> SqlError:
    return SqlError(f"{target.server} did not answer as a {SERVER_NAMES[target.backend]} server within "
                    f"{seconds} s (ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS)")


def connect_postgresql(target: Target, address: str | None, read_only: bool, web: bool = True):
    """A psycopg connection to ``address`` (the checked one: hostaddr) with the name for TLS, the
    statement timeout and, when ``read_only``, a read-only session; on the web, no password file of this
    server (a user must not log in with the server's own saved passwords)."""
    import psycopg

    handshake, statement = _timeouts()
    options = f"-c statement_timeout={statement * 1000}"
    if read_only:
        options += " -c default_transaction_read_only=on"
    args: dict = {"port": target.real_port, "dbname": target.database or target.user or "",
                  "user": target.user or "", "connect_timeout": max(2, handshake), "options": options,
                  **dict(target.params)}
    if web:
        args["passfile"] = os.path.join(os.devnull, "none")  # can never exist: no file is read
    if target.password:
        args["password"] = target.password
    if target.host:
        args["host"] = target.host
        args["hostaddr"] = address
    try:
        return psycopg.connect(**args)
    except psycopg.errors.ConnectionTimeout:
        raise _no_answer(target, max(2, handshake)) from None


def _mysql_connection_class():
    import pymysql

    class RefusedFile(pymysql.err.OperationalError):
        """A server asked for a file of this machine (LOAD DATA LOCAL INFILE): refused."""

    class Connection(pymysql.connections.Connection):
        """PyMySQL's connection with the handshake under its own, short, read timeout and LOAD DATA LOCAL
        requests refused with a message (PyMySQL itself raises a bare RuntimeError for them)."""

        handshake_timeout: float = 5.0
        refused_file = False

        def rollback(self):
            if self.refused_file:  # dropped after the refusal: the refusal is the error to report
                return
            super().rollback()

        def connect(self, sock=None):
            reads = self._read_timeout
            self._read_timeout = self.handshake_timeout
            try:
                super().connect(sock)
            finally:
                self._read_timeout = reads

        def _read_query_result(self, unbuffered=False):
            try:
                return super()._read_query_result(unbuffered=unbuffered)
            except RuntimeError as exc:
                if "LOAD_LOCAL" not in str(exc):
                    raise
                self._force_close()  # the server waits for file content: the connection is dropped, unanswered
                self.refused_file = True
                raise RefusedFile(2027, "the server asked this app to send it a file of the app's own server "
                                        "(LOAD DATA LOCAL INFILE); refused: this app never sends files to a "
                                        "database server") from None

    return Connection, RefusedFile


def connect_mysql(target: Target, address: str | None, read_only: bool, web: bool = True):
    """A PyMySQL connection to ``address`` (the checked one), LOAD DATA LOCAL off, the handshake and the
    session setup within the handshake timeout, then the statement timeout and a read-only session."""
    import pymysql
    from pymysql.constants import CLIENT

    handshake, statement = _timeouts()
    Connection, RefusedFile = _mysql_connection_class()
    Connection.handshake_timeout = handshake
    params = dict(target.params)
    try:
        conn = Connection(host=address or "localhost", port=target.real_port, user=target.user or "",
                          password=target.password or "", database=target.database, charset=params.get("charset",
                          "utf8mb4"), local_infile=False, connect_timeout=handshake, read_timeout=statement + 5,
                          write_timeout=statement + 5, client_flag=CLIENT.FOUND_ROWS, autocommit=False,
                          read_default_file=None, init_command=None)
    except pymysql.err.OperationalError as exc:
        if "timed out" in str(exc):
            raise _no_answer(target, handshake) from None
        raise
    except pymysql.err.Error:
        raise
    except Exception:  # garbage instead of a MySQL greeting (another protocol on that port)
        raise _not_mysql(target) from None
    try:  # the session's limits before any statement of the user's, still under the handshake timeout
        conn._read_timeout = handshake
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            mariadb = "mariadb" in str((cur.fetchone() or [""])[0]).lower()
            cur.execute(f"SET SESSION max_statement_time={statement}" if mariadb
                        else f"SET SESSION MAX_EXECUTION_TIME={statement * 1000}")
            if read_only:
                cur.execute("SET SESSION TRANSACTION READ ONLY")
        conn._read_timeout = statement + 5
    except RefusedFile as exc:
        conn.close() if conn.open else None
        raise SqlError(f"{target.server}: {exc.args[1]}") from None
    except pymysql.err.OperationalError as exc:
        conn.close() if conn.open else None
        if "timed out" in str(exc):
            raise _no_answer(target, handshake) from None
        raise
    except pymysql.err.Error:
        raise
    except Exception:  # an answer PyMySQL cannot parse
        conn.close() if conn.open else None
        raise _not_mysql(target) from None
    return conn


def _not_mysql(target: Target) -> SqlError:
    return SqlError(f"{target.server} did not answer as a {SERVER_NAMES['mysql']} server (its answers could not "
                    "be read)")


def create_engine(target: Target, web: bool = True, read_only: bool = True):
    """A SQLAlchemy engine whose every connection is built here from ``target``'s parts (no pool: a
    connection per use), to the address checked once now."""
    from sqlalchemy import create_engine as sa_create_engine
    from sqlalchemy import event
    from sqlalchemy.pool import NullPool

    if target.backend == "sqlite":
        path = target.database or ""
        if not path or path == ":memory:":
            raise SqlError("name the SQLite file: sqlite:///path/to/file.db")
        if not Path(path).is_file():
            raise SqlError(f"{path}: no such SQLite file")
        handshake, _ = _timeouts()
        url = target.url()
        if read_only:
            url = url.set(database=f"file:{Path(path).resolve()}?mode=ro", query={"uri": "true"})
        engine = sa_create_engine(url, poolclass=NullPool, connect_args={"timeout": handshake})
        if read_only:
            @event.listens_for(engine, "connect")
            def _query_only(dbapi_conn, _record):
                dbapi_conn.execute("PRAGMA query_only = 1")
        return engine
    address = address_for(target, web)
    connect = connect_postgresql if target.backend == "postgresql" else connect_mysql
    return sa_create_engine(target.drivername + "://", poolclass=NullPool,
                            creator=lambda: connect(target, address, read_only, web))
