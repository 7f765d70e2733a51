"""Reading user tables: CSV/TSV/TXT with sniffed delimiter, encoding and header; Excel (.xlsx); Stata, SPSS and
SAS files (statfiles.py: value labels shown as the values; a SAS file with its format catalog as a zip,
sas_bundle.py).

Every cell is read as text without missing-value parsing: a town called ``None`` stays ``None``.
Hostile files are refused before they cost memory or time (Limits): every cell and column name is
measured while the field counts are checked; workbooks are read by workbook.py (unpacked size from the
zip directory before anything is inflated, counters while the rows stream by). Text is UTF-8,
UTF-16 (BOM or not), Windows-1252 or Latin-1; bytes that are not text are named as such.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import replace
from pathlib import Path
from typing import AnyStr

import numpy as np
import pandas as pd

from ..errors import InputError
from .sas_bundle import is_bundle
from .statfiles import STAT_KINDS, read_statfile, stat_kind
from .table_format import (  # noqa: F401  (re-exported: reader.Limits, reader.TEXT_HINT, ...)
    MAX_CELL_CHARS,
    MAX_HEADER_CHARS,
    MAX_XLSX_MB,
    MAX_XLSX_RATIO,
    NO_HEADER_HINT,
    TEXT_HINT,
    Format,
    Limits,
    column_names,
    positions,
)
from .workbook import read_xlsx

DELIMITERS = [",", ";", "\t", "|"]
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
ENCODINGS = ["utf-8", "windows-1252", "latin-1", "utf-16", "utf-16-le", "utf-16-be"]
XLSX_MAGIC = b"PK\x03\x04"
XLS_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the old binary Excel format (OLE2)
class DecodeError(InputError):
    """The bytes are not text in the encoding used (a sniffed encoding may then be replaced)."""


def sniff(raw: bytes, filename: str = "upload") -> Format:
    """Guess kind, encoding, delimiter and header from the first bytes (the content decides, not the name)."""
    if not raw or raw.isspace():  # as ``not raw.strip()``, without copying a whole file
        raise InputError(f"{filename}: the file is empty")
    if raw.startswith(XLSX_MAGIC):
        if is_bundle(raw, filename):  # a SAS table with its format catalog (sas_bundle.py)
            return Format(kind="sas7bdat")
        return Format(kind="xlsx")  # read_table checks that the zip is a workbook
    stat = stat_kind(raw[:64])
    if stat is not None:
        return Format(kind=stat)  # a Stata, SPSS or SAS file (statfiles.py)
    if raw.startswith(XLS_MAGIC):
        raise InputError(f"{filename}: an old Excel .xls workbook; save it as .xlsx or CSV and upload that")
    head = raw[:65536]
    encoding = _encoding(head)
    text = _strip_bom(head.decode(encoding, errors="replace"))
    _refuse_binary(text, filename)
    lines = [ln for ln in text.splitlines() if ln.strip()][:200]
    if not lines:
        raise InputError(f"{filename}: the file is empty")
    if len(raw) > len(head) and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut in the middle
    delimiter = _delimiter(lines, filename)
    header = _has_header(lines, delimiter)
    return Format("csv", delimiter, encoding, header)


def _strip_bom(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _refuse_binary(text: str, filename: str) -> None:
    """A NUL or a run of control characters: not a text table (with the line of the first one)."""
    nul = text.find("\x00")
    if nul >= 0:
        pos, what = nul, "a NUL byte"
    else:
        controls = [m.start() for m in re.finditer(r"[\x01-\x08\x0e-\x1f\x7f]", text)]
        if len(controls) < 4 and len(controls) * 100 < len(text):
            return  # a stray control character in a text file: kept as text
        pos = controls[0]
        what = f"control character 0x{ord(text[pos]):02X}"
    raise InputError(f"{filename}: not a text table ({what} on line {_line_of(text, pos)}); {TEXT_HINT}")


def _utf16_without_bom(head: bytes) -> str | None:
    """ASCII-range text in UTF-16 has a zero in every other byte."""
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    zeros_even, zeros_odd = even.count(0) / len(even), odd.count(0) / len(odd)
    if zeros_odd > 0.4 and zeros_even < 0.05:
        return "utf-16-le"
    if zeros_even > 0.4 and zeros_odd < 0.05:
        return "utf-16-be"
    return None


def _encoding(head: bytes) -> str:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"  # the codec reads the BOM for the byte order
    wide = _utf16_without_bom(head)
    if wide:
        return wide
    for enc in ENCODINGS[:3]:
        try:
            head.decode(enc)
        except UnicodeDecodeError as exc:
            if exc.start >= len(head) - 4 and enc == "utf-8":  # a multi-byte character cut at the end
                return enc
            continue
        return enc
    return "latin-1"


def _fallback_encoding(raw: bytes) -> str:
    """For a file sniffed as UTF-8 whose later bytes are not: the single-byte encoding they are in."""
    try:
        raw.decode("windows-1252")
    except UnicodeDecodeError:
        return "latin-1"
    return "windows-1252"


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
    # duplicate or empty names do not make the first line data: the reader reports them by position
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
    limits: Limits | None = None,
    encoding_sniffed: bool | None = None,
    dictionary: bool = False,
) -> tuple[pd.DataFrame, Format]:
    """Read a table as text; returns the frame and the format used. ``limits`` caps it (default: Limits());
    ``max_rows``/``max_columns`` given here win over the ones in ``limits``. A sniffed UTF-8 (``fmt`` None, or
    ``encoding_sniffed``) that fails past the sniffed bytes becomes Windows-1252 or Latin-1. ``dictionary``: the
    columns pyarrow read (unquoted UTF-8) come back as Categoricals of their text, which a Table encodes
    without hashing a string per row; otherwise every column is text (object)."""
    limits = limits or Limits()
    if max_rows is not None or max_columns is not None:
        limits = replace(limits, max_rows=max_rows if max_rows is not None else limits.max_rows,
                         max_columns=max_columns if max_columns is not None else limits.max_columns)
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
    sniffed = fmt is None if encoding_sniffed is None else encoding_sniffed
    fmt = fmt or sniff(raw, filename)
    if fmt.kind == "xlsx":
        frame = read_xlsx(raw, filename, fmt, nrows, limits)
    elif fmt.kind in STAT_KINDS:
        frame = read_statfile(raw, filename, fmt.kind, nrows, limits)[0]
    else:
        try:
            frame = read_csv(raw, filename, fmt, nrows, limits, dictionary=dictionary)
        except DecodeError:
            if not (sniffed and fmt.encoding == "utf-8"):
                raise
            # UTF-8 in the first 64 KiB only: the file is in a single-byte encoding
            fmt = replace(fmt, encoding=_fallback_encoding(raw))
            frame = read_csv(raw, filename, fmt, nrows, limits, dictionary=dictionary)
    if frame.shape[1] == 0 or (frame.shape[0] == 0 and nrows != 0):
        raise InputError(f"{filename}: no data rows" + (" (only a header line)" if frame.shape[1] else ""))
    if limits.max_columns is not None and frame.shape[1] > limits.max_columns:
        raise InputError(f"{filename}: {frame.shape[1]} columns, more than the limit of {limits.max_columns}")
    if limits.max_rows is not None and len(frame) > limits.max_rows:
        raise InputError(f"{filename}: {len(frame):,} rows, more than the limit of {limits.max_rows:,}")
    return frame, fmt


def _is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


def _one_newline(raw: bytes) -> bytes:
    """CR-only (old Mac) or mixed line ends as LF: every reader below splits lines on LF."""
    if b"\r" in raw and _has_bytes(raw, b"\r", not_followed_by=b"\n"):
        return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return raw


def _has_bytes(raw: bytes, pattern: bytes, not_followed_by: bytes | None = None) -> bool:
    """Whether ``raw`` holds ``pattern`` (with ``not_followed_by``, one byte: ``pattern`` followed by another
    byte or by nothing), compared with numpy a MiB at a time: on a CR-LF file, bytes.count and ``in`` of a
    pattern of two or three bytes take milliseconds per MiB, several times the vectorized comparison."""
    data = np.frombuffer(raw, dtype=np.uint8)
    probe = pattern + (not_followed_by or b"")  # the bytes compared at each position
    n, step = len(probe), 1 << 20
    for start in range(0, len(data), step):
        window = data[start:start + step + n - 1]  # overlapping by n - 1 bytes: no match is cut in two
        size = len(window) - n + 1
        if size <= 0:
            break
        hit = window[:size] == probe[0]
        for j in range(1, n):
            if not_followed_by is not None and j == n - 1:
                hit &= window[j:j + size] != probe[j]
            else:
                hit &= window[j:j + size] == probe[j]
        if hit.any():
            return True
    return not_followed_by is not None and raw.endswith(pattern)  # followed by nothing


def _one_newline_text(text: str) -> str:
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _decode(raw: bytes, encoding: str, filename: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].decode(encoding, errors="replace").count("\n") + 1
        other = "windows-1252" if _is_utf8(encoding) else "utf-8"
        raise DecodeError(f"{filename}, line {line}: cannot be decoded as {encoding} (byte 0x{raw[exc.start]:02X}); "
                          f"choose the file's encoding, e.g. {other}") from None


def csv_error(exc: csv.Error) -> str:
    """csv's messages in the user's words (never Python's advice about universal-newline mode)."""
    text = str(exc)
    if "new-line character" in text:
        return "a line break inside an unquoted field"
    if "NUL" in text:
        return "a NUL byte, which a text table cannot hold"
    return text


def _first_row(head: str, delimiter: str, filename: str) -> list[str]:
    reader = csv.reader(io.StringIO(head), delimiter=delimiter)
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                return row
    except csv.Error as exc:
        raise InputError(f"{filename}, line {reader.line_num}: {csv_error(exc)}") from None
    raise InputError(f"{filename}: the file is empty")


def _head_end(data: AnyStr, newline: AnyStr) -> int:
    """Where the head that the first row is read from ends: 64 KiB, or the first line's end past it (a header of
    100,000 names cut at 64 KiB was read as fewer columns, one of them a cut name)."""
    first = data.find(newline)
    return len(data) if first < 0 else max(65536, first + 1)


def read_csv(raw: bytes, filename: str, fmt: Format, nrows: int | None,
              limits: Limits | None = None, names: list[str] | None = None, dictionary: bool = False,
              arrow: bool = False) -> pd.DataFrame:
    """``names``: the columns of a headerless piece of a file whose header came before (named in messages).
    ``dictionary``: columns read by pyarrow come back as pandas Categoricals of their text (see read_table).
    ``arrow``: what pyarrow reads comes back as the pyarrow Table of its text columns, no pandas object made (an
    upload written straight to Parquet); a file that needs the checked path still comes as a DataFrame."""
    limits = limits or Limits()
    try:
        codecs.lookup(fmt.encoding)
    except LookupError:
        raise InputError(f"{filename}: unknown encoding {fmt.encoding!r}") from None
    if len(fmt.delimiter) != 1 or fmt.delimiter in "\r\n\"":
        raise InputError(f"{filename}: the delimiter must be one character other than a quote or a line break, "
                         f"got {fmt.delimiter!r}")
    text: str | None = None
    if ascii_compatible(fmt.encoding):
        if _is_utf8(fmt.encoding) and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _utf16_without_bom(raw[:65536]):
            raise InputError(f"{filename}: the bytes are UTF-16 text, not {fmt.encoding}; choose utf-16 as the "
                             "encoding")
        raw = _one_newline(raw)
        nul = raw.find(b"\x00")
        if nul >= 0:
            line = raw.count(b"\n", 0, nul) + 1
            raise InputError(f"{filename}: not a text table (a NUL byte on line {line}); {TEXT_HINT}")
        head = raw[:_head_end(raw, b"\n")].decode(fmt.encoding, errors="replace")
    else:
        text = _one_newline_text(_strip_bom(_decode(raw, fmt.encoding, filename)))
        _refuse_binary(text, filename)
        head = text[:_head_end(text, "\n")]
    header_row = _first_row(head, fmt.delimiter, filename)
    width = len(header_row)
    if fmt.header:
        names = column_names(header_row, filename, limits)
    elif names is None or len(names) != width:
        names = [f"column_{i + 1}" for i in range(width)]
    if limits.max_columns is not None and width > limits.max_columns:
        raise InputError(f"{filename}: {width} columns, more than the limit of {limits.max_columns}")
    source: io.IOBase
    if text is None and b'"' not in raw:
        if nrows is None and width > 1 and _is_utf8(fmt.encoding) and arrow:
            table = parse_arrow(raw, fmt, width, limits.max_cell_chars)
            if table is not None:  # None: as _read_arrow's below
                return table.rename_columns(names)
        elif nrows is None and width > 1 and _is_utf8(fmt.encoding):
            frame = _read_arrow(raw, fmt, width, limits)
            if frame is not None:  # None: anything to report, which the checks below name with its line
                frame.columns = names
                return frame if dictionary else text_frame(frame)
        _check_unquoted(raw, fmt, names, filename, nrows, limits)
        source = io.BytesIO(raw)
    else:
        if text is None:
            text = _decode(raw, fmt.encoding, filename)
        _check_quoted(text, fmt.delimiter, names, filename, nrows, limits)
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
    except UnicodeError:
        _decode(raw, fmt.encoding, filename)  # raises, naming the line
        raise InputError(f"{filename}: cannot be decoded as {fmt.encoding}") from None
    except pd.errors.ParserError as exc:
        raise InputError(f"{filename}: cannot be parsed as a delimited table ({exc})") from None
    frame.columns = names
    return frame


def ascii_compatible(encoding: str) -> bool:
    """Encodings in which a delimiter, quote or newline byte is always that character."""
    return "16" not in encoding and "32" not in encoding


def cell_error(filename: str, line: int, column: int, names: list[str], length: int, cap: int) -> InputError:
    return InputError(f"{filename}, line {line}, column {column + 1} ({names[column]!r}): a cell of {length:,} "
                      f"characters, more than the limit of {cap:,}")


def _check_quoted(text: str, delimiter: str, names: list[str], filename: str, nrows: int | None,
                  limits: Limits | None = None) -> None:
    """Every line has as many fields as the first (pandas would pad short rows silently); no cell is longer
    than the cap."""
    width = len(names)
    cap = (limits or Limits()).max_cell_chars
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    start = 1  # the line a record starts on (a quoted field may hold line breaks)
    try:
        for row in reader:
            if nrows is not None and reader.line_num > nrows + 1:
                return
            if row and len(row) != width:
                if reader.line_num > start:
                    raise InputError(f"{filename}, lines {start}-{reader.line_num}: {len(row)} field(s) where the "
                                     f"first line has {width} (a quoted field runs over "
                                     f"{reader.line_num - start + 1} lines: is a closing quote missing?)")
                raise InputError(f"{filename}, line {reader.line_num}: {len(row)} field(s) where the first "
                                 f"line has {width}")
            if cap is not None and row and max(map(len, row)) > cap:
                j = next(j for j, cell in enumerate(row) if len(cell) > cap)
                raise cell_error(filename, reader.line_num, j, names, len(row[j]), cap)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{filename}, line {reader.line_num}: {csv_error(exc)}") from None


def _check_unquoted(raw: bytes, fmt: Format, names: list[str], filename: str, nrows: int | None,
                    limits: Limits | None = None) -> None:
    """Without quoting a field count is a delimiter count: counted per line with numpy, since a
    Python loop over millions of lines would dominate the reading time. A line no longer than the cell
    cap in bytes holds no cell over it; longer lines are split and measured."""
    width, delimiter = len(names), fmt.delimiter
    data = np.frombuffer(raw, dtype=np.uint8)
    ends = np.flatnonzero(data == 10)
    if len(ends) == 0 or ends[-1] != len(data) - 1:
        ends = np.append(ends, len(data))  # a last line without a newline
    starts = np.concatenate(([0], ends[:-1] + 1))
    delims = np.flatnonzero(data == ord(delimiter))
    counts = np.searchsorted(delims, ends) - np.searchsorted(delims, starts)
    lengths = ends - starts
    if nrows is not None:
        counts, lengths, starts = counts[: nrows + 1], lengths[: nrows + 1], starts[: nrows + 1]
    bad = np.flatnonzero((counts != width - 1) & (lengths > 0))
    if bad.size:
        line = int(bad[0])
        raise InputError(f"{filename}, line {line + 1}: {int(counts[line]) + 1} field(s) where the first "
                         f"line has {width}")
    cap = (limits or Limits()).max_cell_chars
    if cap is None:
        return
    for line in np.flatnonzero(lengths > cap):
        start = int(starts[line])
        cells = raw[start:start + int(lengths[line])].decode(fmt.encoding, errors="replace").split(delimiter)
        for j, cell in enumerate(cells):
            if len(cell) > cap:
                raise cell_error(filename, int(line) + 1, j, names, len(cell), cap)


def _read_arrow(raw: bytes, fmt: Format, width: int, limits: Limits) -> pd.DataFrame | None:
    """parse_arrow's table with each column dictionary-encoded: a Categorical of its text, every distinct string
    made a Python object once. None as parse_arrow."""
    import pyarrow.compute as pc  # imported on use: the CLI's start-up does not pay for it

    table = parse_arrow(raw, fmt, width)
    if table is None:
        return None
    columns = {}
    for i in range(width):
        column = arrow_categorical(pc.dictionary_encode(table.column(i)), limits.max_cell_chars)
        if column is None:
            return None
        columns[i] = column
    return pd.DataFrame(columns, index=pd.RangeIndex(table.num_rows))


def parse_arrow(raw: bytes, fmt: Format, width: int, max_chars: int | None = None):
    """Unquoted UTF-8 text parsed by pyarrow's CSV reader (several times faster than pandas' C parser and
    the per-line checks): a pyarrow Table of string columns named "0", "1", ... The cells are exactly pandas'
    (no quoting, no NA parsing, nothing stripped). None when the file needs the checked path: a blank first
    line (pandas would take the next as the header), a CR-LF blank line (pandas skips it where the checks
    refuse it), a parse error (a line of another width, bytes that are not UTF-8), a cell longer than
    ``max_chars``; that path then reports it by line."""
    first = raw[:raw.find(b"\n") + 1 or len(raw)]
    if not first.strip() or raw.startswith(b"\r\n") or (b"\r" in raw and _has_bytes(raw, b"\n\r\n")):
        return None
    import pyarrow as pa  # imported on use: the CLI's start-up does not pay for it
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    keys = [str(i) for i in range(width)]
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(column_names=keys, skip_rows=1 if fmt.header else 0),
            parse_options=pacsv.ParseOptions(delimiter=fmt.delimiter, quote_char=False, double_quote=False,
                                              escape_char=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(column_types={k: pa.string() for k in keys}, null_values=[],
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False,
                                                 check_utf8=True),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if max_chars is not None:
        for column in table.columns:
            # no more characters than bytes: the lengths in bytes (from the offsets) settle nearly every column
            if len(column) and pc.max(pc.binary_length(column)).as_py() > max_chars and \
                    pc.max(pc.utf8_length(column)).as_py() > max_chars:
                return None
    return table


def arrow_categorical(column, max_chars: int | None = None) -> pd.Categorical | None:
    """A dictionary-encoded arrow string column (pyarrow ChunkedArray, no nulls) as a Categorical of its text:
    the chunks' dictionaries unified, each distinct string made a Python object once. None when a value is
    longer than ``max_chars``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = column.unify_dictionaries().chunks
    if chunks:
        dictionary = chunks[0].dictionary
        codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks]).astype(np.int32, copy=False)
    else:
        dictionary, codes = pa.array([], type=pa.string()), np.empty(0, dtype=np.int32)
    if max_chars is not None and len(dictionary) and pc.max(pc.utf8_length(dictionary)).as_py() > max_chars:
        return None
    categories = pd.Index(np.array(dictionary.to_pylist(), dtype=object), dtype=object)
    return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(categories))


def text_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its Categorical columns as text (object) columns: each cell the category's own str
    object, so equal cells share one object (engine.model.cells hashes them by address)."""
    if not any(isinstance(dtype, pd.CategoricalDtype) for dtype in frame.dtypes):
        return frame
    return pd.DataFrame({i: category_cells(frame.iloc[:, i]) if isinstance(frame.dtypes.iloc[i], pd.CategoricalDtype)
                         else frame.iloc[:, i].to_numpy() for i in range(frame.shape[1])},
                        index=frame.index).set_axis(frame.columns, axis=1)


def category_cells(values: pd.Series) -> np.ndarray:
    """A Categorical Series as an object array of its categories' objects (a missing cell: NaN)."""
    cat = values.array
    cells = np.asarray(cat.categories, dtype=object)
    codes = np.asarray(cat.codes)
    if len(cells) == 0 or (codes < 0).any():
        return np.asarray(values.astype(object))
    return cells[codes]


def text_column(values: pd.Series) -> pd.Series:
    """A column as text (object): a Categorical one as its categories' objects, any other as it is."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return values
    return pd.Series(category_cells(values), index=values.index, name=values.name)


def join_pieces(pieces: list[pd.DataFrame]) -> pd.DataFrame:
    """Pieces of one table read in row order as one frame: a column Categorical in every piece stays
    Categorical (the union of the pieces' categories, codes recoded), any other is joined as text."""
    if len(pieces) == 1:
        return pieces[0]
    from pandas.api.types import union_categoricals

    columns = {}
    for i in range(pieces[0].shape[1]):
        parts = [p.iloc[:, i] for p in pieces]
        if all(isinstance(s.dtype, pd.CategoricalDtype) for s in parts):
            columns[i] = union_categoricals([s.array for s in parts])
        else:
            columns[i] = np.concatenate([text_column(s).to_numpy(dtype=object) for s in parts])
    frame = pd.DataFrame(columns, index=pd.RangeIndex(sum(len(p) for p in pieces)))
    return frame.set_axis(pieces[0].columns, axis=1)
