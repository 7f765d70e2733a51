"""manage.py import_remote: a new dataset of a user from a file of a Zenodo record or a Dataverse dataset.

    python manage.py import_remote zenodo 10.5281/zenodo.123 --user alice [--file visits.csv]
    python manage.py import_remote dataverse doi:10.5072/FK2/ABCDEF --user alice --base-url \\
        https://demo.dataverse.org [--token-file dv.token | --account "My Dataverse"] [--list]

The file is downloaded under the upload's size limit and read exactly as an upload (services/remote.py);
a Dataverse tabular file is fetched in its original format. Without --file the record's one table file is
taken (several: the command names them). --list prints the files and stores nothing. The token: --account
(a stored connection of the user), --token-file, or $ZENODO_TOKEN / $DATAVERSE_TOKEN; public records need
none. The dataset's id and size go to stdout; exit status 2 when anything fails (nothing stored then)."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from anonymizer_app.engine import EngineError
from anonymizer_app.management.base import OneLineCommand, UserError
from anonymizer_app.management.remote_flags import add_connection_flags, connection
from anonymizer_app.services import remote


class Command(OneLineCommand):
    prog = "import_remote"
    help = "Import a CSV/TSV/Excel file of a Zenodo record or a Dataverse dataset as a new dataset of a user."
    requires_system_checks = "__all__"

    def add_arguments(self, parser):
        parser.add_argument("service", choices=["zenodo", "dataverse"])
        parser.add_argument("identifier", metavar="ID",
                            help="Zenodo: record number, DOI or page; Dataverse: doi:... of a dataset or a file id")
        parser.add_argument("--user", required=True, metavar="USERNAME", help="the dataset's owner")
        parser.add_argument("--file", default=None, metavar="NAME", help="the file's name in the record")
        parser.add_argument("--name", default=None, metavar="NAME", help="the dataset's name (default: the file's)")
        parser.add_argument("--list", action="store_true", help="list the record's files and stop")
        add_connection_flags(parser)

    def handle(self, *args, **opts):
        owner = get_user_model().objects.filter(username=opts["user"]).first()
        if owner is None:
            raise UserError(f"--user: no user {opts['user']!r}")
        service = opts["service"]
        try:
            client = connection(service, opts, owner)
            files = remote.list_files(service, client, opts["identifier"])
            if opts["list"]:
                for f in files:
                    size = f"{f.size:,} bytes" if f.size is not None else "size unknown"
                    self.stdout.write(f"{f.name}\t{size}\t{'table' if f.is_table else 'not a table'}")
                return
            chosen = remote.choose_file(files, opts["file"], f"{remote.SERVICES[service]} {opts['identifier']}")

            def progress(done: int) -> None:
                if done % (8 << 20) < remote.CHUNK_BYTES:
                    self.stderr.write(f"downloaded {done / 1048576:.0f} MB of {chosen.name}")

            dataset = remote.import_file(owner, client, chosen, name=opts["name"], progress=progress,
                                         catalog=remote.sas_catalog(files, chosen))  # a SAS file's labels
        except EngineError as exc:
            raise UserError(str(exc)) from None
        self.stdout.write(f"dataset {dataset.pk} ({dataset.name}) for {owner.username} from {client.label}: "
                          f"{dataset.n_rows:,} rows, {dataset.n_columns} columns")
