"""A SAS upload with its format catalog: SAS keeps value labels in a .sas7bcat file beside the .sas7bdat, so
the upload takes the catalog as a second file or both in one .zip (engine.io.sas_bundle). The two are stored as
one original (a bundle, the data first), which every later read of the dataset (re-reading, exports' labels)
finds whole. Checked before anything is stored: a .zip unpacks within the upload limit and holds nothing else,
the catalog is a readable catalog (refused by its name) and goes with a SAS data file."""

from __future__ import annotations

import zipfile
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile

from ..engine import InputError
from ..engine.io import sas_bundle, statfiles
from . import storage


def _limit() -> int:
    return settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024


def _read(upload, name: str) -> bytes:
    try:
        upload.seek(0)
        return upload.read()
    except OSError as exc:
        raise InputError(f"{name}: cannot read the file ({exc})") from None


def prepare(upload, filename: str, catalog=None):
    """What to store for an upload (the file itself, or a bundle of the data and ``catalog``), after the
    checks above; InputError naming the file otherwise."""
    is_zip = Path(filename).suffix.lower() == ".zip"
    if catalog is None and not is_zip:
        return upload
    if is_zip:
        if catalog is not None:
            raise InputError(f"{catalog.name}: a .zip upload carries its catalog inside; upload the .zip alone")
        pair = sas_bundle.unpack(_read(upload, filename), filename, max_bytes=_limit())
        if statfiles.stat_kind(pair.data[:64]) != "sas7bdat":
            raise InputError(f"{filename}, member {pair.data_name!r}: not a SAS .sas7bdat file")
        if pair.catalog is not None:
            statfiles.check_catalog(pair.catalog, pair.catalog_name)
        return upload  # stored as it came: the reader unpacks it each time
    data = _read(upload, filename)
    if statfiles.stat_kind(data[:64]) != "sas7bdat":
        raise InputError(f"{catalog.name}: a SAS format catalog goes with a SAS .sas7bdat file; {filename} is not one")
    catalog_bytes = _read(catalog, catalog.name)
    statfiles.check_catalog(catalog_bytes, catalog.name)
    bundle = sas_bundle.pack(sas_bundle.SasPair(data, filename, catalog_bytes, catalog.name))
    if len(bundle) > _limit():
        raise InputError(f"{filename} with {catalog.name}: {len(bundle) / 1048576:.1f} MB together, more than the "
                         f"limit of {settings.ANONYMIZER_MAX_UPLOAD_MB} MB")
    return ContentFile(bundle)


def catalog_name(dataset) -> str | None:
    """The name of the format catalog stored with a SAS dataset ("" without one), from the zip's directory alone
    (no data read); None for other datasets or when the original is gone."""
    if dataset.kind != "sas7bdat" or not dataset.original:
        return None
    try:
        with open(storage.original_path(dataset), "rb") as fh:
            if fh.read(len(sas_bundle.ZIP_MAGIC)) != sas_bundle.ZIP_MAGIC:
                return ""
            fh.seek(0)
            with zipfile.ZipFile(fh) as archive:
                names = [n for n in archive.namelist() if n.lower().endswith(sas_bundle.CATALOG_SUFFIX)]
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    return names[0] if names else ""


def label_notice(dataset) -> str | None:
    """What the upload says about a SAS dataset's value labels: read from its catalog (which variables), or
    codes shown since no catalog came with it; None for other datasets."""
    if dataset.kind != "sas7bdat":
        return None
    from .exports import dataset_labels  # exports imports the storage and result services

    metadata = dataset_labels(dataset)
    if metadata is None:
        return None
    if not metadata.catalog:
        return ("SAS keeps value labels in a separate format catalog (.sas7bcat), which did not come with this "
                "file: its codes are shown. To see the labels, upload the .sas7bdat again with its .sas7bcat "
                "(the catalog field, or both files in one .zip).")
    if not metadata.value_labels:
        return (f"{metadata.catalog} defines none of the formats this file's variables use: their codes are "
                f"shown.")
    names = sorted(metadata.value_labels)
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return f"Value labels from {metadata.catalog}: {len(names)} variable{'s' if len(names) != 1 else ''} ({shown})."
