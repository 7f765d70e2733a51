"""Statistical-package files through pyreadstat: Stata (.dta), SPSS (.sav, .zsav) and SAS (.sas7bdat) read;
.dta and .sav written.

Reading: the format is known from the file's first bytes (as the other formats: the content decides, not
the name). Every cell becomes text, as a CSV is read: numbers without a needless ``.0`` (``36``, not
``36.0``), missing values (system- and user-missing) as the empty cell. **Value labels become the values
shown**: a labelled code reads as its label (``2`` with label ``female`` reads ``female``), a code without
a label stays its number; hierarchies, policies and results then speak the labels people know. The labels
and the variable labels stay in the stored original upload, and ``read_metadata`` reads them back for the
export (the dataset model has no field for them). SAS value labels live in a separate format catalog
(.sas7bcat): a .sas7bdat alone reads as its codes; a bundle (sas_bundle.py: a zip of the .sas7bdat and its
.sas7bcat) reads with the catalog's labels, as a .sav with its own. A damaged catalog is refused by its name.

Writing: a column whose published values are all labels (or unlabelled codes) of its original label set is
written as its codes with the labels re-attached; any other column (generalized ``[20, 30[``, ``*``, a
suppressed cell) as numbers where every value is a number of a numeric column (typed so by the run, or stored
as numbers in the original file), else as text. Names must be valid for the
target: Stata 32 characters of letters, digits and ``_`` not starting with a digit; SPSS 64 bytes starting
with a letter. The file is written in a temporary folder and returned as bytes: nothing is half-written.

Hostile files are bounded like the other formats: the upload's size cap (before this reader), the rows and
columns caps checked from the file's header before the data are read, the cell and column-name caps."""

from __future__ import annotations

import io
import math
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from . import sas_bundle
from .table_format import Limits, column_names

# the first bytes of each format
SAS_MAGIC = bytes.fromhex("000000000000000000000000c2ea8160b31411cfbd92080009c7318c181f1011")
STAT_KINDS: dict[str, str] = {"dta": "Stata .dta", "sav": "SPSS .sav", "sas7bdat": "SAS .sas7bdat"}
WRITABLE = ("dta", "sav")
STATA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
STATA_RESERVED = frozenset("_all _b byte _coef _cons double float if in int long _n _N _pi _pred _rc _skip "
                           "strL using with".split())
# compiled when an SPSS file is written (re's module cache keeps it): the class up to \uffff takes 10-30 ms to
# compile, which every process importing the reader would pay
SPSS_NAME = r"[A-Za-z@#$\u00c0-\uffff][A-Za-z0-9_.@#$\u00c0-\uffff]*"
SPSS_RESERVED = frozenset("ALL AND BY EQ GE GT LE LT NE NOT OR TO WITH".split())
SPSS_NAME_BYTES = 64
STATA_LABEL_CHARS = 32_000  # a Stata value label's text (and 80 for a variable label)


@dataclass
class StatMetadata:
    """What a statistical-package file says beside its cells."""

    kind: str
    value_labels: dict[str, dict[Any, str]] = field(default_factory=dict)  # column -> {code: label}
    variable_labels: dict[str, str] = field(default_factory=dict)  # column -> its description
    file_label: str = ""
    numeric: frozenset[str] = frozenset()  # the columns the file stores as numbers
    catalog: str = ""  # a SAS file's format catalog read with it (its name), "" without one


def stat_kind(head: bytes) -> str | None:
    """The statistical-package format of a file from its first bytes, None when it is none of them."""
    if head.startswith((b"$FL2", b"$FL3")):
        return "sav"
    if head.startswith(b"<stata_dta>"):
        return "dta"  # Stata 13 and later
    # Stata 5-12: a version byte (0x69 = 105 ... 0x73 = 115), the byte order (1 or 2), the file type 1, a 0
    if len(head) >= 4 and 0x69 <= head[0] <= 0x73 and head[1] in (1, 2) and head[2] == 1 and head[3] == 0:
        return "dta"
    if head.startswith(SAS_MAGIC):
        return "sas7bdat"
    return None


def _source(source: bytes | str | Path) -> Any:
    return io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else str(source)


def _read(kind: str, source: bytes | str | Path, filename: str, **options: Any) -> tuple[pd.DataFrame, Any]:
    import pyreadstat  # the statistical-package path only

    readers: dict[str, Any] = {"dta": pyreadstat.read_dta, "sav": pyreadstat.read_sav, "sas7bdat": pyreadstat.read_sas7bdat}
    try:
        return readers[kind](_source(source), **options)
    except (pyreadstat.ReadstatError, pyreadstat.PyreadstatError, UnicodeDecodeError, ValueError,
            OverflowError) as exc:
        raise InputError(f"{filename}: not a readable {STAT_KINDS[kind]} file ({exc}); the file may be cut "
                         f"short or damaged: save it again from the statistical package") from None


@dataclass(frozen=True)
class _Opened:
    """What pyreadstat reads: the data (a path or bytes) and, for a SAS bundle, its catalog."""

    data: bytes | str | Path
    catalog: bytes | None = None
    catalog_name: str = ""


def _open(kind: str, source: bytes | str | Path, filename: str) -> _Opened:
    """A SAS bundle unpacked (its catalog checked on its own first, so a damaged one is named); any other file
    as it is."""
    if kind != "sas7bdat":
        return _Opened(source)
    raw: bytes | None = bytes(source) if isinstance(source, (bytes, bytearray)) else None
    if raw is None:
        with open(source, "rb") as fh:
            if fh.read(len(sas_bundle.ZIP_MAGIC)) == sas_bundle.ZIP_MAGIC:
                fh.seek(0)
                raw = fh.read()
    if raw is None or not raw.startswith(sas_bundle.ZIP_MAGIC):
        return _Opened(source)
    pair = sas_bundle.unpack(raw, filename)
    if pair.catalog is not None:
        check_catalog(pair.catalog, pair.catalog_name)
    return _Opened(pair.data, pair.catalog, pair.catalog_name)


def check_catalog(catalog: bytes, name: str) -> dict[str, dict[Any, str]]:
    """The formats a SAS catalog defines (format name -> {value: label}), or InputError naming the file."""
    import pyreadstat  # the statistical-package path only

    if not catalog:
        raise InputError(f"{name}: the format catalog is empty")
    try:
        _, meta = pyreadstat.read_sas7bcat(io.BytesIO(catalog))
    except (pyreadstat.ReadstatError, pyreadstat.PyreadstatError, UnicodeDecodeError, ValueError,
            OverflowError) as exc:
        raise InputError(f"{name}: not a readable SAS format catalog (.sas7bcat) ({exc}); the file may be cut "
                         f"short or damaged: save it again from SAS") from None
    return dict(meta.value_labels or {})


def _header(kind: str, opened: _Opened, filename: str) -> tuple[Any, StatMetadata]:
    """The file's header read (with a SAS catalog, its value labels) and its metadata."""
    options: dict[str, Any] = {"metadataonly": True}
    if opened.catalog is not None:
        options["catalog_file"] = io.BytesIO(opened.catalog)
    _, meta = _read(kind, opened.data, filename, **options)
    return meta, _metadata(kind, meta, opened.catalog_name)


def read_metadata(source: bytes | str | Path, filename: str, kind: str) -> StatMetadata:
    """The value labels, variable labels and file label of a file (its header only; a SAS bundle's labels
    from its catalog)."""
    return _header(kind, _open(kind, source, filename), filename)[1]


def _metadata(kind: str, meta: Any, catalog: str = "") -> StatMetadata:
    labels = {str(c): {k: str(v) for k, v in (labels or {}).items()}
              for c, labels in (meta.variable_value_labels or {}).items() if labels}
    described = {str(c): str(v) for c, v in (meta.column_names_to_labels or {}).items() if v}
    numeric = frozenset(str(c) for c, t in (meta.readstat_variable_types or {}).items() if t != "string")
    return StatMetadata(kind, labels, described, str(meta.file_label or ""), numeric, catalog)


def read_statfile(source: bytes | str | Path, filename: str, kind: str, nrows: int | None = None,
                  limits: Limits | None = None) -> tuple[pd.DataFrame, StatMetadata]:
    """The file's rows as text with value labels shown (see the module's docstring), and its metadata."""
    limits = limits or Limits()
    opened = _open(kind, source, filename)
    meta, metadata = _header(kind, opened, filename)
    names = column_names(list(meta.column_names or []), filename, limits, where="the variable names")
    if not names:
        raise InputError(f"{filename}: no variables")
    if limits.max_columns is not None and len(names) > limits.max_columns:
        raise InputError(f"{filename}: {len(names)} columns, more than the limit of {limits.max_columns}")
    declared = meta.number_rows  # None when the file does not say (an SPSS file may not)
    if limits.max_rows is not None and declared is not None and declared > limits.max_rows:
        raise InputError(f"{filename}: {declared:,} rows, more than the limit of {limits.max_rows:,}")
    row_limit = nrows if nrows is not None else 0
    if limits.max_rows is not None and declared is None:
        row_limit = min(row_limit or limits.max_rows + 1, limits.max_rows + 1)
    # the codes read (a SAS catalog is not applied here): the labels are looked up as for a .sav
    data, meta = _read(kind, opened.data, filename, row_limit=row_limit, user_missing=False)
    if limits.max_rows is not None and len(data) > limits.max_rows:
        raise InputError(f"{filename}: more than the limit of {limits.max_rows:,} rows")
    if len(data) == 0 and nrows != 0:
        raise InputError(f"{filename}: no data rows")
    if opened.catalog is None:
        metadata = _metadata(kind, meta)
    frame = pd.DataFrame({name: _text(data[name], metadata.value_labels.get(name), filename, name, limits)
                          for name in names}, index=pd.RangeIndex(len(data)))
    return frame, metadata


def number_text(value: float) -> str:
    """A number as a CSV shows it: whole numbers without a decimal part, others in shortest round-trip form."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _text(values: pd.Series, labels: Mapping[Any, str] | None, filename: str, name: str,
          limits: Limits) -> pd.Series:
    """One column as text: labels for labelled codes, numbers as number_text, missing as the empty cell."""
    lookup = {}
    if labels:
        for code, label in labels.items():
            lookup[code if isinstance(code, str) else float(code)] = label
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        out = _number_texts(values.to_numpy(dtype=float), lookup)
    else:
        out = _cell_texts(values.to_numpy(dtype=object), lookup)
    cap = limits.max_cell_chars
    if cap is not None and len(out):
        lengths = pd.Series(out, dtype=object).str.len().to_numpy()
        if lengths.max() > cap:
            long = int(np.argmax(lengths > cap))
            raise InputError(f"{filename}, row {long + 1}, column {name!r}: a cell of {len(out[long]):,} "
                             f"characters, more than the limit of {cap:,}")
    return pd.Series(out, dtype=object)


def _number_texts(numbers: np.ndarray, lookup: Mapping[Any, str]) -> np.ndarray:
    """A numeric column's texts, a column at a time: the distinct values are written once (number_text) and
    their labels looked up once, then spread to the rows (a million-row file is not a million Python calls)."""
    missing = np.isnan(numbers)
    distinct, codes = np.unique(numbers[~missing], return_inverse=True)
    texts = np.array([lookup.get(float(v), number_text(float(v))) for v in distinct], dtype=object)
    out = np.full(len(numbers), "", dtype=object)
    out[~missing] = texts[codes]
    return out


def _cell_texts(cells: np.ndarray, lookup: Mapping[Any, str]) -> np.ndarray:
    """A text (or date) column's texts, cell by cell."""
    out = np.empty(len(cells), dtype=object)
    for i, cell in enumerate(cells):
        if cell is None or (isinstance(cell, float) and math.isnan(cell)) or cell is pd.NaT:
            out[i] = ""
        elif isinstance(cell, str):
            out[i] = lookup.get(cell, cell)
        elif isinstance(cell, (int, float, np.integer, np.floating)):
            number = float(cell)
            out[i] = lookup[number] if number in lookup else number_text(number)
        elif hasattr(cell, "isoformat"):  # a date, time or datetime the package formatted as such
            out[i] = cell.isoformat()
        else:
            out[i] = str(cell)
    return out


# ---- writing -----------------------------------------------------------------------------------------------
def check_names(columns: list[str], kind: str) -> None:
    """Refuse, by name, a column name the target package cannot hold."""
    for name in columns:
        if kind == "dta":
            if len(name) > 32:
                raise InputError(f"column {name!r}: a Stata name has at most 32 characters, this one "
                                 f"{len(name)}; rename the column or choose another format")
            if not STATA_NAME.fullmatch(name) or name in STATA_RESERVED or re.fullmatch(r"str\d+", name):
                raise InputError(f"column {name!r}: not a valid Stata name (letters, digits and _, not starting "
                                 f"with a digit, not a reserved word); rename the column or choose another format")
        else:
            if len(name.encode("utf-8")) > SPSS_NAME_BYTES:
                raise InputError(f"column {name!r}: an SPSS name has at most {SPSS_NAME_BYTES} bytes; rename "
                                 f"the column or choose another format")
            if not re.fullmatch(SPSS_NAME, name) or name.upper() in SPSS_RESERVED or name.endswith("."):
                raise InputError(f"column {name!r}: not a valid SPSS name (starting with a letter; letters, "
                                 f"digits and _ . @ # $; not a reserved word); rename the column or choose "
                                 f"another format")


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == ""


def _number(value: Any) -> float | None:
    """The finite number a cell's text is, None when it is none."""
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


class _Distinct:
    """A column as its distinct values and each row's index into them (the last entry stands for missing):
    what a cell becomes is decided once per distinct value, then spread to the rows."""

    def __init__(self, values: np.ndarray):
        codes, uniques = pd.factorize(values, use_na_sentinel=True)  # None/NaN: -1, the last entry below
        self.codes = codes
        self.values = list(uniques) + [None]
        self.missing = np.array([_is_missing(v) for v in self.values], dtype=bool)

    def spread(self, per_value: list[Any], dtype: Any) -> np.ndarray:
        return np.array(per_value, dtype=dtype)[self.codes]

    def numbers(self) -> list[float] | None:
        """Every present value as a number (NaN for missing), None when one is not a number."""
        out = []
        for value, missing in zip(self.values, self.missing):
            number = np.nan if missing else _number(value)
            if number is None:
                return None
            out.append(number)
        return out


def _as_codes(column: _Distinct, labels: Mapping[Any, str], kind: str) -> list[float] | None:
    """Per distinct value its original code when every value is a label (or an unlabelled numeric code) of the
    set; None otherwise. Stata labels only whole-number codes."""
    numeric = [c for c in labels if not isinstance(c, str)]
    if len(numeric) != len(labels):
        return None  # labels of a text variable: written as the labels (text)
    inverse: dict[str, float] = {}
    for code, label in labels.items():
        if label in inverse:
            return None  # two codes share a label: the label does not say which
        inverse[label] = float(code)
    if kind == "dta" and any(not float(c).is_integer() for c in numeric):
        return None
    out = []
    for value, missing in zip(column.values, column.missing):
        if missing:
            out.append(np.nan)
            continue
        text = str(value)
        number = inverse[text] if text in inverse else _number(text)
        if number is None or (kind == "dta" and not number.is_integer()):
            return None
        out.append(number)
    return out


def write_statfile(frame: pd.DataFrame, kind: str, kinds: Mapping[str, str] | None = None,
                   metadata: StatMetadata | None = None) -> bytes:
    """The rows as a .dta or .sav file: labelled columns as codes with their labels where the values allow,
    ``kinds`` (column -> "integer", "decimal" or "text") deciding numbers elsewhere."""
    if kind not in WRITABLE:
        raise InputError(f"cannot write {kind!r} files: one of {', '.join(WRITABLE)}")
    import pyreadstat  # the statistical-package path only

    names = [str(c) for c in frame.columns]
    check_names(names, kind)
    columns: dict[str, Any] = {}
    value_labels: dict[str, dict[int | float, str]] = {}
    for c, name in zip(frame.columns, names):
        column = _Distinct(frame[c].to_numpy(dtype=object))
        labels = (metadata.value_labels.get(name) if metadata else None) or {}
        codes = _as_codes(column, labels, kind) if labels else None
        numbers = column.numbers() if codes is None else None
        typed = (kinds or {}).get(name) in ("integer", "decimal") or (metadata is not None and name in metadata.numeric)
        if codes is not None:
            columns[name] = column.spread(codes, float)
            value_labels[name] = {(int(k) if kind == "dta" else float(k)): v[:STATA_LABEL_CHARS]
                                  for k, v in labels.items()}
        elif typed and numbers is not None:
            columns[name] = column.spread(numbers, float)
        else:
            columns[name] = column.spread(["" if m else str(v) for v, m in zip(column.values, column.missing)],
                                          object)
    out = pd.DataFrame(columns, index=pd.RangeIndex(len(frame)))
    described = {n: (metadata.variable_labels.get(n) if metadata else None) for n in names}
    if kind == "dta":
        described = {n: (t[:80] if t else t) for n, t in described.items()}
    with tempfile.TemporaryDirectory(prefix="statfile-") as folder:
        target = Path(folder) / f"out.{kind}"
        try:
            if kind == "dta":
                pyreadstat.write_dta(out, target, column_labels=described, variable_value_labels=value_labels or None)
            else:
                pyreadstat.write_sav(out, target, column_labels=described, variable_value_labels=value_labels or None)
        except (pyreadstat.ReadstatError, pyreadstat.PyreadstatError) as exc:
            raise InputError(f"cannot write the {STAT_KINDS[kind]} file: {exc}") from None
        return target.read_bytes()


def file_labels(path: str | Path) -> StatMetadata | None:
    """The labels of a Stata/SPSS/SAS file at ``path`` (what a .dta/.sav output of it re-attaches); None when
    the file is another format or cannot be read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
        kind = "sas7bdat" if sas_bundle.is_bundle(head, str(path)) else stat_kind(head)
        return read_metadata(path, Path(path).name, kind) if kind else None
    except (OSError, InputError):
        return None
