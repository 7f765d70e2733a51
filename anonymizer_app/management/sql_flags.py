"""manage.py anonymize with a SQL database as the source or the destination (services/sql.py):

    --sql-url URL (--sql-table T | --sql-query Q)   read the rows from a table or one SELECT, not INPUT
    --out-sql URL --out-table NAME [--out-replace]  write the published rows to a new table (with or
                                                    without --out)

The rows read are kept as a CSV file in a private temporary folder for the run (the one reader every
path of the command uses then reads them; the folder is removed at the end). The CLI may open SQLite
files anywhere (the web app may not); queries still run read-only with a statement timeout. The table is
written after the run succeeded and before OUT is renamed into place: OUT and the table appear together
or not at all (a failed table write leaves no table)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anonymizer_app.services import exports

if TYPE_CHECKING:
    import pandas as pd


def _sql():
    """services.sql, imported by the runs that read or write a database only: it loads the vault's cryptography
    and the database drivers' helpers (20 ms and more), which every other `manage.py anonymize` would pay."""
    from anonymizer_app.services import sql

    return sql


@dataclass
class Destination:
    url: str
    table: str
    replace: bool

    def write(self, frame: pd.DataFrame, types: dict | None, progress) -> int:
        total = max(1, len(frame))
        sql = _sql()
        return sql.write_table(frame, self.url, self.table, exports.column_kinds(frame, types), replace=self.replace,
                               web=False, progress=lambda n: progress(n / total, f"writing the table {self.table}: "
                                                                              f"{n:,} of {len(frame):,} rows"))

    @property
    def label(self) -> str:
        return f"table {self.table} at {_sql().public_url(self.url)}"


DESTINATION: ContextVar[Destination | None] = ContextVar("sql_destination", default=None)


def add_arguments(parser) -> None:
    group = parser.add_argument_group("SQL databases (PostgreSQL postgresql://, MySQL/MariaDB mysql://, SQLite "
                                      "sqlite:///file.db)")
    group.add_argument("--sql-url", default=None, metavar="URL",
                       help="read the table from this database instead of INPUT (with --sql-table or --sql-query)")
    group.add_argument("--sql-table", default=None, metavar="T", help="the table to read: table or schema.table")
    group.add_argument("--sql-query", default=None, metavar="Q",
                       help="one SELECT (or WITH ... SELECT) statement, run read-only with a statement timeout")
    group.add_argument("--out-sql", default=None, metavar="URL",
                       help="also (or, without --out, only) write the published rows to a new table here")
    group.add_argument("--out-table", default=None, metavar="NAME", help="the new table's name (with --out-sql)")
    group.add_argument("--out-replace", action="store_true",
                       help="replace the --out-table if it exists (refused otherwise)")


@contextmanager
def sources(command, opts: dict, progress) -> Iterator[dict]:
    """Check the SQL flags, read a --sql-url source into a private temporary CSV (opts["input"]), set the
    --out-sql destination for write_publication; yields a dict whose "summary" callable fixes the summary."""
    error = command.error_class
    fixes: dict = {"summary": lambda text: text}
    url, table, query = opts["sql_url"], opts["sql_table"], opts["sql_query"]
    if url is None and (table or query):
        raise error("--sql-table and --sql-query read from --sql-url URL: give it")
    if url is not None:
        if opts["input"]:
            raise error(f"--sql-url replaces INPUT: give one of them, not both ({opts['input']})")
        if bool(table) == bool(query):
            raise error("--sql-url: give --sql-table T or --sql-query Q (one of the two)")
    elif not opts["input"]:
        raise error("the following arguments are required: INPUT (a table file) or --sql-url URL")
    if (opts["out_sql"] is None) != (opts["out_table"] is None):
        raise error("--out-sql URL and --out-table NAME go together")
    if opts["out_replace"] and opts["out_sql"] is None:
        raise error("--out-replace applies to --out-sql")
    whole = opts["out_sql"] is not None or Path(opts["out"] or "").suffix.lower() in (".parquet", ".xlsx", ".jsonl",
                                                                                  ".dta", ".sav")
    if whole and opts.get("transactions"):
        raise error("--transactions writes a transaction file: --out FILE.txt/.csv, not a table or workbook")
    if whole and opts.get("cluster") is not None:
        raise error("--cluster writes CSV: give --out FILE.csv (no --out-sql, .parquet, .xlsx or .jsonl)")
    if opts["out"] is None and opts["out_sql"] is None:
        raise error("the following arguments are required: --out (or --out-sql URL --out-table NAME)")
    folder = Path(tempfile.mkdtemp(prefix="anonymize-sql-"))  # 0700: the rows are personal data
    token = None
    try:
        if opts["out_sql"] is not None or url is not None:
            sql = _sql()
        if opts["out_sql"] is not None:
            sql.parse_url(opts["out_sql"])
            sql.check_table_name(opts["out_table"])
            destination = Destination(opts["out_sql"], opts["out_table"], opts["out_replace"])
            if not opts["out_replace"] and sql.table_exists(opts["out_sql"], opts["out_table"], web=False):
                raise error(f"--out-table {opts['out_table']}: the table already exists at "
                            f"{sql.public_url(opts['out_sql'])}; choose another name or give --out-replace")
            token = DESTINATION.set(destination)
            if opts["out"] is None:
                opts["out"] = str(folder / "published.csv")
                shown = opts["out"]
                fixes["summary"] = lambda text: text.replace(shown, destination.label)
            else:
                plain = fixes["summary"]
                fixes["summary"] = lambda text: plain(text) + f"; {destination.label}"
        if url is not None:
            name = (table or "query").replace("/", "_")
            path = folder / f"{name}.csv"
            with open(path, "wb") as fh:
                for i, frame in enumerate(sql.iter_rows(url, table or "", query or "", web=False, progress=lambda n:
                                                        progress(0.0, f"reading {sql.public_url(url)}: {n:,} rows"))):
                    sql.write_csv_piece(frame, fh, header=i == 0)
            progress.close()
            opts["input"] = str(path)
            if opts["delimiter"] is None:
                opts["delimiter"] = ","
        yield fixes
    finally:
        if token is not None:
            DESTINATION.reset(token)
        shutil.rmtree(folder, ignore_errors=True)
