"""manage.py build_hierarchy: build a generalization hierarchy for one column and write it to a file.

    python manage.py build_hierarchy adult.csv --column age --kind intervals --width 5 --fanout 2,2 \\
        --out age.csv
    python manage.py build_hierarchy db_100.csv --column zip_code --kind masking --format amnesia-json \\
        --out zip.json
    python manage.py build_hierarchy baskets.txt --transactions --item-delimiter , --kind grouping \\
        --order frequency --fanout 4 --out items.csv
    python manage.py build_hierarchy orders.csv --set-column basket --item-delimiter '|' --kind grouping --out items.csv

Items (set-valued data): with --transactions INPUT is a transaction file (one record per line, items
separated by --item-delimiter, the record id first with --record-id), with --set-column COL the items are
those of a table's set-valued column; the builder runs on the item occurrences (records as sets:
engine.setvalued.item_hierarchy), as the web app's item builders do.

The builder options are flags generated from engine.model.builders.BUILDERS (one per parameter name,
shared where two builders take the same option). No database is needed. Every error is one line on
stderr, `build_hierarchy: error: ...`, with exit status 2, and the output file is only written
(under a temporary name, then renamed) after the hierarchy was built and serialized.
"""

from __future__ import annotations

import argparse
import os
import secrets
from pathlib import Path

from django.conf import settings

from anonymizer_app.engine import EngineError, read_table
from anonymizer_app.engine.model.builders import BUILDERS, build, get_builder
from anonymizer_app.engine.model.formats import FORMATS, write_hierarchy
from anonymizer_app.engine.model.hierarchy import without_missing
from anonymizer_app.engine.privacy import Parameter
from anonymizer_app.engine.setvalued import column_transactions, parse_transactions
from anonymizer_app.engine.setvalued.item_hierarchy import ITEM_BUILDERS, build_item_hierarchy
from anonymizer_app.engine.setvalued.transactions import delimiter_of
from anonymizer_app.management.base import OneLineCommand, UserError

PROG = "build_hierarchy"
RENAMED = {"--format": "--date-format"}  # the dates builder's 'format' would clash with the output --format


class BuildError(UserError):
    """A message for the user, printed as one line (exit status 2 unless said otherwise)."""


def builder_flags() -> dict[str, tuple[Parameter, list[str]]]:
    """flag -> (parameter, builders taking it), from the registry."""
    flags: dict[str, tuple[Parameter, list[str]]] = {}
    for info in BUILDERS.values():
        for p in info.parameters:
            flags.setdefault(RENAMED.get(p.flag, p.flag), (p, []))[1].append(info.name)
    return flags


def _dest(p: Parameter) -> str:
    return "opt_" + p.name.replace(" ", "_").replace("-", "_")


def _escaped(text: str) -> str:
    """A builder's help as argparse help: a % there (the dates format's %d/%m/%Y) would be read as a placeholder
    and break --help."""
    return text.replace("%", "%%")


class Command(OneLineCommand):
    prog = PROG
    error_class = BuildError
    help = ("Build a generalization hierarchy (intervals, grouping, masking, dates, data-driven) for a "
            "column of a table and write it as ARX (default), Datafly, Amnesia text or Amnesia JSON. "
            "Exit status: 0 done, 2 bad arguments, files or values.")

    def add_arguments(self, parser):
        parser.add_argument("input", metavar="INPUT", help="the table: .csv/.tsv/.txt (delimiter sniffed), .xlsx, .dta, .sav or .sas7bdat")
        parser.add_argument("--column", default=None, metavar="COL",
                            help="the column to build the hierarchy for (required unless --transactions or --set-column)")
        items = parser.add_argument_group("items of set-valued data")
        items.add_argument("--transactions", action="store_true",
                           help="INPUT is a transaction file: one record per line, items separated by --item-delimiter")
        items.add_argument("--record-id", action="store_true",
                           help="with --transactions: the first field of each line is the record's id, not an item")
        items.add_argument("--set-column", default=None, metavar="COL",
                           help="a set-valued column of the table (items separated by --item-delimiter in the cell)")
        items.add_argument("--item-delimiter", default=None, metavar="D",
                           help="between the items: one character or comma, semicolon, tab, pipe, space (default: "
                                "',' with --transactions, '|' with --set-column)")
        parser.add_argument("--kind", required=True, choices=list(BUILDERS),
                            help="; ".join(f"{i.name}: {i.summary}" for i in BUILDERS.values()))
        parser.add_argument("--format", dest="fmt", choices=FORMATS, default="arx",
                            help="output format (default: arx, one row per value, ';')")
        parser.add_argument("--out", required=True, metavar="FILE", help="the hierarchy file to write")
        for flag, (p, owners) in builder_flags().items():
            if p.kind is bool:
                parser.add_argument(flag, dest=_dest(p), default=None, action=argparse.BooleanOptionalAction,
                                    help=f"{_escaped(p.help)} (kinds: {', '.join(owners)}; default: {p.default})")
            else:
                choices = sorted({c for i in owners for c in (get_builder(i).parameter(p.name).choices or ())})
                parser.add_argument(flag, dest=_dest(p), default=None, metavar=p.name.upper(),
                                    choices=choices or None,
                                    help=f"{_escaped(p.help)} (kinds: {', '.join(owners)}; default: "
                                         f"{'from the data' if p.default is None else p.default})")

    def handle(self, *args, **opts):
        kind = opts["kind"]
        info = get_builder(kind)
        given = {}
        for flag, (p, owners) in builder_flags().items():
            value = opts.get(_dest(p))
            if value is None:
                continue
            if kind not in owners:
                raise BuildError(f"{flag} does not apply to --kind {kind} (it is an option of {', '.join(owners)})")
            given[info.parameter(p.name).name] = value
        source, out = Path(opts["input"]), Path(opts["out"])
        if out.exists() and out.is_dir():
            raise BuildError(f"--out {out}: is a directory")
        if not out.parent.exists():
            raise BuildError(f"--out {out}: the folder {out.parent} does not exist")
        limit = getattr(settings, "HIERARCHY_BUILDER_MAX_INTERVALS", None)
        items = opts["transactions"] or opts["set_column"] is not None
        self._check_item_flags(opts)
        try:
            if items:
                tx = self._items(source, opts)
                if kind not in ITEM_BUILDERS:
                    raise BuildError(f"--kind {kind} does not apply to items; choose one of {', '.join(ITEM_BUILDERS)}")
                name = opts["set_column"] or "items"
                h = build_item_hierarchy(tx, kind, name, **given, max_intervals=limit)
            else:
                frame, _ = read_table(source)
                if opts["column"] not in frame.columns:
                    raise BuildError(f"{source.name}: no column {opts['column']!r}; columns: "
                                     f"{', '.join(map(str, frame.columns))}")
                name = opts["column"]
                h = build(kind, name, frame[name], **given, max_intervals=limit)
            # a file's leaf cannot be empty: the missing value's leaf is left out (a run adds it again)
            text = write_hierarchy(without_missing(h), opts["fmt"])
        except OSError as exc:
            raise BuildError(f"{source}: cannot read the file ({exc.strerror})") from None
        except EngineError as exc:
            raise BuildError(str(exc)) from None
        _write(out, text)
        if opts.get("verbosity", 1) > 0:
            levels = " -> ".join(str(len(lab)) for lab in h.labels)
            notes = "".join(f"; {n}" for n in h.notes)
            what = "items" if items else "values"
            self.stdout.write(f"{out}: {kind} hierarchy of {name!r}, {len(h.leaves)} {what}, "
                              f"labels per level {levels}{notes}")


    @staticmethod
    def _check_item_flags(opts: dict) -> None:
        if opts["transactions"] and opts["set_column"] is not None:
            raise BuildError("give --transactions or --set-column, not both")
        if opts["transactions"] or opts["set_column"] is not None:
            if opts["column"] is not None:
                raise BuildError("--column applies to tables; items are read with --transactions or --set-column")
        elif opts["column"] is None:
            raise BuildError("--column: name the column to build the hierarchy for (or give --transactions or "
                             "--set-column for items)")
        elif opts["record_id"] or opts["item_delimiter"] is not None:
            raise BuildError("--record-id and --item-delimiter apply to --transactions or --set-column")
        if opts["record_id"] and not opts["transactions"]:
            raise BuildError("--record-id applies to --transactions input")

    @staticmethod
    def _items(source: Path, opts: dict):
        """The records of items: a transaction file, or a table's set-valued column."""
        if opts["transactions"]:
            delimiter = delimiter_of(opts["item_delimiter"] or ",")
            try:
                with open(source, encoding="utf-8-sig", newline="") as fh:
                    return parse_transactions(fh, delimiter, has_id=opts["record_id"], where=source.name)
            except UnicodeDecodeError as exc:
                raise BuildError(f"{source.name}: not UTF-8 text (byte {exc.start})") from None
        delimiter = delimiter_of(opts["item_delimiter"] or "|")
        frame, _ = read_table(source)
        column = opts["set_column"]
        if column not in frame.columns:
            raise BuildError(f"{source.name}: no column {column!r}; columns: {', '.join(map(str, frame.columns))}")
        return column_transactions(frame[column].astype(str).tolist(), delimiter, column, where=source.name)


def _write(path: Path, text: str) -> None:
    """Write under a temporary name in the same folder, then rename into place."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise BuildError(f"--out {path}: cannot write ({exc.strerror})") from None
    finally:
        if tmp.exists():
            tmp.unlink()
