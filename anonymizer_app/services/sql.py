"""SQL databases as a source and a destination (SQLAlchemy): a table or a read-only query result from
PostgreSQL (psycopg 3), MySQL/MariaDB (PyMySQL) or SQLite read in chunks into a dataset, and a result's
published rows written to a new table.

Reading: the rows come from a server-side cursor (``stream_results``) a partition at a time, every value
turned into the text a CSV would hold (NULL as an empty cell), checked against the upload's limits (rows,
columns, cell and column-name length) and written to the dataset's Parquet; the dataset's original is the
same rows as a CSV file, so that everything built on an upload (re-reading, erasure) works unchanged.
Only a single SELECT (or WITH ... SELECT) statement is accepted as a query; it runs in a read-only
transaction (PostgreSQL: default_transaction_read_only; MySQL/MariaDB: SET SESSION TRANSACTION READ ONLY;
SQLite: the file opened read-only and PRAGMA query_only) under a statement timeout.

Connections: every one is built by services/connections.py from the URL's checked parts (query parameters
on a short allow-list per driver, the host resolved once and the connection made to that address, no LOAD
DATA LOCAL, the handshake under ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS; docs/connectors.md).

Web safety (``web=True``): a URL naming the app's own database (same server, judged on the address connected
to, port and database) is refused, SQLite files only inside ANONYMIZER_SQL_SQLITE_DIR (unset: SQLite refused
on the web; the CLI may open any file), and database servers only those ANONYMIZER_SQL_ALLOWED_HOSTS lists;
with the list empty, any server under DEBUG (`make run`) and none in production (servers_refusal).

Writing: a NEW table (an existing one is refused unless ``replace``), numbers typed where every published
value is a number (exports.column_kinds), text otherwise; the rows go to a temporary table that is renamed
into place at the end (the old table dropped first when replacing), so a failure leaves nothing behind.
"""

from __future__ import annotations

import csv
import io
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pandas as pd
from django.conf import settings

from ..engine import Format
from ..engine.io import reader as reader_mod
from ..engine.io.reader import Limits
from ..models import Dataset
from . import connections, datasets, ingestion, storage, vault
from .exports import typed_column

if TYPE_CHECKING:
    from sqlalchemy.sql.expression import Executable
    from sqlalchemy.types import TypeEngine

CHUNK_ROWS = 20_000
INSERT_ROWS = 5_000
DRIVERS = {scheme: driver for scheme, (_, driver) in connections.DRIVERS.items()}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306}
CSV_FORMAT = Format("csv", ",", "utf-8", True)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,62}")
SqlError = connections.SqlError  # raised here and by the connection builder alike


@dataclass(frozen=True)
class Source:
    """Where rows come from: a URL (its password apart) and a table or a query."""

    url: str
    table: str = ""
    query: str = ""

    @property
    def label(self) -> str:
        return self.table or "query"


# ---- URLs -----------------------------------------------------------------------------------------------
def parse_url(url) -> connections.Target:
    """The URL's parts, checked (services/connections.py: scheme, host, port, names, the query parameters'
    allow-list); a clear error for anything else."""
    return url if isinstance(url, connections.Target) else connections.parse(url)


def public_url(url) -> str:
    """The URL as it may be shown and stored: the password left out."""
    return parse_url(url).public_url()


def servers_refusal() -> str | None:
    """Why web users may not name a database server at all (None: they may). With DEBUG off and no
    ANONYMIZER_SQL_ALLOWED_HOSTS the app would connect to any host a user names, from inside the server's
    network (SSRF): production refuses until the administrator lists the servers; `make run` (DEBUG on)
    keeps any server but the app's own database."""
    if settings.DEBUG or getattr(settings, "ANONYMIZER_SQL_ALLOWED_HOSTS", None):
        return None
    return ("database servers cannot be named from the web app on this server until the administrator lists "
            "the ones allowed in the setting ANONYMIZER_SQL_ALLOWED_HOSTS (comma-separated host names); the "
            "command line (manage.py import_sql, manage.py anonymize --sql-url) is not restricted")


def check_web_url(parsed, databases: dict | None = None, sqlite_dir: str | None = None) -> None:
    """Refuse what a web user may not open: a server not listed in ANONYMIZER_SQL_ALLOWED_HOSTS, the app's own
    database, SQLite files outside the allowed folder. The own-database check is made again on the address
    actually connected to (connections.address_for)."""
    parsed = parse_url(parsed)
    sqlite_dir = getattr(settings, "ANONYMIZER_SQL_SQLITE_DIR", "") if sqlite_dir is None else sqlite_dir
    if parsed.backend == "sqlite":
        if not sqlite_dir:
            raise SqlError("SQLite files cannot be opened from the web app on this server (the administrator "
                           "may allow a folder: ANONYMIZER_SQL_SQLITE_DIR); use the command line instead")
        path = Path(parsed.database or "").resolve()
        if not parsed.database or not path.is_relative_to(Path(sqlite_dir).resolve()):
            raise SqlError(f"SQLite files may only be opened inside {sqlite_dir}")
        own = settings.DATABASES if databases is None else databases
        if any("sqlite" in str(conf.get("ENGINE", "")) and path == Path(str(conf.get("NAME", ""))).resolve()
               for conf in own.values()):
            raise SqlError("this is the app's own database: it cannot be a source or a destination")
        return
    refusal = servers_refusal()
    if refusal:
        raise SqlError(refusal)
    connections.require_server(parsed)
    allowed = [h.lower() for h in (getattr(settings, "ANONYMIZER_SQL_ALLOWED_HOSTS", None) or [])]
    if allowed and (parsed.host or "").lower().rstrip(".") not in allowed:
        raise SqlError(f"the server {parsed.host or 'localhost'!r} is not one this app may connect to; allowed: "
                       + ", ".join(allowed))
    if connections.is_ip(parsed.host or "") or (parsed.host or "").lower() == "localhost":
        # no look-up needed to judge it now; a name is judged on its address when connecting
        for address in connections.resolve(parsed.host or "", parsed.real_port):
            connections.check_address(parsed, address, databases)


def open_engine(url, web: bool = True, read_only: bool = True, password: str | None = None):
    """An engine for ``url`` (a password given apart wins over one in the URL), checked for the web when
    ``web``; every connection built by services/connections.py from the URL's checked parts: the resolved
    address, handshake and statement timeouts, read-only sessions where the backend allows."""
    target = parse_url(url).with_password(password)
    if web:
        check_web_url(target)
    return connections.create_engine(target, web=web, read_only=read_only)


def _server(parsed) -> str:
    return parse_url(parsed).server


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig.args[1] if len(getattr(orig, "args", ())) > 1 and isinstance(orig.args[1], str) else orig)
    return text.strip().splitlines()[0] if text.strip() else type(orig).__name__


def connection_error(exc: BaseException, url) -> SqlError:
    """An operational failure as a message: unreachable server, bad credentials, unknown database."""
    parsed = parse_url(url)
    text = _first_line(exc)
    low = text.lower()
    if "password authentication failed" in low or "access denied" in low or "authentication" in low:
        return SqlError(f"{_server(parsed)} refused the user name or password ({text})")
    if "does not exist" in low and "database" in low or "unknown database" in low:
        database = repr(parsed.database) if parsed.database else "(none named in the URL)"
        return SqlError(f"{_server(parsed)}: the database {database} does not exist ({text})")
    if "unable to open database" in low:
        return SqlError(f"{_server(parsed)} cannot be opened ({text})")
    return SqlError(f"cannot connect to {_server(parsed)}: {text}")


# ---- queries --------------------------------------------------------------------------------------------
_LITERALS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`|--[^\n]*|/\*.*?\*/", re.S)


def _connect(engine, url: str):
    """A connection of ``engine``; a server that cannot be reached is SqlError naming it (connection_error)."""
    from sqlalchemy.exc import DBAPIError

    try:
        return engine.connect()
    except DBAPIError as exc:
        raise connection_error(exc, url) from None


def check_query(query: str) -> str:
    """A single SELECT or WITH statement (a trailing semicolon allowed), returned without that semicolon."""
    text = query.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    if not text:
        raise SqlError("the query is empty")
    bare = _LITERALS.sub(lambda m: " " if m.group(0)[:2] in ("--", "/*") else "''", text)
    if "'" in bare.replace("''", "") or "/*" in bare:
        raise SqlError("the query has an unclosed quote or comment")
    if ";" in bare:
        raise SqlError("only one statement may be run: the query holds a ';' between statements")
    first = bare.split(None, 1)[0].lower() if bare.split() else ""
    if first not in ("select", "with"):
        raise SqlError(f"only a SELECT (or WITH ... SELECT) query may be run, not {first.upper() or 'this'}")
    if re.search(r"\binto\b", bare, re.I):  # SELECT ... INTO a table, a variable or a file writes
        raise SqlError("SELECT ... INTO writes (a table, a variable or a file): only a plain SELECT may be run")
    return text


def split_name(name: str) -> tuple[str | None, str]:
    parts = name.strip().split(".")
    if len(parts) > 2 or not all(parts):
        raise SqlError(f"{name!r}: name a table as table or schema.table")
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])


def _text(value) -> str:
    """A database value as the text a CSV cell holds (NULL: empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if value == value else ""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (date, time, Decimal)):
        return value.isoformat() if not isinstance(value, Decimal) else str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError("binary")
    return str(value)


def iter_rows(url: str, table: str = "", query: str = "", web: bool = True, caps: Limits | None = None,
              password: str | None = None, chunk_rows: int = CHUNK_ROWS,
              progress: Callable[[int], None] | None = None) -> Iterator[pd.DataFrame]:
    """The rows of ``table`` or ``query`` as frames of text, a partition of ``chunk_rows`` at a time, checked
    against ``caps``. Errors become SqlError naming the server, the table or the query."""
    from sqlalchemy import MetaData, Table, select, text
    from sqlalchemy.exc import DBAPIError, NoSuchTableError, SQLAlchemyError

    if bool(table) == bool(query):
        raise SqlError("name a table or give a query (one of the two)")
    caps = caps or Limits()
    statement: Executable | None = None
    if query:
        statement = text(check_query(query))
        what = f"the query ({query.strip()[:120]!r})"
    else:
        schema, name = split_name(table)
        what = f"the table {table!r}"
    engine = open_engine(url, web=web, password=password)
    try:
        with _connect(engine, url) as conn:
            try:
                if statement is None:
                    try:
                        statement = select(Table(name, MetaData(), schema=schema, autoload_with=conn))
                    except NoSuchTableError:
                        raise SqlError(f"{what} does not exist in the database "
                                       f"{parse_url(url).database!r} (or this user cannot see it)") from None
                result = conn.execution_options(stream_results=True, max_row_buffer=chunk_rows).execute(statement)
                names = reader_mod.column_names(list(result.keys()), what, caps, where="the column names")
                if caps.max_columns is not None and len(names) > caps.max_columns:
                    raise SqlError(f"{what}: {len(names)} columns, more than the limit of {caps.max_columns}")
                rows = 0
                for part in result.partitions(chunk_rows):
                    frame = _frame(part, names, rows, what, caps)
                    rows += len(frame)
                    if caps.max_rows is not None and rows > caps.max_rows:
                        raise SqlError(f"{what}: more than the limit of {caps.max_rows:,} rows")
                    if progress is not None:
                        progress(rows)
                    yield frame
                if rows == 0:
                    raise SqlError(f"{what}: no rows")
            except SqlError:
                raise
            except DBAPIError as exc:
                if exc.connection_invalidated or getattr(exc, "orig", None) is None:
                    raise connection_error(exc, url) from None
                raise SqlError(f"{what} failed: {_first_line(exc)}") from None
            except SQLAlchemyError as exc:
                raise SqlError(f"{what} failed: {_first_line(exc)}") from None
    finally:
        engine.dispose()


def _frame(part, names: list[str], offset: int, what: str, caps: Limits) -> pd.DataFrame:
    """A partition of rows as a frame of text, column by column (text columns, the common case, without a
    call per value), cells checked against the cap."""
    cap = caps.max_cell_chars
    columns: dict[str, list[str]] = {}
    for j, values in enumerate(zip(*part) if part else [() for _ in names]):
        kinds = set(map(type, values))
        if kinds <= {str, type(None)}:
            cells = ["" if v is None else v for v in values]
        elif kinds <= {int, type(None)}:
            cells = ["" if v is None else str(v) for v in values]
        else:
            try:
                cells = [_text(v) for v in values]
            except TypeError:
                r = next(r for r, v in enumerate(values) if isinstance(v, (bytes, bytearray, memoryview)))
                raise SqlError(f"{what}, row {offset + r + 1}, column {names[j]!r}: binary data cannot be "
                               "anonymized as a table cell; leave the column out or cast it to text") from None
        if cap is not None and cells and max(map(len, cells)) > cap:
            r = next(r for r, cell in enumerate(cells) if len(cell) > cap)
            raise SqlError(f"{what}, row {offset + r + 1}, column {names[j]!r}: a cell of {len(cells[r]):,} "
                           f"characters, more than the limit of {cap:,}")
        columns[names[j]] = cells
    return pd.DataFrame({n: pd.Series(columns.get(n, []), dtype=object) for n in names})


def write_csv_piece(frame: pd.DataFrame, fh, header: bool) -> None:
    """The rows as CSV text (the dataset's original): every value as it came, quoted where needed."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    if header:
        writer.writerow(list(frame.columns))
    writer.writerows(frame.itertuples(index=False, name=None))
    fh.write(out.getvalue().encode("utf-8"))


# ---- writing a result -----------------------------------------------------------------------------------
def check_table_name(name: str) -> tuple[str | None, str]:
    """schema.table or table, each a plain SQL name (letters, digits, _ and $, not starting with a digit)."""
    schema, table = split_name(name)
    for part in (schema, table):
        if part is not None and not NAME.fullmatch(part):
            raise SqlError(f"{name!r}: a table name is letters, digits and _ (at most 63, not starting with a digit)")
    return schema, table


def table_exists(url: str, name: str, web: bool = True, password: str | None = None) -> bool:
    """Whether ``name`` exists at ``url`` (checked before a long run, so that a refusal comes first)."""
    from sqlalchemy import inspect
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    schema, table = check_table_name(name)
    engine = open_engine(url, web=web, password=password)
    try:
        with engine.connect() as conn:
            return inspect(conn).has_table(table, schema=schema)
    except DBAPIError as exc:
        raise connection_error(exc, url) from None
    except SQLAlchemyError as exc:
        raise SqlError(f"checking the table {name!r} failed: {_first_line(exc)}") from None
    finally:
        engine.dispose()


def write_table(frame: pd.DataFrame, url: str, name: str, kinds: dict[str, str], replace: bool = False,
                web: bool = True, password: str | None = None,
                progress: Callable[[int], None] | None = None) -> int:
    """Write ``frame`` (text cells) to a new table ``name``: numeric columns per ``kinds``
    (exports.column_kinds), the others text; all or nothing. Returns the rows written."""
    from sqlalchemy import BigInteger, Column, Float, MetaData, Table, Text, inspect
    from sqlalchemy.dialects.mysql import MEDIUMTEXT
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError


    schema, table = check_table_name(name)
    engine = open_engine(url, web=web, read_only=False, password=password)
    temp = f"{table[:40]}_tmp_{secrets.token_hex(6)}"
    kinds_sql: dict[str, TypeEngine] = {"integer": BigInteger(), "decimal": Float(53),
                 "text": Text().with_variant(MEDIUMTEXT(), "mysql", "mariadb")}
    metadata = MetaData()
    columns = [str(c) for c in frame.columns]
    target = Table(temp, metadata, *[Column(c, kinds_sql[kinds.get(c, "text")]) for c in columns], schema=schema)
    values = [typed_column(frame[c], kinds.get(c, "text")).tolist() for c in frame.columns]
    created = False
    try:
        with _connect(engine, url) as conn:
            try:
                if inspect(conn).has_table(table, schema=schema) and not replace:
                    raise SqlError(f"the table {name!r} already exists; choose another name or replace it")
                target.create(conn)
                created = True
                conn.commit()
                written = 0
                for start in range(0, len(frame), INSERT_ROWS):
                    batch = [dict(zip(columns, row)) for row in
                             zip(*(v[start:start + INSERT_ROWS] for v in values))]
                    conn.execute(target.insert(), batch)
                    written += len(batch)
                    if progress is not None:
                        progress(written)
                quote = conn.dialect.identifier_preparer.quote
                qualified = (quote(schema) + "." if schema else "")
                old = replace and inspect(conn).has_table(table, schema=schema)
                if conn.dialect.name in ("mysql", "mariadb"):  # DDL commits there: one atomic RENAME swaps
                    moves = f"{qualified}{quote(temp)} TO {qualified}{quote(table)}"
                    if old:
                        aside = f"{table[:40]}_old_{secrets.token_hex(6)}"
                        moves = f"{qualified}{quote(table)} TO {qualified}{quote(aside)}, " + moves
                    conn.exec_driver_sql(f"RENAME TABLE {moves}")
                    created = False  # the new table is in place
                    if old:
                        conn.exec_driver_sql(f"DROP TABLE {qualified}{quote(aside)}")
                else:  # PostgreSQL, SQLite: the drop and the rename in one transaction
                    if old:
                        conn.exec_driver_sql(f"DROP TABLE {qualified}{quote(table)}")
                    conn.exec_driver_sql(f"ALTER TABLE {qualified}{quote(temp)} RENAME TO {quote(table)}")
                conn.commit()
                created = False
                return written
            except SqlError:
                raise
            except DBAPIError as exc:
                if exc.connection_invalidated:
                    raise connection_error(exc, url) from None
                raise SqlError(f"writing the table {name!r} failed: {_first_line(exc)}") from None
            except SQLAlchemyError as exc:
                raise SqlError(f"writing the table {name!r} failed: {_first_line(exc)}") from None
            finally:
                if created:  # nothing half-written: the temporary table goes
                    conn.rollback()
                    try:
                        target.drop(conn, checkfirst=True)
                        conn.commit()
                    except SQLAlchemyError:
                        pass
    finally:
        engine.dispose()


# ---- a dataset from a database --------------------------------------------------------------------------
@dataclass
class Staged:
    """The rows of a source read and written to files, before anything is stored in the app's database:
    the table's Parquet at ``staging`` and the same rows as CSV in ``original`` (a temporary file)."""

    staging: Path
    original: IO[bytes]
    n_rows: int
    columns: list[str]

    def discard(self) -> None:
        storage.discard(self.staging)
        self.original.close()


def count_rows(url: str, table: str, web: bool = True, password: str | None = None) -> int | None:
    """How many rows ``table`` holds (SELECT count(*), under the statement timeout), or None when that
    cannot be known cheaply or fails (the reading then names why): a query's rows are not counted (it would
    run twice). A server that cannot be reached is SqlError at once, not waited for twice."""
    from sqlalchemy import MetaData, Table, func, select
    from sqlalchemy.exc import SQLAlchemyError

    if not table:
        return None
    try:
        schema, name = split_name(table)
        engine = open_engine(url, web=web, password=password)
    except SqlError:
        return None
    try:
        with _connect(engine, url) as conn:
            target = Table(name, MetaData(), schema=schema, autoload_with=conn)
            return int(conn.execute(select(func.count()).select_from(target)).scalar_one())
    except SqlError:
        raise
    except (SQLAlchemyError, ValueError, TypeError):
        return None
    finally:
        engine.dispose()


def stage_import(url: str, table: str = "", query: str = "", web: bool = True, password: str | None = None,
                 progress: Callable[[int], None] | None = None, staging: Path | None = None) -> Staged:
    """Read ``table`` or ``query`` into a staging Parquet (at ``staging``, default a fresh name: an import job
    records it so that a sweep can remove it after a dead worker) and a CSV original; nothing of the app's
    database is touched. Nothing is left when anything fails, ``progress`` raising (a cancel) included."""
    import tempfile


    staging = staging or storage.staging_path()
    original = tempfile.TemporaryFile()

    def pieces():
        for i, frame in enumerate(iter_rows(url, table, query, web=web, caps=ingestion.limits(rows=web),
                                            password=password, chunk_rows=CHUNK_ROWS, progress=progress)):
            write_csv_piece(frame, original, header=i == 0)
            yield frame, CSV_FORMAT

    try:
        _, n_rows, columns = ingestion.write_parquet(pieces(), staging)
    except BaseException:
        storage.discard(staging)
        original.close()
        raise
    return Staged(staging, original, n_rows, columns)


def store_import(owner, staged: Staged, url: str, table: str = "", query: str = "", name: str | None = None,
                 keep_password: bool = False, password: str | None = None):
    """A new dataset of ``owner`` from ``staged`` rows: type inference, the source remembered without its
    password (kept vault-encrypted only when ``keep_password``). The staged files are used up; nothing is
    stored when anything fails."""
    from django.core.files import File
    from django.db import transaction


    parsed = parse_url(url)
    secret = password or parsed.password
    label = (table.strip() or "query")
    filename = datasets.shorten(f"{label}.csv", Dataset._meta.get_field("original_name").max_length)
    source = {"url": public_url(parsed), **({"table": table.strip()} if table else {"query": query.strip()})}
    if keep_password and secret:
        source["password"] = vault.encrypt_text(str(secret))
    dataset = Dataset(owner=owner, name=datasets.shorten(name or label, Dataset._meta.get_field("name").max_length),
                      original_name=filename, sql_source=source)
    try:
        original = staged.original
        dataset.size_bytes = original.tell()
        original.seek(0)
        storage.save_original(dataset, filename, File(original))
        with transaction.atomic():
            datasets.apply_format(dataset, CSV_FORMAT, staged.n_rows, len(staged.columns))
            dataset.save()
            datasets.describe_columns(dataset, staged.staging)
        storage.move(staged.staging, storage.table_path(dataset))
    except BaseException:
        if dataset.original.name:
            storage.delete_original(dataset)
        raise
    finally:
        staged.discard()
    return dataset


def import_dataset(owner, url: str, table: str = "", query: str = "", name: str | None = None,
                   web: bool = True, keep_password: bool = False, password: str | None = None,
                   progress: Callable[[int], None] | None = None):
    """A new dataset of ``owner`` holding the rows of ``table`` or ``query``: the upload's limits and type
    inference; the source remembered without its password (kept vault-encrypted only when
    ``keep_password``). Nothing is stored when anything fails."""
    staged = stage_import(url, table, query, web=web, password=password, progress=progress)
    return store_import(owner, staged, url, table, query, name=name, keep_password=keep_password, password=password)


def reimport_password(dataset) -> str | None:
    """The password kept for re-imports, decrypted (None when none was kept)."""
    token = (dataset.sql_source or {}).get("password")
    return vault.decrypt_text(token) if token else None
