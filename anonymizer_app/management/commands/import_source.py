"""manage.py import_source: a new dataset of a user from a source that declares its parameters
(anonymizer_app/services/sources), one sub-command per such source with one flag per parameter:

    python manage.py import_source NAME --user alice [--name NAME] [--<parameter> VALUE ...]

The table the source fetches goes through the upload's ingestion (limits, type detection) and the dataset
appears in the user's list as an upload would; its id and size go to stdout. Sources with commands of their
own (import_sql, import_remote, anonymize_dicom) are named in the help. Exit status 2 on bad flags or an
import that fails (nothing is stored then)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandParser

from anonymizer_app.engine.errors import EngineError
from anonymizer_app.management.base import OneLineCommand, UserError
from anonymizer_app.services import sources

KINDS = {int: int, float: float}


def _dest(name: str) -> str:
    return "param_" + name.replace(" ", "_").replace("-", "_")


class Command(OneLineCommand):
    prog = "import_source"
    help = "Import a dataset of a user from a source with parameters (services/sources)."
    requires_system_checks = "__all__"  # it writes to the app's database

    def create_parser(self, prog_name: str, subcommand: str, **kwargs) -> CommandParser:
        self.subparsers: list[CommandParser] = []
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        for sub in self.subparsers:  # a bad flag of a source: one line, exit 2, as the command's own
            sub.error = parser.error  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser):
        own = [f"{s.label}: manage.py {s.command}" for s in sources.SOURCES.values() if s.command and not s.generic]
        parser.epilog = "Sources with commands of their own: " + "; ".join(own) if own else None
        generic = [s.name for s in sources.SOURCES.values() if s.generic]
        sub = parser.add_subparsers(dest="source", metavar="SOURCE", required=True, parser_class=type(parser),
                                    title="sources", description=", ".join(generic) or "none registered yet")
        for source in sources.SOURCES.values():
            if not source.generic:
                continue
            p = sub.add_parser(source.name, help=source.summary, description=source.summary,
                               called_from_command_line=getattr(parser, "called_from_command_line", None))
            self.subparsers.append(p)
            p.add_argument("--user", required=True, metavar="USERNAME", help="the dataset's owner")
            p.add_argument("--name", default=None, metavar="NAME", help="the dataset's name (default: the file's)")
            for param in source.parameters:
                p.add_argument(param.flag, dest=_dest(param.name), default=None, type=KINDS.get(param.kind, str),
                               choices=param.choices, metavar=None if param.choices else param.name.upper(),
                               help=f"{param.help} (default: {param.default})")

    def handle(self, *args, **opts):
        source = sources.get_source(opts["source"])
        owner = get_user_model().objects.filter(username=opts["user"]).first()
        if owner is None:
            raise UserError(f"--user: no user {opts['user']!r}")
        given = {p.name: opts[_dest(p.name)] for p in source.parameters if opts.get(_dest(p.name)) is not None}

        def progress(done: int) -> None:
            self.stderr.write(f"read {done:,}")

        try:
            dataset = sources.import_dataset(owner, source.name, given, opts["name"], progress=progress)
        except EngineError as exc:
            raise UserError(str(exc)) from None
        self.stdout.write(f"dataset {dataset.pk} ({dataset.name}) for {owner.username}: {dataset.n_rows:,} rows, "
                          f"{dataset.n_columns} columns from {source.label}")
