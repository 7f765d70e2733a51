"""Data at rest: the SQLite database file and the media folder readable by the server's user only.

New files are private from the start (the umask of settings.py, storage's own chmods); ``migrate`` (run by
every start command) also makes private what an older version left readable to others."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

from . import storage

SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def database_files() -> list[Path]:
    """The files of every SQLite database in DATABASES (none for PostgreSQL or an in-memory database)."""
    out = []
    for db in settings.DATABASES.values():
        name = str(db.get("NAME") or "")
        if db.get("ENGINE") != "django.db.backends.sqlite3" or not name or "memory" in name:
            continue
        out += [Path(name + suffix) for suffix in SQLITE_SUFFIXES if Path(name + suffix).is_file()]
    return out


def secure_database_files() -> None:
    for path in database_files():
        os.chmod(path, storage.FILE_MODE)


def secure_all() -> None:
    secure_database_files()
    storage.make_private(storage.media_root())


def after_migrate(sender, **kwargs) -> None:
    """post_migrate is sent once per app: act on this app's only."""
    if sender.name == "anonymizer_app":
        secure_all()
