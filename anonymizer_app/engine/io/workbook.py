"""Reading the first sheet of an .xlsx workbook as text, with the caps checked before and while it is read.

Before anything is inflated, the zip's central directory gives each part's unpacked size (zipfile never
inflates a part beyond it): the workbook's total and each part's packing ratio are capped (the issue's
2.4 MB file holding 540 MB of sheet XML); a sheet that does not state its size gets one in a copy (openpyxl
otherwise parses it twice). The sheet then streams by row (openpyxl read-only): rows, cells (the padding openpyxl adds for
forged row and column numbers included) and cell text are counted as they come. openpyxl (a slow import) is
imported when a workbook is read, not with this module.
"""

from __future__ import annotations

import functools
import io
import re
import shutil
import tempfile
import zipfile
from typing import IO

import pandas as pd

from ..errors import InputError
from .table_format import TEXT_HINT, Format, Limits, column_names

SHEET_ROWS = 1_048_576  # the rows a sheet can have (row numbers beyond are forged)


def _check_workbook(raw: bytes, filename: str, limits: Limits) -> None:
    """From the zip's central directory, before anything is inflated: a workbook at all, its unpacked size
    and each part's packing ratio (zipfile never inflates a part beyond the size listed there)."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise InputError(f"{filename}: not a readable .xlsx workbook (a damaged zip archive: {exc})") from None
    names = {i.filename for i in infos}
    if "[Content_Types].xml" not in names or not any(n.startswith("xl/") for n in names):
        raise InputError(f"{filename}: a zip archive, not an .xlsx workbook; {TEXT_HINT}")
    total = sum(i.file_size for i in infos)
    if limits.max_xlsx_mb is not None and total > limits.max_xlsx_mb * 2**20:
        raise InputError(f"{filename}: the workbook unpacks to {total / 2**20:,.0f} MB, more than the limit of "
                         f"{limits.max_xlsx_mb:,} MB; save the sheet as CSV and upload that")
    if limits.max_xlsx_ratio is not None:
        for i in infos:
            ratio = i.file_size / max(i.compress_size, 1)
            if i.file_size > 2**20 and ratio > limits.max_xlsx_ratio:
                raise InputError(f"{filename}: the part {i.filename} is packed {ratio:,.0f} to 1, more than the "
                                 f"limit of {limits.max_xlsx_ratio:,.0f} to 1 (a zip bomb?); save the sheet as CSV "
                                 "and upload that")


_SHEET_DATA = re.compile(rb"<([A-Za-z_][\w.-]*:)?sheetData\b")


def _undeclared(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes | None:
    """For a sheet part with no <dimension> before its data (openpyxl's write-only mode writes none): the
    namespace prefix of its sheetData tag (b"" or b"x:"); None for any other part. Only 64 KiB are inflated."""
    with zf.open(info) as part:
        head = part.read(65536)
    found = _SHEET_DATA.search(head)
    if found is None or b"dimension" in head[:found.start()]:
        return None
    return found.group(1) or b""


def _declared(raw: bytes) -> IO[bytes]:
    """The workbook to open: as uploaded, or a copy in which every sheet without <dimension> states one.
    openpyxl looks for it through the whole sheet otherwise (every row parsed twice); the rows are read as
    written anyway (reset_dimensions). The copy is stored unpacked, on disk past 16 MB, removed on close."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    missing = {i.filename: prefix for i in src.infolist() if (prefix := _undeclared(src, i)) is not None}
    if not missing:
        return io.BytesIO(raw)
    out = tempfile.SpooledTemporaryFile(max_size=16 * 2**20)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            with src.open(info) as part, dst.open(info.filename, "w", force_zip64=True) as copy:
                prefix = missing.get(info.filename)
                if prefix is not None:
                    head = part.read(65536)
                    found = _SHEET_DATA.search(head)  # found by _undeclared in the same 64 KiB
                    cut = found.start() if found else 0
                    copy.write(head[:cut] + b"<" + prefix + b'dimension ref="A1"/>' + head[cut:])
                shutil.copyfileobj(part, copy, 1 << 20)
    out.seek(0)
    return out


# A formula cell without a computed value (<v>): data_only reading would show it as an empty cell. Matched by
# RE2 (one byte a character: Latin-1), in time linear in the sheet: Python's re backtracked [^>]*?...[^>]* over
# every '<c' of a tag that never closes, cubic in its length (22 KB of '<c r="A1" x' took 48 s; a sheet part
# is read 1 MiB at a time, and such text packs to almost nothing in the zip).
_NS = rb"(?:[A-Za-z_][\w.-]*:)?"
_FORMULA_ONLY_PATTERN = (
    rb"<" + _NS + rb"c\b[^>]*?\br=\"([A-Z]{1,3}[0-9]{1,7})\"[^>]*>\s*<" + _NS + rb"f\b[^>]*(?:/>|>[^<]*</"
    + _NS + rb"f>)\s*(?:<" + _NS + rb"v\s*/>|<" + _NS + rb"v>\s*</" + _NS + rb"v>)?\s*</" + _NS + rb"c>")


@functools.cache
def _formula_only():
    """The pattern, compiled by re2 (imported when a workbook is read, like openpyxl)."""
    import re2

    latin1 = re2.Options()
    latin1.encoding = re2.Options.Encoding.LATIN1
    return re2.compile(_FORMULA_ONLY_PATTERN, latin1)


def _formula_without_value(raw: bytes, part: str) -> str | None:
    """The first cell (e.g. "B2") of a sheet part holding a formula whose value was never computed."""
    with zipfile.ZipFile(io.BytesIO(raw)) as zf, zf.open(part) as fh:
        tail = b""
        while chunk := fh.read(1 << 20):
            data = tail + chunk
            if b"<f" in data or b":f" in data:
                found = _formula_only().search(data)
                if found:
                    return found.group(1).decode()
            tail = data[-8192:]
    return None


def _cell_text(value) -> str:
    """A cell as text the way pandas' Excel reader wrote it (1.0 -> "1", dates "2024-01-31 00:00:00")."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)  # datetime: "2024-01-31 00:00:00", bool: "True"


def read_xlsx(raw: bytes, filename: str, fmt: Format, nrows: int | None,
              limits: Limits | None = None) -> pd.DataFrame:
    """The first worksheet, streamed (openpyxl read-only): rows, cells and cell text counted as they come."""
    import openpyxl  # a slow import: only when a workbook is read

    limits = limits or Limits()
    _check_workbook(raw, filename, limits)
    try:
        source = _declared(raw)
        wb = openpyxl.load_workbook(source, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl and zipfile raise many types for broken workbooks
        raise InputError(f"{filename}: not a readable .xlsx workbook ({exc.__class__.__name__}: {exc})") from None
    try:
        rows, where = _xlsx_rows(wb, raw, filename, fmt, nrows, limits)
    except InputError:
        raise
    except Exception as exc:  # a sheet that breaks while streaming
        raise InputError(f"{filename}: not a readable .xlsx workbook ({exc.__class__.__name__}: {exc})") from None
    finally:
        wb.close()
        source.close()
    if not rows:
        return pd.DataFrame()
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    if fmt.header:
        columns = column_names(rows[0], filename, limits, where=where)
        rows = rows[1:]
    else:
        columns = [f"column_{i + 1}" for i in range(width)]
    return pd.DataFrame(rows, columns=columns, dtype=object) if rows else pd.DataFrame(columns=columns)


def _xlsx_rows(wb, raw: bytes, filename: str, fmt: Format, nrows: int | None,
               limits: Limits) -> tuple[list[list[str]], str]:
    from openpyxl.utils import get_column_letter  # loaded with openpyxl by read_xlsx

    if not wb.worksheets:
        raise InputError(f"{filename}: the workbook has no worksheet")
    ws = wb.worksheets[0]
    ws.reset_dimensions()  # a declared size may be wrong (too small cuts rows, too large pads them): rows as written
    sheet = f"sheet {ws.title!r}"
    part = getattr(ws, "_worksheet_path", None)  # the sheet's zip member (openpyxl's read-only worksheet)
    cell = _formula_without_value(raw, part) if isinstance(part, str) else None
    if cell:
        raise InputError(f"{filename}, {sheet}, cell {cell}: a formula with no computed value (the program that "
                         "wrote the workbook did not compute it); open and save it in a spreadsheet program, or "
                         "save it as CSV")
    header = 1 if fmt.header else 0
    budget = limits.max_xlsx_mb * 2**20 if limits.max_xlsx_mb is not None else None
    cap = limits.max_cell_chars
    cell_budget = budget // 4 if budget is not None else None  # an XML cell takes 8 bytes or more
    rows: list[list[str]] = []
    where, chars, cells_seen = f"{sheet}, row 1", 0, 0
    for r, values in enumerate(ws.iter_rows(values_only=True), start=1):
        # openpyxl pads missing rows and cells: counted too, so forged row or column numbers cost nothing
        cells_seen += len(values)
        if r > SHEET_ROWS or (cell_budget is not None and cells_seen > cell_budget):
            raise InputError(f"{filename}, {sheet}: more cells (empty ones included) than the limit by row {r:,}; "
                             "save the sheet as CSV and upload that")
        width = limits.max_columns
        if width is not None and len(values) > width:
            if values[width:].count(None) != len(values) - width:
                last = max(j for j, v in enumerate(values) if v is not None) + 1
                raise InputError(f"{filename}, {sheet}, row {r}: {last} columns, more than the limit of {width}")
            values = values[:width]
        cells = [_cell_text(v) for v in values]
        while cells and cells[-1] == "":
            cells.pop()
        if not cells:
            continue  # a blank row, as blank lines of a text file
        if not rows:
            where = f"{sheet}, row {r}"
        if cap is not None and (not header or rows):
            for j, cell in enumerate(cells):
                if len(cell) > cap:
                    raise InputError(f"{filename}, {sheet}, cell {get_column_letter(j + 1)}{r}: a cell of "
                                     f"{len(cell):,} characters, more than the limit of {cap:,}")
        chars += sum(map(len, cells))
        if budget is not None and chars > budget:
            raise InputError(f"{filename}, {sheet}: more than {limits.max_xlsx_mb:,} MB of cell text by row {r}; "
                             "save the sheet as CSV and upload that")
        rows.append(cells)
        data_rows = len(rows) - header
        if limits.max_rows is not None and data_rows > limits.max_rows:
            raise InputError(f"{filename}: more than the limit of {limits.max_rows:,} rows ({sheet}, row {r})")
        if nrows is not None and data_rows >= nrows:
            break
    return rows, where
