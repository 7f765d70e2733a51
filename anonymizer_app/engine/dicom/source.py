"""DICOM files as they come: a zip or a folder, every member checked to be a DICOM Part 10 file before
anything is done with any of them (one that is not is named, and nothing is stored)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import Cancelled, InputError

ProgressFn = Callable[[float, str], object]
# Sequences within sequences: real files nest a few levels (structured reports a dozen); pydicom reads,
# cleans and writes them recursively, so a file nested thousands deep is refused when it is checked.
MAX_SEQUENCE_DEPTH = 32


@dataclass
class DicomSource:
    """The files of a zip or a folder, by member name (a path relative to the folder, '/'-separated)."""

    path: Path
    members: list[str]

    @property
    def is_zip(self) -> bool:
        return self.path.is_file()

    def read(self, member: str) -> bytes:
        if self.is_zip:
            with zipfile.ZipFile(self.path) as archive:
                return archive.read(member)
        return (self.path / member).read_bytes()

    def items(self):
        """(member, bytes) for every file, the zip opened once."""
        if self.is_zip:
            with zipfile.ZipFile(self.path) as archive:
                for member in self.members:
                    yield member, archive.read(member)
        else:
            for member in self.members:
                yield member, (self.path / member).read_bytes()


def _zip_members(path: Path) -> list[str]:
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except zipfile.BadZipFile:
        raise InputError(f"{path.name}: neither a zip file nor a folder of DICOM files") from None
    return sorted(i.filename for i in infos if not i.is_dir())


def sequence_depth(dataset, limit: int = MAX_SEQUENCE_DEPTH) -> int:
    """How deep sequences nest in ``dataset`` (0: none), counted without recursion and no further than
    ``limit`` + 1 (deeper items are not even decoded)."""
    deepest, stack = 0, [(dataset, 0)]
    while stack:
        ds, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > limit:
            break
        for element in ds:
            if element.VR == "SQ":
                stack.extend((item, depth + 1) for item in element.value or ())
    return deepest


def open_source(path: Path | str, progress: ProgressFn | None = None) -> DicomSource:
    """The zip or folder at ``path`` with every file checked to be DICOM (a Part 10 file: the 128-byte
    preamble and 'DICM', then a readable header). Raises InputError naming the first file that is not."""
    import pydicom
    from pydicom.errors import InvalidDicomError

    path = Path(path)
    if path.is_dir():
        members = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    elif path.is_file():
        members = _zip_members(path)
    else:
        raise InputError(f"{path}: no such file or folder")
    if not members:
        raise InputError(f"{path.name}: no files in it")
    source = DicomSource(path, members)
    for i, (member, data) in enumerate(source.items()):
        try:
            depth = sequence_depth(pydicom.dcmread(io.BytesIO(data), stop_before_pixels=True))
        except RecursionError:
            depth = MAX_SEQUENCE_DEPTH + 1  # so deep that reading it ran out of stack
        except InvalidDicomError:
            raise InputError(f"{member}: not a DICOM file (no DICOM preamble 'DICM' at byte 128); "
                             f"nothing was stored") from None
        except Exception as exc:  # a truncated or corrupt header: pydicom raises many kinds
            raise InputError(f"{member}: not a readable DICOM file ({type(exc).__name__}: {exc}); "
                             f"nothing was stored") from None
        if depth > MAX_SEQUENCE_DEPTH:
            raise InputError(f"{member}: sequences nested more than {MAX_SEQUENCE_DEPTH} levels deep, the limit; "
                             f"nothing was stored")
        if progress is not None and progress(0.3 * (i + 1) / len(members), f"checking file {i + 1:,} of "
                                             f"{len(members):,}") is False:
            raise Cancelled("checking the files")
    return source
