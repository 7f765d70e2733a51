"""What leaves the app as a file: the anonymized CSV (formulas neutralized, optionally shuffled, streamed
a row group at a time), the same rows as Parquet, Excel (.xlsx), JSON lines, Stata (.dta) or SPSS (.sav, value
labels of a labelled upload re-attached), and the run configuration as JSON."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..engine import InputError, Role
from ..engine.io.statfiles import STAT_KINDS, WRITABLE, StatMetadata, read_metadata, write_statfile
from ..engine.model.cells import factorize_cells
from ..engine.run.gate import ITEMS, RECORD_ID
from . import storage

if TYPE_CHECKING:
    from ..models import Job, Result


def _results():
    """services.results, which imports the models: imported where a stored result is read, as are the models,
    because the CLI writes its files through this module without Django's app registry
    (management/deferred_setup.py)."""
    from . import results

    return results


# What a spreadsheet evaluates when a cell starts with it (OWASP CSV injection), full-width forms included
# (some spreadsheets fold them to the ASCII ones).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
# A number stays a number: -5, +2, -3.5, 1e5, -0.25, .5 are data, not formulas.
# \d+(\.\d*)?, not \d+\.?\d*, which backtracks quadratically on a long run of digits (59 s per cell)
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralize(value: str) -> str:
    """Text a spreadsheet would run as a formula gets a leading apostrophe; numbers are left alone."""
    if value.startswith(FORMULA_PREFIXES) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def export_csv(frame: pd.DataFrame, delimiter: str = ",", shuffle: bool = False, seed: int | None = None) -> str:
    """CSV text of the anonymized rows, formulas neutralized, optionally in shuffled row order."""
    if shuffle:
        frame = frame.sample(frac=1.0, random_state=int(np.random.default_rng(seed).integers(2**31)))
    header, columns = _safe_columns(frame)
    parts = _arrow_csv(header, columns, delimiter)
    if parts is not None:
        return parts[0] + parts[1].decode("utf-8")
    return _pandas_csv(frame, header, columns, delimiter)


def export_csv_bytes(frame: pd.DataFrame, delimiter: str = ",", header: bool = True) -> bytes:
    """export_csv(frame, delimiter) as UTF-8 bytes, without its header line unless ``header``: what a file
    gets, pyarrow's bytes as they are (a text of millions of rows is not decoded to be encoded again)."""
    head, rows = export_csv_parts(frame, delimiter, header)
    return head + rows if head else rows


def export_csv_parts(frame: pd.DataFrame, delimiter: str = ",", header: bool = True) -> tuple[bytes, bytes]:
    """export_csv_bytes as (the header line or b"", the rows), for a file that writes them one after the other
    (the rows are not copied behind the header)."""
    names, columns = _safe_columns(frame)
    parts = _arrow_csv(names, columns, delimiter)
    if parts is None:
        text = _pandas_csv(frame, names, columns, delimiter)
        return b"", (text if header else text.split("\n", 1)[1]).encode("utf-8")
    return (parts[0].encode("utf-8") if header else b""), parts[1]


def _safe_columns(frame: pd.DataFrame) -> tuple[list[str], list[tuple[np.ndarray, np.ndarray]]]:
    """The header's texts and each column's (codes, distinct texts), formulas neutralized."""
    return [neutralize(str(c)) for c in frame.columns], [_neutralized_codes(frame[c]) for c in frame.columns]


def _pandas_csv(frame: pd.DataFrame, header: list[str], columns: list[tuple[np.ndarray, np.ndarray]],
                delimiter: str) -> str:
    safe = pd.DataFrame({h: pd.Series(texts[codes], index=frame.index, dtype=object)
                         for h, (codes, texts) in zip(header, columns)})
    return safe.to_csv(sep=delimiter, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


def _arrow_csv(header: list[str], columns: list[tuple[np.ndarray, np.ndarray]],
               delimiter: str) -> tuple[str, bytes] | None:
    """The same bytes as pandas' to_csv (QUOTE_MINIMAL, '\\n'), written by pyarrow from each column's codes
    and distinct texts (a dictionary column: the strings are converted once, not per row) - when no field
    needs quoting; None otherwise (pandas writes it then). pyarrow quotes every string or none, so the
    distinct texts are checked first: no delimiter, quote or line break; no empty field in a one-column
    table (the csv module writes it as ""). Returned as the header line (text) and the rows (UTF-8 bytes)."""
    if not header or len(delimiter) != 1 or not delimiter.isascii():
        return None
    special = re.compile("[" + re.escape(delimiter + '"\r\n') + "]")
    texts = [t for _, t in columns] + [header]
    if any(special.search(text) for t in texts for text in t):  # the distinct texts only: a few per column
        return None
    if len(header) == 1 and any(text == "" for text in columns[0][1]):
        return None
    head = io.StringIO()
    csv.writer(head, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_MINIMAL).writerow(header)
    rows = _distinct_row_bytes(columns, delimiter)
    if rows is not None:
        return head.getvalue(), rows
    import pyarrow as pa  # the export path only: the CLI's --help and the web pages do not load it
    import pyarrow.csv as pa_csv

    arrays = [pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32, copy=False)),
                                             pa.array(t, type=pa.string()))
              for codes, t in columns]
    out = io.BytesIO()
    pa_csv.write_csv(pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))]), out,
                     pa_csv.WriteOptions(include_header=False, delimiter=delimiter, quoting_style="none"))
    return head.getvalue(), out.getvalue()


DISTINCT_ROWS_MIN = 4096  # rows from which the lines are made once per distinct row (below: pyarrow writes them)
DISTINCT_ROWS_SHARE = 0.5  # ... when at most this share of the rows are distinct


def _distinct_row_bytes(columns: list[tuple[np.ndarray, np.ndarray]], delimiter: str) -> bytes | None:
    """The rows' lines (no field needs quoting: _arrow_csv checked) as pyarrow writes them, each distinct row's
    line made once: an anonymized table repeats its rows (1M Adult rows: 27k distinct), so the line of a row is
    its distinct row's, joined in row order, instead of every cell converted and written. None when the rows are
    few, or mostly distinct, or their codes do not combine into one 64-bit key."""
    rows = len(columns[0][0]) if columns else 0
    if rows < DISTINCT_ROWS_MIN:
        return None
    key = np.zeros(rows, dtype=np.int64)
    radix = 1
    for codes, texts in columns:
        if not len(texts) or radix > 2**62 // len(texts):
            return None
        key += codes.astype(np.int64, copy=False) * radix  # codes index texts: 0 <= code < len(texts)
        radix *= len(texts)
    row_of, distinct = pd.factorize(key)
    if len(distinct) > rows * DISTINCT_ROWS_SHARE:
        return None
    fields = []
    rest = np.asarray(distinct, dtype=np.int64)
    for _, texts in columns:  # each distinct key back into its codes, column by column
        fields.append(texts[rest % len(texts)].tolist())
        rest = rest // len(texts)
    lines = np.array([(delimiter.join(cells) + "\n").encode("utf-8") for cells in zip(*fields)], dtype=object)
    return b"".join(lines[row_of].tolist())


def transaction_lines(frame: pd.DataFrame, delimiter: str):
    """Published transaction records (engine.run.gate: an optional record id column, then the items joined by
    the item delimiter) as the lines of a transaction file, every field neutralized."""
    ids = frame[RECORD_ID].tolist() if RECORD_ID in frame.columns else None
    for r, cell in enumerate(frame[ITEMS].tolist()):
        fields = ([ids[r]] if ids is not None else []) + [x for x in str(cell).split(delimiter) if x]
        yield delimiter.join(neutralize(str(x)) for x in fields) + "\n"


def _neutralized_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(code per row, distinct texts neutralized): a column as export_csv writes it. Only the distinct values
    are tested and rewritten."""
    coded = _category_codes(values)
    if coded is not None:
        return coded
    cells = values.to_numpy(dtype=object)
    uniques: pd.Index | np.ndarray
    codes, uniques = factorize_cells(cells)  # rows sharing a str object are hashed once (engine.model.cells)
    if len(codes) and codes.min() < 0:  # missing cells: a code of their own, written as their text ('nan')
        codes, uniques = pd.factorize(cells, use_na_sentinel=False)
    text = pd.Series(uniques, dtype=object).astype(str).to_numpy(dtype=object)
    return codes, np.array([neutralize(t) for t in text], dtype=object)


def _category_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """A Categorical column's own codes and its categories' texts neutralized (the run's coded QI columns: no
    object per row made and hashed back into codes); the texts every row gets are those of its cells. None
    where the cell path must decide: a missing cell (written 'nan'), or a text holding a NUL character (pandas'
    factorize hashes a str up to its first NUL, so the cell path writes such texts as it always did)."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return None
    codes = np.asarray(values.array.codes)
    if len(codes) and codes.min() < 0:
        return None
    text = pd.Series(np.asarray(values.dtype.categories, dtype=object), dtype=object).astype(str).to_numpy(dtype=object)
    if any("\x00" in t for t in text):
        return None
    return codes, np.array([neutralize(t) for t in text], dtype=object)


def iter_output_csv(result: Result, delimiter: str = ",", drop_suppressed: bool = False):
    """The CSV download a row group at a time (a million rows never sit in memory as text). A group is read
    as Parquet's dictionary codes: its texts are neutralized and converted once per distinct value of a
    column, not built as a str per cell and hashed again (1M rows: ~3x less CPU); the same text as
    export_csv of the group's frame. A synthetic set's publication check runs first (checked_for_publication)."""
    checked_for_publication(result)
    for g, group in enumerate(storage.iter_row_group_tables(storage.output_path(result), dictionary=True)):
        text = _group_csv(group, delimiter, drop_suppressed)
        yield text if g == 0 else text.split("\n", 1)[1]


def _group_csv(group, delimiter: str, drop_suppressed: bool) -> str:
    """One stored row group of a result as CSV text (header line included)."""
    parts = _dictionary_csv(group, delimiter, drop_suppressed)
    if parts is not None:
        return parts[0] + parts[1].decode("utf-8")
    frame, suppressed = _results().split_suppressed(storage.to_frame(group))
    if drop_suppressed:
        frame = frame[~suppressed]
    return export_csv(frame, delimiter)


def _dictionary_csv(group, delimiter: str, drop_suppressed: bool) -> tuple[str, bytes] | None:
    """_arrow_csv's parts straight from a group's dictionary codes (the codes of the rows written, the
    dictionary's texts neutralized); None when a column is not a null-free dictionary of text in one chunk,
    or when _arrow_csv declines (a field that needs quoting): the frame's path writes the group then."""
    import pyarrow as pa  # the export path only

    results = _results()
    names = [n for n in group.column_names if n not in (results.SUPPRESSED_COLUMN, results.ROW_COLUMN)]
    if len(set(names)) != len(names) or results.SUPPRESSED_COLUMN not in group.column_names:
        return None
    keep = ~group.column(results.SUPPRESSED_COLUMN).to_numpy() if drop_suppressed else None
    columns = []
    for name in names:
        column = group.column(name)
        if column.num_chunks != 1 or column.null_count or not pa.types.is_dictionary(column.type) \
                or not pa.types.is_string(column.type.value_type):
            return None
        chunk = column.chunk(0)
        codes = chunk.indices.to_numpy()
        texts = chunk.dictionary.to_numpy(zero_copy_only=False)
        columns.append((codes if keep is None else codes[keep],
                        np.array([neutralize(str(t)) for t in texts], dtype=object)))
    return _arrow_csv([neutralize(str(c)) for c in names], columns, delimiter)


def job_configuration(job: Job) -> dict:
    """The run configuration as downloadable JSON (enough to repeat the run from the CLI)."""
    columns = job.config.get("columns", [])
    return {
        "dataset": job.dataset.original_name,
        "algorithm": job.algorithm,
        "k": job.k,
        "suppression_limit": job.suppression_limit,
        "sensitive": job.sensitive or None,
        "options": job.options,
        "models": job.models,
        "quasi_identifiers": [c["name"] for c in columns if c["role"] == Role.QUASI_IDENTIFYING.value],
        "identifiers": [c["name"] for c in columns if c["role"] == Role.IDENTIFYING.value],
        "columns": columns,
        "delimiter": job.dataset.delimiter,
        **({"population": job.config["population"]} if job.config.get("population") else {}),
    }


# ---- other formats of a result: Parquet, Excel, JSON lines (one function per format, each returns bytes) ----
# Published cells are stored as text. A column is written as numbers only where every published value is
# a number written canonically (so that the number read back prints as the same text the CSV holds) and
# the run typed the column as a number; a generalized or suppressed cell ("[20, 30[", "*") makes the whole
# column text. Parquet, JSON lines and SQL carry the values as published; the spreadsheet formats (CSV,
# Excel) neutralize formulas.
INTEGER_TEXT = re.compile(r"-?(0|[1-9]\d{0,17})")
XLSX_MAX_ROWS = 1_048_575  # a worksheet's rows, the header row aside


class ExportError(InputError):
    """A result that cannot be written in the chosen format (the message says why)."""


@dataclass(frozen=True)
class ExportFormat:
    name: str
    extension: str
    content_type: str
    label: str


EXPORT_FORMATS: dict[str, ExportFormat] = {f.name: f for f in (
    ExportFormat("csv", ".csv", "text/csv; charset=utf-8", "CSV"),
    ExportFormat("tsv", ".tsv", "text/tab-separated-values; charset=utf-8", "TSV (tab-separated)"),
    ExportFormat("parquet", ".parquet", "application/vnd.apache.parquet", "Parquet"),
    ExportFormat("xlsx", ".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                 "Excel (.xlsx)"),
    ExportFormat("jsonl", ".jsonl", "application/jsonl; charset=utf-8", "JSON lines"),
    ExportFormat("dta", ".dta", "application/x-stata-dta", "Stata (.dta)"),
    ExportFormat("sav", ".sav", "application/x-spss-sav", "SPSS (.sav)"),
)}


def format_for_path(path: str) -> ExportFormat | None:
    """The export format named by a file's extension (.csv, .tsv, .parquet, .xlsx, .jsonl), None otherwise."""
    suffix = Path(path).suffix.lower()
    return next((f for f in EXPORT_FORMATS.values() if f.extension == suffix), None)


def _is_decimal_text(value: str) -> bool:
    try:
        number = float(value)
    except ValueError:
        return False
    return np.isfinite(number) and repr(number) == value


def column_kinds(frame: pd.DataFrame, types: dict[str, str] | None = None) -> dict[str, str]:
    """Per column "integer", "decimal" or "text": numbers only where every value allows (see above) and,
    when ``types`` (the run's column types) is given, the column was typed integer or decimal."""
    kinds = {}
    for name in frame.columns:
        kind = "text"
        if types is None or types.get(str(name)) in ("integer", "decimal"):
            distinct = pd.Series(pd.unique(frame[name].to_numpy(dtype=object)), dtype=object).astype(str)
            if len(distinct) and distinct.str.fullmatch(INTEGER_TEXT.pattern).all():
                kind = "integer"
            elif len(distinct) and all(_is_decimal_text(v) for v in distinct):
                kind = "decimal"
        kinds[str(name)] = kind
    return kinds


def typed_column(values: pd.Series, kind: str) -> pd.Series:
    """A published column as the values an export writes: int64, float64 or the text."""
    if kind == "integer":
        return values.astype(str).astype(np.int64)
    if kind == "decimal":
        return values.astype(str).astype(np.float64)
    return values.astype(str)


def export_parquet(frame: pd.DataFrame, types: dict[str, str] | None = None) -> bytes:
    """The published rows as a Parquet file (numeric columns typed, the others strings)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = column_kinds(frame, types)
    arrow_types = {"integer": pa.int64(), "decimal": pa.float64(), "text": pa.string()}
    arrays = [pa.array(typed_column(frame[c], kinds[str(c)]).to_numpy(), type=arrow_types[kinds[str(c)]])
              for c in frame.columns]
    out = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, names=[str(c) for c in frame.columns]), out)
    return out.getvalue()


def export_jsonl(frame: pd.DataFrame, types: dict[str, str] | None = None) -> bytes:
    """One JSON object per published row ({column: value}), numbers where the column allows, UTF-8."""
    kinds = column_kinds(frame, types)
    names = [str(c) for c in frame.columns]
    columns = [typed_column(frame[c], kinds[str(c)]).tolist() for c in frame.columns]
    lines = [json.dumps(dict(zip(names, row)), ensure_ascii=False) for row in zip(*columns)]
    return ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8")


def export_xlsx(frame: pd.DataFrame, types: dict[str, str] | None = None) -> bytes:
    """An Excel workbook of the published rows: numbers in numeric cells where the column allows, every
    other cell stored as text (a generalized "[20, 30[" or "01/02" never becomes a number or a date) and
    neutralized exactly as the CSV export (a formula's text gets its leading apostrophe)."""
    if len(frame) > XLSX_MAX_ROWS:
        raise ExportError(f"{len(frame):,} rows: more than an Excel worksheet holds ({XLSX_MAX_ROWS:,}); "
                          "choose CSV, Parquet or JSON lines")
    from openpyxl import Workbook
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    kinds = column_kinds(frame, types)
    book = Workbook(write_only=True)
    sheet = book.create_sheet("anonymized")
    # Plain str values are stored as text cells (openpyxl's type "s"); only a text starting with "=" would
    # become a formula, and neutralize() has given every such text its apostrophe.
    header = [neutralize(str(c)) for c in frame.columns]
    columns = []
    for c, name in zip(frame.columns, header):
        kind = kinds[str(c)]
        if kind == "text":
            codes, texts = _neutralized_codes(frame[c])
            bad = next((t for t in texts if ILLEGAL_CHARACTERS_RE.search(t)), None)
            if bad is not None:
                raise ExportError(f"column {name!r}: the value {bad[:40]!r} holds a control character an Excel "
                                  "workbook cannot store; choose CSV, Parquet or JSON lines")
            columns.append(texts[codes].tolist() if len(codes) else [])
        else:
            columns.append(typed_column(frame[c], kind).tolist())
    if any(ILLEGAL_CHARACTERS_RE.search(h) for h in header):
        raise ExportError("a column name holds a control character an Excel workbook cannot store")
    sheet.append(header)
    for row in zip(*columns):
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def export_frame(frame: pd.DataFrame, fmt: str, types: dict[str, str] | None = None,
                 delimiter: str | None = None, labels: StatMetadata | None = None) -> bytes:
    """The published rows in format ``fmt`` (a key of EXPORT_FORMATS) as bytes: the one entry point the web
    downloads, the CLI, the API and the repository deposits share. ``labels``: a Stata/SPSS/SAS upload's value
    and variable labels, re-attached in a .dta or .sav where the published values are still its labels."""
    if fmt in WRITABLE:
        try:
            return write_statfile(frame, fmt, column_kinds(frame, types), labels)
        except InputError as exc:
            raise ExportError(str(exc)) from None
    if fmt in ("csv", "tsv"):
        return export_csv_bytes(frame, delimiter or ("\t" if fmt == "tsv" else ","))
    if fmt == "parquet":
        return export_parquet(frame, types)
    if fmt == "xlsx":
        return export_xlsx(frame, types)
    if fmt == "jsonl":
        return export_jsonl(frame, types)
    raise ExportError(f"unknown export format {fmt!r}: one of " + ", ".join(EXPORT_FORMATS))


def job_column_types(job: Job) -> dict[str, str]:
    """The column types of a run's configuration (what it typed each published column)."""
    return {c["name"]: c.get("type", "string") for c in (job.config or {}).get("columns", [])}


def checked_for_publication(result: Result) -> None:
    """A synthetic set passes its publication check before any of its rows leave (services/synthesis_gate.py);
    ExportError naming why otherwise. A run's rows passed the run's gate when they were stored."""
    from ..models import Job

    if result.job.kind != Job.SYNTHESIS:
        return
    from . import synthesis_gate  # it reads the dataset and the ledger: only for a synthetic set

    try:
        synthesis_gate.check_result(result)
    except synthesis_gate.SyntheticTableRefused as exc:
        raise ExportError(str(exc)) from None


def result_frame(result: Result, drop_suppressed: bool = False) -> pd.DataFrame:
    """A result's published rows (suppressed ones left out when asked), as text; a synthetic set's only once
    its publication check passes."""
    checked_for_publication(result)
    frame, suppressed = _results().load_output(result)
    frame.attrs.pop("rows", None)
    return frame[~suppressed].reset_index(drop=True) if drop_suppressed else frame


def export_result(result: Result, fmt: str, drop_suppressed: bool = False) -> bytes:
    """A result's published rows in format ``fmt``, the run's column types deciding numbers."""
    return export_frame(result_frame(result, drop_suppressed), fmt, job_column_types(result.job),
                        delimiter=result.job.dataset.delimiter if fmt == "csv" else None,
                        labels=dataset_labels(result.job.dataset) if fmt in WRITABLE else None)


def dataset_labels(dataset) -> StatMetadata | None:
    """The value and variable labels of a Stata, SPSS or SAS upload, read from the stored original's header
    (engine.io.statfiles); None for other uploads or when the original is gone."""
    if dataset.kind not in STAT_KINDS or not dataset.original:
        return None
    try:
        return read_metadata(storage.original_path(dataset), dataset.original_name, dataset.kind)
    except (InputError, OSError):
        return None
