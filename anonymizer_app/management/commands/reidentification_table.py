"""manage.py reidentification_table: decrypt a re-identification table written by `manage.py anonymize
--reidentification-table FILE --reidentification-key-file KEY` (original -> pseudonym/surrogate, CSV).

    python manage.py reidentification_table FILE --key-file KEY [--out CSV]

Without --out the CSV goes to stdout; --out writes it with mode 0600. Exit status: 0 done, 2 a missing or wrong
key or file (one line on stderr).
"""

from __future__ import annotations

import os
from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.management import identifier_flags
from anonymizer_app.management.base import OneLineCommand, UserError

PROG = "reidentification_table"


class TableError(UserError):
    """One line on stderr, exit status 2."""


class Command(OneLineCommand):
    prog = PROG
    error_class = TableError
    help = "Decrypt a re-identification table written by manage.py anonymize --reidentification-table."

    def add_arguments(self, parser):
        parser.add_argument("table", metavar="FILE", help="the encrypted table")
        parser.add_argument("--key-file", required=True, metavar="KEY", help="its --reidentification-key-file")
        parser.add_argument("--out", default=None, metavar="CSV", help="write the CSV here (mode 0600), not stdout")

    def handle(self, *args, **opts):
        try:
            text = identifier_flags.read_table(opts["table"], opts["key_file"])
        except engine.InputError as exc:
            raise TableError(str(exc)) from None
        if opts["out"] is None:
            self.stdout.write(text, ending="")
            return
        target = Path(opts["out"])
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
