"""Reading table files: the format sniffed from the first bytes, the rows parsed in pieces, written to
Parquet. The one reader of uploads, the CLI's inputs and the comparison command's tables.

Files up to STREAM_THRESHOLD bytes are parsed in one piece by the engine's reader; larger text files
are read in blocks of STREAM_BLOCK bytes and written to Parquet block by block, never whole in memory.
Every path applies the same caps (engine.io.reader.Limits from the ANONYMIZER_MAX_* settings): cell and
column-name lengths, a workbook's unpacked size, and rows and columns where the caller asks for them.
"""

from __future__ import annotations

import codecs
import csv
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from django.conf import settings

from .. import engine
from ..engine import Format, InputError
from ..engine.io import reader as reader_mod
from ..engine.io.reader import Limits
from . import storage
from .column_profile import ColumnProfile

STREAM_THRESHOLD = 32 * 1024 * 1024
STREAM_BLOCK = 16 * 1024 * 1024
SNIFF_BYTES = 65537


def limits(rows: bool = False) -> Limits:
    """The caps from the settings; the row and column caps only when ``rows`` (uploads; the CLI reads any size)."""
    return Limits(
        max_rows=settings.ANONYMIZER_MAX_ROWS if rows else None,
        max_columns=settings.ANONYMIZER_MAX_COLUMNS if rows else None,
        max_cell_chars=settings.ANONYMIZER_MAX_CELL_CHARS,
        max_header_chars=settings.ANONYMIZER_MAX_HEADER_CHARS,
        max_xlsx_mb=settings.ANONYMIZER_MAX_XLSX_MB,
        max_xlsx_ratio=settings.ANONYMIZER_MAX_XLSX_RATIO,
    )


def sniff_file(path: Path, filename: str) -> Format:
    """The format from the first bytes of the file only."""
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    return engine.sniff(head, filename)


def iter_table_file(path: str | Path, filename: str | None = None, fmt: Format | None = None,
                    max_rows: int | None = None, max_columns: int | None = None,
                    block_bytes: int | None = None, caps: Limits | None = None, header: bool | None = None,
                    dictionary: bool = False, arrow: bool = False):
    """Parse a table file from its path; yields (frame, format) pieces in row order.

    Small files and workbooks: one piece from engine.read_table. Larger text files: blocks of
    ``block_bytes`` cut at a line end (unquoted, ASCII-compatible encodings) or pandas chunks
    (quoted fields may hold line breaks), each checked like the engine's reader (same field-count,
    cell-length and encoding messages, with the line numbers of the whole file). ``caps``: limits()
    unless given; ``max_rows``/``max_columns`` win over its row and column caps. ``header`` overrides
    the sniffed header choice of a sniffed format. ``dictionary``: columns read by pyarrow come as Categoricals of
    their text (engine.read_table), which a Table encodes without hashing a string per row. ``arrow``: the blocks
    pyarrow parses come as pyarrow Tables of their text columns (no pandas object per piece; write_parquet writes
    them as they are), any other piece as a frame."""
    path = Path(path)
    filename = filename or path.name
    caps = caps or limits()
    caps = replace(caps, max_rows=max_rows if max_rows is not None else caps.max_rows,
                   max_columns=max_columns if max_columns is not None else caps.max_columns)
    max_rows, max_columns = caps.max_rows, caps.max_columns
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror})") from None
    sniffed = fmt is None
    fmt = fmt or sniff_file(path, filename)
    if sniffed and header is not None:
        fmt = replace(fmt, header=header)
    if fmt.kind != "csv" or size <= STREAM_THRESHOLD:  # workbooks and Stata/SPSS/SAS files: one piece
        # a sniffed UTF-8 may turn out single-byte past the first 64 KiB: the engine then reads it so
        frame, fmt = engine.read_table(path.read_bytes(), filename, fmt, limits=caps, encoding_sniffed=sniffed,
                                       dictionary=dictionary)
        yield frame, fmt
        return
    block_bytes = block_bytes or STREAM_BLOCK
    quoted, utf8 = _scan(path, check_utf8=sniffed and fmt.encoding == "utf-8")
    if not utf8:  # UTF-8 in the first 64 KiB only: the file is in a single-byte encoding
        fmt = replace(fmt, encoding=_single_byte_encoding(path))
    if quoted or not reader_mod.ascii_compatible(fmt.encoding):
        pieces = _iter_quoted(path, filename, fmt, block_bytes, caps)
    else:
        pieces = _iter_blocks(path, filename, fmt, block_bytes, caps, dictionary, arrow)
    rows = 0
    for frame in pieces:
        if max_columns is not None and frame.shape[1] > max_columns:
            raise InputError(f"{filename}: {frame.shape[1]} columns, more than the limit of {max_columns}")
        rows += len(frame)
        if max_rows is not None and rows > max_rows:
            raise InputError(f"{filename}: more than the limit of {max_rows:,} rows")
        yield frame, fmt
    if rows == 0:
        raise InputError(f"{filename}: no data rows")


def _scan(path: Path, check_utf8: bool) -> tuple[bool, bool]:
    """One pass over the file: does it quote fields, and is it UTF-8 throughout (when asked)."""
    quoted, decoder = False, codecs.getincrementaldecoder("utf-8")() if check_utf8 else None
    with open(path, "rb") as fh:
        while chunk := fh.read(STREAM_BLOCK):
            quoted = quoted or b'"' in chunk
            if decoder is not None:
                # ASCII is UTF-8: decoded only when a byte is not, or a character began in the chunk before
                if chunk.isascii() and not decoder.getstate()[0]:
                    continue
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    return quoted or _has_quote(fh), False
            elif quoted:
                break
    return quoted, True


def _has_quote(fh) -> bool:
    while chunk := fh.read(STREAM_BLOCK):
        if b'"' in chunk:
            return True
    return False


def _single_byte_encoding(path: Path) -> str:
    decoder = codecs.getincrementaldecoder("windows-1252")()
    with open(path, "rb") as fh:
        while chunk := fh.read(STREAM_BLOCK):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                return "latin-1"
    return "windows-1252"


def _renumber(exc: InputError, offset: int) -> InputError:
    text = re.sub(r", line (\d+)([:,])", lambda m: f", line {int(m.group(1)) + offset}{m.group(2)}", str(exc), count=1)
    text = re.sub(r"on line (\d+)\)", lambda m: f"on line {int(m.group(1)) + offset})", text, count=1)
    return InputError(text)


def _iter_blocks(path: Path, filename: str, fmt: Format, block_bytes: int, caps: Limits, dictionary: bool = False,
                 arrow: bool = False):
    """Unquoted text: blocks cut after a newline, parsed by the engine's reader one by one (``arrow``: a block
    pyarrow parses as a pyarrow Table)."""
    names: list | None = None  # the first block's column names
    width, line_offset = 0, 0
    with open(path, "rb") as fh:
        while True:
            block = fh.read(block_bytes)
            if block and not block.endswith(b"\n"):
                block += fh.readline()  # to the end of its last line: one copy of the block
            if block and not block.isspace():  # as block.strip(), without copying the block
                first = names is None
                piece_fmt = fmt if first else replace(fmt, header=False)
                try:
                    frame = reader_mod.read_csv(block, filename, piece_fmt, None, caps, names=names,
                                                 dictionary=dictionary, arrow=arrow)
                except InputError as exc:
                    raise _renumber(exc, line_offset) from None
                if names is None:  # the first block
                    names, width = _column_names(frame), frame.shape[1]
                elif frame.shape[1] != width:
                    raise InputError(f"{filename}, line {line_offset + 1}: {frame.shape[1]} field(s) where the "
                                     f"first line has {width}")
                elif isinstance(frame, pa.Table):
                    frame = frame.rename_columns(names)
                else:
                    frame.columns = names
                yield frame
            line_offset += block.count(b"\n")
            if not block:
                break


def _column_names(piece: pd.DataFrame | pa.Table) -> list:
    return list(piece.column_names) if isinstance(piece, pa.Table) else list(piece.columns)


def _iter_quoted(path: Path, filename: str, fmt: Format, block_bytes: int, caps: Limits):
    """Quoted fields or a wide encoding: one streaming pass of csv.reader checks the field counts and cell
    lengths, then pandas parses the file in chunks of rows."""
    cap = caps.max_cell_chars
    rows = None
    with open(path, encoding=fmt.encoding, newline="", errors="strict") as fh:
        try:
            bom = fh.read(1)  # decodes the first block: a wrong encoding may fail here already
            if bom != "\ufeff":
                fh.seek(0)
            rows = csv.reader(fh, delimiter=fmt.delimiter)
            header = next(rows)
            width = len(header)
            names = reader_mod.column_names(header, filename, caps) if fmt.header else [f"column_{i + 1}" for i in range(width)]
            if caps.max_columns is not None and width > caps.max_columns:
                raise InputError(f"{filename}: {width} columns, more than the limit of {caps.max_columns}")
            for row in rows:
                if row and len(row) != width:
                    raise InputError(f"{filename}, line {rows.line_num}: {len(row)} field(s) where the first "
                                     f"line has {width}")
                if cap is not None and row and max(map(len, row)) > cap:
                    j = next(j for j, cell in enumerate(row) if len(cell) > cap)
                    raise reader_mod.cell_error(filename, rows.line_num, j, names, len(row[j]), cap)
        except StopIteration:
            raise InputError(f"{filename}: the file is empty") from None
        except csv.Error as exc:
            raise InputError(f"{filename}, line {rows.line_num if rows is not None else 1}: {reader_mod.csv_error(exc)}") from None
        except UnicodeError as exc:
            # a UnicodeDecodeError has a reason ('invalid start byte'); a bare UnicodeError only its text (the
            # utf-16 and utf-32 codecs: 'UTF-16 stream does not start with BOM')
            reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
            raise InputError(f"{filename}, line {(rows.line_num if rows is not None else 0) + 1}: cannot be decoded as "
                             f"{fmt.encoding} ({reason}); choose the file's encoding") from None
    chunk_rows = max(1000, block_bytes // max(1, 8 * width))
    reader = pd.read_csv(path, sep=fmt.delimiter, header=0 if fmt.header else None, dtype=str,
                         keep_default_na=False, na_filter=False, skip_blank_lines=True, names=range(width),
                         encoding=fmt.encoding, engine="c", chunksize=chunk_rows)
    try:
        for frame in reader:
            frame.columns = names
            yield frame
    except pd.errors.ParserError as exc:
        raise InputError(f"{filename}: cannot be parsed as a delimited table ({exc})") from None


def _schema(columns) -> pa.Schema:
    return pa.schema([(str(c), pa.string()) for c in columns])


def _arrow(piece: pd.DataFrame | pa.Table, schema: pa.Schema) -> pa.Table:
    """A piece as the stored table's strings: a Table (iter_table_file's ``arrow``) as it is, a frame converted."""
    if isinstance(piece, pa.Table):
        return pa.Table.from_arrays([c.cast(pa.string()) for c in piece.columns], schema=schema)
    return pa.Table.from_arrays([_arrow_text(piece[c]) for c in piece.columns], schema=schema)


def _arrow_text(values) -> pa.Array:
    """A column as Arrow strings. A Categorical of str without missing cells (iter_table_file's dictionary
    read) is expanded from its codes by Arrow (no Python str per cell); anything else converted cell by cell."""
    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        categories = values.cat.categories.to_numpy(dtype=object)
        if not (codes < 0).any() and all(type(c) is str for c in categories):
            return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32, copy=False)),
                                                  pa.array(categories, type=pa.string())).cast(pa.string())
    return pa.array(values.to_numpy(dtype=object), type=pa.string())


def store_table_file(path: Path, filename: str, fmt: Format | None, target: Path, profile: ColumnProfile | None = None,
                     **options) -> tuple[Format, int, list[str]]:
    """iter_table_file(path, filename, fmt, **options) written to ``target`` (write_parquet, counting into
    ``profile``): the format the file was read in, its rows and its columns. Read with dictionary=True and
    arrow=True unless told: the blocks pyarrow parses go to Parquet as Arrow text without a pandas object, and the
    reader's Categoricals of the other pieces become Arrow strings without a Python str per cell."""
    options.setdefault("dictionary", True)
    options.setdefault("arrow", True)
    read, rows, columns = write_parquet(iter_table_file(path, filename, fmt, **options), target, profile)
    if read is None:  # iter_table_file yields at least one piece or raises
        raise InputError(f"{filename}: no data rows")
    return read, rows, columns


def write_parquet(pieces, target: Path, profile: ColumnProfile | None = None) -> tuple[Format | None, int, list[str]]:
    """Write (frame or Table, format) pieces to ``target`` atomically; returns the format, rows and columns.
    ``profile``: each column's distinct values and counts gathered from what is written.

    A piece is written, and counted, on threads of their own while the next one is parsed: pyarrow's parsing,
    Parquet encoding and counting run outside the GIL, so the three overlap. Leaving the ``with`` blocks waits for
    those threads before the temporary file is closed (or removed, when parsing failed)."""
    fmt: Format | None = None
    rows = 0
    columns: list[str] = []
    with storage.AtomicParquet(target, statistics=False) as out, \
            ThreadPoolExecutor(2, thread_name_prefix="parquet") as threads:
        pending: list[Future] = []
        for frame, piece_fmt in pieces:
            fmt = piece_fmt
            if not columns:
                columns = [str(c) for c in _column_names(frame)]
            table = _arrow(frame, _schema(columns))
            for done in pending:  # one piece in flight: the pieces are written and counted in order
                done.result()
            pending = [threads.submit(out.write, table)] + ([threads.submit(profile.add, table)] if profile else [])
            rows += len(frame)
        for done in pending:
            done.result()
        out.commit(_schema(columns))
    return fmt, rows, columns
