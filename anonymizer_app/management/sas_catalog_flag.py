"""manage.py anonymize and risk: ``--sas-catalog FILE.sas7bcat``, the format catalog of a SAS INPUT. SAS keeps
value labels in this separate file; with it the labels are read as the values (as a .sav's labels), and a
.dta/.sav OUT re-attaches them. A .zip holding the .sas7bdat and its .sas7bcat works as INPUT without the flag.

The two are packed into a bundle (engine.io.sas_bundle) in a private temporary folder under INPUT's own name,
which the run then reads as INPUT; the folder is removed afterwards."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from anonymizer_app.engine import InputError
from anonymizer_app.engine.io import sas_bundle, statfiles

FLAG = "--sas-catalog"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(FLAG, default=None, metavar="FILE.sas7bcat",
                        help="the SAS format catalog of a .sas7bdat INPUT: its value labels are read as the values "
                             "(without it a .sas7bdat reads as its codes); or give INPUT as a .zip of the two")


def _read(path: Path, what: str, error: type[Exception]) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise error(f"{what}: cannot read the file ({exc.strerror})") from None


@contextmanager
def input_with_catalog(opts: dict, error: type[Exception], outputs: tuple[str, ...] = ()) -> Iterator[None]:
    """INPUT with --sas-catalog packed in as one bundle for the run (nothing done without the flag).
    ``outputs``: the option names of files the command writes, none of which may be INPUT or the catalog."""
    given = opts.get("sas_catalog")
    if not given:
        yield
        return
    where = f"{FLAG} {given}"
    if not opts.get("input"):
        raise error(f"{where}: give INPUT, the .sas7bdat file the catalog goes with")
    source, catalog = Path(opts["input"]), Path(given)
    if catalog.suffix.lower() != sas_bundle.CATALOG_SUFFIX:
        raise error(f"{where}: a SAS format catalog is a .sas7bcat file")
    for option in outputs:
        out = opts.get(option)
        if out and Path(out).exists() and Path(out).resolve() in (source.resolve(), catalog.resolve()):
            raise error(f"--{option.replace('_', '-')} {out}: would overwrite the input")
    data = _read(source, str(source), error)
    if statfiles.stat_kind(data[:64]) != "sas7bdat":
        raise error(f"{where}: {source} is not a SAS .sas7bdat file (a catalog goes with one; a .zip carries its "
                    f"own)")
    raw = _read(catalog, where, error)
    try:
        statfiles.check_catalog(raw, catalog.name)
    except InputError as exc:
        raise error(f"{where}: {exc}") from None
    folder = Path(tempfile.mkdtemp(prefix="sas-catalog-"))  # 0700: the rows are personal data
    try:
        bundle = folder / source.name  # INPUT's name: its messages and the output's table name stay the same
        bundle.write_bytes(sas_bundle.pack(sas_bundle.SasPair(data, source.name, raw, catalog.name)))
        opts["input"] = str(bundle)
        try:
            yield
        finally:
            opts["input"] = str(source)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
