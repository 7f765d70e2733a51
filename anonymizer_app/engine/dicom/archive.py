"""The de-identified copies of a set of DICOM files as one zip, built from the published rows only."""

from __future__ import annotations

import io
import os
import secrets
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import Cancelled
from .deidentify import METHOD, deidentify, verify
from .source import DicomSource, ProgressFn


@dataclass
class ArchiveSummary:
    files_written: int = 0
    files_left_out: int = 0  # their row was not published (a suppressed row removed)
    private_removed: int = 0
    actions: dict[str, int] = field(default_factory=dict)  # action -> attributes it was applied to
    members: list[str] = field(default_factory=list)  # output member names, in input order


def published_cells(frame: pd.DataFrame, rows) -> dict[int, dict[str, str]]:
    """Input row -> {keyword: published cell} from the published table and its input rows."""
    records = frame.astype(object).where(frame.notna(), "").astype(str).to_dict("records")
    return {int(r): {str(k): str(v) for k, v in cells.items()} for r, cells in zip(rows, records, strict=True)}


class _Pipe(io.RawIOBase):
    """An unseekable sink: zipfile writes local headers with data descriptors, and the bytes written so far
    are taken out a file at a time."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks.clear()
        return data


def iter_archive(source: DicomSource, file_rows: Mapping[str, int], cells_by_row: Mapping[int, Mapping[str, str]],
                 key: bytes, method: str = METHOD, progress: ProgressFn | None = None,
                 summary: ArchiveSummary | None = None) -> Iterator[bytes]:
    """The zip of the de-identified copies, a file at a time (for a download that starts at once): every file
    whose row was published, de-identified with its row's cells and verified from its own bytes BEFORE its
    bytes leave; a failed check raises VerificationError and the zip stays incomplete (unreadable), never
    wrong. Output members are numbered (dicom/00001.dcm, ...) in input order: input names may carry names."""
    summary = summary if summary is not None else ArchiveSummary()
    pipe = _Pipe()
    total = len(source.members)
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for i, (member, data) in enumerate(source.items()):
            cells = cells_by_row.get(file_rows[member])
            if cells is None:
                summary.files_left_out += 1
            else:
                output, outcome = deidentify(data, cells, key, method)
                verify(data, output, cells, key)
                name = f"dicom/{summary.files_written + 1:05d}.dcm"
                archive.writestr(name, output)
                summary.members.append(name)
                summary.files_written += 1
                summary.private_removed += outcome.private_removed
                for action in outcome.actions.values():
                    summary.actions[action] = summary.actions.get(action, 0) + 1
                yield pipe.take()
            if progress is not None and progress((i + 1) / total, f"writing the DICOM files: {i + 1:,} of "
                                                 f"{total:,}") is False:
                raise Cancelled("writing the DICOM files")
    yield pipe.take()  # the central directory


def write_archive(source: DicomSource, file_rows: Mapping[str, int], cells_by_row: Mapping[int, Mapping[str, str]],
                  out: Path, key: bytes, method: str = METHOD, progress: ProgressFn | None = None) -> ArchiveSummary:
    """iter_archive into the file ``out`` (written beside it under a temporary name, renamed when whole)."""
    out = Path(out)
    summary = ArchiveSummary()
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as fh:
            for chunk in iter_archive(source, file_rows, cells_by_row, key, method, progress, summary):
                fh.write(chunk)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return summary
