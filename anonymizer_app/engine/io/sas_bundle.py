"""A SAS table with its format catalog. SAS keeps value labels (its user-defined formats) outside the data
file, in a .sas7bcat catalog: the two travel together as a zip holding one .sas7bdat and at most one
.sas7bcat (uploaded so, or packed by the upload when the two come as separate files, the data first), so
every later read of the stored original finds the catalog beside the data.

A hostile zip is refused by name before anything is inflated past the cap: a member that is neither of the two
(``__MACOSX/...``, ``notes.txt``), a member in a folder or with a path (``../x.sas7bdat``, ``/etc/x``, ``C:x``),
two data files or two catalogs, an encrypted member, an unpacked size over the cap (the declared sizes
first, then counted while inflating: a forged header does not get past)."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from ..errors import InputError

ZIP_MAGIC = b"PK\x03\x04"
DATA_SUFFIX, CATALOG_SUFFIX = ".sas7bdat", ".sas7bcat"
MAX_UNPACKED_BYTES = 4 << 30  # the default cap on data + catalog unpacked (uploads pass their own)
MAX_MEMBERS = 2
CHUNK = 1 << 20
# zipfile builds an object per member of the central directory before anything can be checked: a 20 MB zip of
# 200,000 empty members took 150 MB and seconds of CPU. A bundle's directory is two short entries.
MAX_DIRECTORY_BYTES = 64 << 10
EOCD, ZIP64_LOCATOR = b"PK\x05\x06", b"PK\x06\x07"


@dataclass(frozen=True)
class SasPair:
    """A SAS data file and, when given, its format catalog, as bytes with their names."""

    data: bytes
    data_name: str
    catalog: bytes | None = None
    catalog_name: str = ""


def _first_member(raw: bytes) -> str:
    """The name of a zip's first member from its local header (readable in the first bytes alone)."""
    if len(raw) < 30 or not raw.startswith(ZIP_MAGIC):
        return ""
    length = int.from_bytes(raw[26:28], "little")
    return raw[30:30 + length].decode("utf-8", errors="replace")


def is_bundle(raw: bytes, filename: str = "") -> bool:
    """Whether a file is meant as a SAS bundle: a zip named .zip, or one whose first member (or, with the whole
    file at hand, any member) is a .sas7bdat or .sas7bcat. A workbook (.xlsx) is none of these."""
    if not raw.startswith(ZIP_MAGIC):
        return False
    if filename.lower().endswith(".zip") or _first_member(raw).lower().endswith((DATA_SUFFIX, CATALOG_SUFFIX)):
        return True
    size = directory_size(raw)
    if size is None or size > MAX_DIRECTORY_BYTES:
        return False  # not a bundle's directory: left to the reader of its kind (or refused as unknown)
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            return any(n.lower().endswith((DATA_SUFFIX, CATALOG_SUFFIX)) for n in archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return False  # a part of a file (its first bytes): only the first member says


def directory_size(raw: bytes) -> int | None:
    """The size in bytes a zip's end records declare for its central directory, as zipfile reads them (the ZIP64
    record when its locator comes before the end record); None without an end record."""
    at = raw.rfind(EOCD, max(0, len(raw) - 22 - 65535))
    if at < 0 or at + 22 > len(raw):
        return None
    size = int.from_bytes(raw[at + 12:at + 16], "little")
    locator = at - 20
    if locator >= 56 and raw[locator:locator + 4] == ZIP64_LOCATOR:
        record = locator - 56
        size = max(size, int.from_bytes(raw[record + 40:record + 48], "little"))
    return size


def _unsafe(name: str) -> bool:
    """A member name that is a path, not a plain file name."""
    return ("/" in name or "\\" in name or ":" in name or name in ("", ".", "..")
            or name.startswith(".") or "\x00" in name)


def unpack(raw: bytes, filename: str, max_bytes: int | None = MAX_UNPACKED_BYTES) -> SasPair:
    """The data file and catalog of a bundle, or InputError naming the zip and the member at fault."""
    size = directory_size(raw)
    if size is not None and size > MAX_DIRECTORY_BYTES:
        raise InputError(f"{filename}: a zip directory of {size:,} bytes; a .zip upload holds one SAS .sas7bdat "
                         f"file and at most one .sas7bcat format catalog")
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(f"{filename}: not a readable zip ({exc})") from None
    with archive:
        members = archive.infolist()
        others = [m.filename for m in members
                  if _unsafe(m.filename) or not m.filename.lower().endswith((DATA_SUFFIX, CATALOG_SUFFIX))]
        if others:
            shown = ", ".join(repr(n) for n in others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            raise InputError(f"{filename}: a .zip upload holds one SAS .sas7bdat file and at most one .sas7bcat "
                             f"format catalog, side by side without folders; it also holds {shown}")
        data = [m for m in members if m.filename.lower().endswith(DATA_SUFFIX)]
        catalogs = [m for m in members if m.filename.lower().endswith(CATALOG_SUFFIX)]
        if len(data) != 1:
            found = (", ".join(repr(m.filename) for m in data[:5]) + (f" and {len(data) - 5} more" if len(data) > 5
                                                                       else "")) if data else "none"
            raise InputError(f"{filename}: a .zip upload holds exactly one SAS .sas7bdat file; found {found}")
        if len(catalogs) > 1:
            raise InputError(f"{filename}: a .zip upload holds at most one .sas7bcat format catalog; found "
                             + ", ".join(repr(m.filename) for m in catalogs[:5])
                             + (f" and {len(catalogs) - 5} more" if len(catalogs) > 5 else ""))
        declared = sum(m.file_size for m in members)
        if max_bytes is not None and declared > max_bytes:
            raise InputError(f"{filename}: {declared / 1048576:.1f} MB unpacked, more than the limit of "
                             f"{max_bytes / 1048576:.0f} MB")
        budget = [max_bytes]
        data_bytes = _inflate(archive, data[0], filename, budget)
        catalog = _inflate(archive, catalogs[0], filename, budget) if catalogs else None
    return SasPair(data_bytes, data[0].filename, catalog, catalogs[0].filename if catalogs else "")


def _inflate(archive: zipfile.ZipFile, member: zipfile.ZipInfo, filename: str, budget: list[int | None]) -> bytes:
    """One member's bytes, counted against what is left of the cap while they are inflated."""
    where = f"{filename}, member {member.filename!r}"
    if member.flag_bits & 0x1:
        raise InputError(f"{where}: encrypted; zip the files without a password")
    out = bytearray()
    try:
        with archive.open(member) as fh:
            while chunk := fh.read(CHUNK):
                out += chunk
                if budget[0] is not None and len(out) > budget[0]:
                    raise InputError(f"{where}: unpacks to more than the limit of {budget[0] / 1048576:.0f} MB "
                                     f"(the zip's sizes are not the true ones)")
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise InputError(f"{where}: cannot be unpacked ({exc})") from None
    if budget[0] is not None:
        budget[0] -= len(out)
    return bytes(out)


def pack(pair: SasPair) -> bytes:
    """A bundle of the data and catalog, the data first, stored (not compressed: its size is the two files')."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_plain(pair.data_name, DATA_SUFFIX), pair.data)
        if pair.catalog is not None:
            archive.writestr(_plain(pair.catalog_name, CATALOG_SUFFIX), pair.catalog)
    return buffer.getvalue()


def _plain(name: str, suffix: str) -> str:
    """A file name without its folders, with the suffix it must have."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].replace(":", "_").replace("\x00", "").lstrip(".")
    base = base or f"data{suffix}"
    return base if base.lower().endswith(suffix) else base + suffix
