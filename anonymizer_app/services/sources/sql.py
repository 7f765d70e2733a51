"""An SQL database (PostgreSQL, MySQL/MariaDB, SQLite): a table or one SELECT query read in chunks on a worker
(services/sql.py does the reading; its page, ``/api/v1/sql/import/`` and ``manage.py import_sql``)."""

from __future__ import annotations

from ...engine.errors import InputError
from .. import sql, vault
from .base import ImportSteps, Source, register


def _rows_phase(imp, rows: int, total: int | None) -> str:
    counted = f" of {total:,}" if total else ""
    return f"read {rows:,}{counted} rows of {imp.label}"[:255]


def read_import(imp, steps: ImportSteps):
    """A queued import's reading step: count the table, read it in chunks (the rows read written to the row,
    a cancel honoured at the next chunk), store it as a dataset."""
    try:
        password = vault.decrypt_text(imp.password) if imp.password else None
    except vault.VaultError as exc:
        raise InputError(f"the password given for the import cannot be read: {exc}") from None
    total = sql.count_rows(imp.url, imp.table, web=True, password=password) if imp.table else None
    steps.counted(0, total, _rows_phase(imp, 0, total))

    def progress(rows: int) -> None:
        steps.counted(rows, total, _rows_phase(imp, rows, total))
        steps.check_cancel()

    staged = sql.stage_import(imp.url, imp.table, imp.query, web=True, password=password, progress=progress,
                              staging=steps.staging)
    try:
        steps.check_cancel()
    except BaseException:
        staged.discard()
        raise
    steps.phase(f"storing {staged.n_rows:,} rows as a dataset")
    return sql.store_import(imp.owner, staged, imp.url, imp.table, imp.query, name=imp.name or None,
                            keep_password=imp.keep_password, password=password)


register(Source(
    name="sql",
    label="SQL database",
    summary="A table or one SELECT query of a PostgreSQL, MySQL/MariaDB or SQLite database, read in chunks "
            "in a read-only transaction on a worker.",
    offer="Import from a database…",
    page="anonymizer:import_sql",
    link_id="import-sql-link",
    api="sql/import/",
    command="import_sql",
    queued=read_import,
))
