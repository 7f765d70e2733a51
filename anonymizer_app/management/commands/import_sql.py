"""manage.py import_sql: a new dataset of a user from a database table or one SELECT query.

    python manage.py import_sql --user alice --sql-url postgresql://reader@db:5432/clinic \\
        --sql-table public.patients [--name Patients] [--keep-password]

The rows are read in chunks (services/sql.py: read-only, statement timeout, the upload's limits) and the
dataset appears in the user's list as an upload would. The URL is stored without its password; with
--keep-password the password is kept encrypted (services/vault.py) for re-imports. Progress goes to
stderr; the dataset's id and size to stdout. Exit status 2 on bad flags or an import that fails (nothing
is stored then)."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from anonymizer_app.engine import EngineError
from anonymizer_app.management.base import OneLineCommand, UserError
from anonymizer_app.services import sql


class Command(OneLineCommand):
    prog = "import_sql"
    help = "Import a database table or a SELECT query's rows as a new dataset of a user."
    requires_system_checks = "__all__"  # it writes to the app's database

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, metavar="USERNAME", help="the dataset's owner")
        parser.add_argument("--sql-url", required=True, metavar="URL",
                            help="postgresql://user@host:5432/db, mysql://user@host:3306/db or sqlite:///file.db")
        parser.add_argument("--sql-table", default=None, metavar="T", help="table or schema.table")
        parser.add_argument("--sql-query", default=None, metavar="Q", help="one SELECT (or WITH ... SELECT)")
        parser.add_argument("--name", default=None, metavar="NAME", help="the dataset's name (default: the table's)")
        parser.add_argument("--keep-password", action="store_true",
                            help="keep the URL's password, encrypted, for re-imports")

    def handle(self, *args, **opts):
        if bool(opts["sql_table"]) == bool(opts["sql_query"]):
            raise UserError("give --sql-table T or --sql-query Q (one of the two)")
        owner = get_user_model().objects.filter(username=opts["user"]).first()
        if owner is None:
            raise UserError(f"--user: no user {opts['user']!r}")

        def progress(rows: int) -> None:
            self.stderr.write(f"read {rows:,} rows")

        try:
            dataset = sql.import_dataset(owner, opts["sql_url"], table=opts["sql_table"] or "",
                                         query=opts["sql_query"] or "", name=opts["name"], web=False,
                                         keep_password=opts["keep_password"], progress=progress)
        except EngineError as exc:
            raise UserError(str(exc)) from None
        self.stdout.write(f"dataset {dataset.pk} ({dataset.name}) for {owner.username}: {dataset.n_rows:,} rows, "
                          f"{dataset.n_columns} columns")
