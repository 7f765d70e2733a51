"""Reading user tables: CSV/TSV/TXT with sniffed delimiter, encoding and header; Excel (.xlsx).

Every cell is read as text without missing-value parsing: a town called ``None`` stays ``None``.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError

DELIMITERS = [",", ";", "\t", "|"]
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
ENCODINGS = ["utf-8", "windows-1252", "latin-1"]
XLSX_MAGIC = b"PK\x03\x04"


@dataclass
class Format:
    """How a file is read; sniffed, then overridable by the user."""

    kind: str = "csv"  # csv or xlsx
    delimiter: str = ","
    encoding: str = "utf-8"
    header: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def sniff(raw: bytes, filename: str = "upload") -> Format:
    """Guess kind, encoding, delimiter and header from the first bytes."""
    if not raw.strip():
        raise InputError(f"{filename}: the file is empty")
    if raw.startswith(XLSX_MAGIC) or filename.lower().endswith((".xlsx", ".xlsm")):
        return Format(kind="xlsx")
    head = raw[:65536]
    if b"\x00" in head:
        raise InputError(f"{filename}: this is a binary file, not a CSV/TSV text table or an .xlsx workbook")
    encoding = _encoding(head)
    text = head.decode(encoding, errors="replace")
    lines = [ln for ln in text.splitlines() if ln.strip()][:200]
    if len(raw) > len(head) and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut in the middle
    delimiter = _delimiter(lines, filename)
    header = _has_header(lines, delimiter)
    return Format("csv", delimiter, encoding, header)


def _encoding(head: bytes) -> str:
    for enc in ENCODINGS:
        try:
            head.decode(enc)
        except UnicodeDecodeError as exc:
            if exc.start >= len(head) - 4 and enc == "utf-8":  # a multi-byte character cut at the end
                return enc
            continue
        return enc
    return "latin-1"


def _delimiter(lines: list[str], filename: str) -> str:
    sample = "\n".join(lines[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters="".join(DELIMITERS)).delimiter
    except csv.Error:
        pass
    best, score = ",", -1
    for d in DELIMITERS:
        counts = [len(next(csv.reader([ln], delimiter=d))) for ln in lines[:50]]
        if counts and min(counts) > 1 and len(set(counts)) == 1 and counts[0] > score:
            best, score = d, counts[0]
    return best


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _has_header(lines: list[str], delimiter: str) -> bool:
    rows = list(csv.reader(lines[:50], delimiter=delimiter))
    if len(rows) < 2:
        return True
    first, rest = rows[0], rows[1:]
    if len(set(first)) != len(first) or any(c.strip() == "" for c in first):
        return False
    for j, cell in enumerate(first):
        column = [r[j] for r in rest if j < len(r)]
        if _is_number(cell) and column and all(_is_number(v) for v in column):
            return False  # a numeric column whose first cell is a number too: no header
    return True


def read_table(
    source: str | Path | bytes,
    filename: str | None = None,
    fmt: Format | None = None,
    max_rows: int | None = None,
    max_columns: int | None = None,
    nrows: int | None = None,
) -> tuple[pd.DataFrame, Format]:
    """Read a table as text; returns the frame and the format used."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        filename = filename or path.name
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{path}: cannot read the file ({exc.strerror})") from None
    else:
        raw = source
        filename = filename or "upload"
    fmt = fmt or sniff(raw, filename)
    if fmt.kind == "xlsx":
        frame = _read_xlsx(raw, filename, fmt, nrows)
    else:
        frame = _read_csv(raw, filename, fmt, nrows)
    if frame.shape[1] == 0 or (frame.shape[0] == 0 and nrows != 0):
        raise InputError(f"{filename}: no data rows")
    if max_columns is not None and frame.shape[1] > max_columns:
        raise InputError(f"{filename}: {frame.shape[1]} columns, more than the limit of {max_columns}")
    if max_rows is not None and len(frame) > max_rows:
        raise InputError(f"{filename}: {len(frame):,} rows, more than the limit of {max_rows:,}")
    return frame, fmt


def _names(columns: list, filename: str) -> list[str]:
    names = []
    for i, c in enumerate(columns):
        name = str(c).strip() if c is not None and str(c).strip() != "" else f"column_{i + 1}"
        if name in names:
            raise InputError(f"{filename}: the column name {name!r} appears twice in the header")
        names.append(name)
    return names


def _read_csv(raw: bytes, filename: str, fmt: Format, nrows: int | None) -> pd.DataFrame:
    try:
        codecs.lookup(fmt.encoding)
    except LookupError:
        raise InputError(f"{filename}: unknown encoding {fmt.encoding!r}") from None
    bom = codecs.BOM_UTF8 if fmt.encoding.replace("_", "-").lower() in ("utf-8", "utf8") else b""
    if bom and raw.startswith(bom):
        raw = raw[len(bom):]
    # pandas decodes the bytes itself; only the first line is decoded here, for the header
    head = raw[:65536].decode(fmt.encoding, errors="replace")
    try:
        header_row = next(csv.reader(io.StringIO(head), delimiter=fmt.delimiter))
    except StopIteration:
        raise InputError(f"{filename}: the file is empty") from None
    except csv.Error as exc:
        raise InputError(f"{filename}, line 1: {exc}") from None
    width = len(header_row)
    source: io.IOBase
    if b'"' not in raw and _ascii_compatible(fmt.encoding) and len(fmt.delimiter.encode()) == 1:
        _check_unquoted(raw, fmt.delimiter, width, filename, nrows)
        source = io.BytesIO(raw)
    else:
        try:
            text = raw.decode(fmt.encoding)
        except UnicodeError as exc:
            raise InputError(f"{filename}: cannot be decoded as {fmt.encoding} ({exc})") from None
        _check_quoted(text, fmt.delimiter, width, filename, nrows)
        source = io.StringIO(text)
    try:
        frame = pd.read_csv(
            source,
            sep=fmt.delimiter,
            header=0 if fmt.header else None,  # with names given, the header line is skipped
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=True,
            nrows=nrows,
            names=range(width),
            encoding=fmt.encoding if isinstance(source, io.BytesIO) else None,
            engine="c",
        )
    except UnicodeError as exc:
        raise InputError(f"{filename}: cannot be decoded as {fmt.encoding} ({exc})") from None
    except pd.errors.ParserError as exc:
        raise InputError(f"{filename}: cannot be parsed as a delimited table ({exc})") from None
    if fmt.header:
        frame.columns = _names(header_row, filename)
    else:
        frame.columns = [f"column_{i + 1}" for i in range(width)]
    return frame


def _ascii_compatible(encoding: str) -> bool:
    """Encodings in which a delimiter, quote or newline byte is always that character."""
    return "16" not in encoding and "32" not in encoding


def _check_quoted(text: str, delimiter: str, width: int, filename: str, nrows: int | None) -> None:
    """Every line has as many fields as the first (pandas would pad short rows silently)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        for row in reader:
            if nrows is not None and reader.line_num > nrows + 1:
                return
            if row and len(row) != width:
                raise InputError(f"{filename}, line {reader.line_num}: {len(row)} field(s) where the first "
                                 f"line has {width}")
    except csv.Error as exc:
        raise InputError(f"{filename}, line {reader.line_num}: {exc}") from None


def _check_unquoted(raw: bytes, delimiter: str, width: int, filename: str, nrows: int | None) -> None:
    """Without quoting a field count is a delimiter count: counted per line with numpy, since a
    Python loop over millions of lines would dominate the reading time."""
    data = np.frombuffer(raw, dtype=np.uint8)
    ends = np.flatnonzero(data == 10)
    if len(ends) == 0 or ends[-1] != len(data) - 1:
        ends = np.append(ends, len(data))  # a last line without a newline
    starts = np.concatenate(([0], ends[:-1] + 1))
    delims = np.flatnonzero(data == ord(delimiter))
    counts = np.searchsorted(delims, ends) - np.searchsorted(delims, starts)
    lengths = ends - starts - (data[np.maximum(ends - 1, 0)] == 13)  # without a trailing \r
    if nrows is not None:
        counts, lengths = counts[: nrows + 1], lengths[: nrows + 1]
    bad = np.flatnonzero((counts != width - 1) & (lengths > 0))
    if bad.size:
        line = int(bad[0])
        raise InputError(f"{filename}, line {line + 1}: {int(counts[line]) + 1} field(s) where the first "
                         f"line has {width}")


def _read_xlsx(raw: bytes, filename: str, fmt: Format, nrows: int | None) -> pd.DataFrame:
    try:
        frame = pd.read_excel(io.BytesIO(raw), sheet_name=0, header=None, dtype=str, engine="openpyxl",
                              keep_default_na=False, na_filter=False, nrows=nrows)
    except Exception as exc:  # openpyxl raises many types for broken workbooks
        raise InputError(f"{filename}: not a readable .xlsx workbook ({exc.__class__.__name__}: {exc})") from None
    frame = frame.fillna("").astype(str)
    if frame.empty:
        return frame
    if fmt.header:
        columns = _names(list(frame.iloc[0]), filename)
        frame = frame.iloc[1:].reset_index(drop=True)
    else:
        columns = [f"column_{i + 1}" for i in range(frame.shape[1])]
    frame.columns = columns
    return frame
