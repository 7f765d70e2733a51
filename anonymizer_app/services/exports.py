"""What leaves the app as a file: the anonymized CSV (formulas neutralized, optionally shuffled, streamed
a row group at a time) and the run configuration as JSON."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd

from ..engine import Role
from ..engine.gate import ITEMS, RECORD_ID
from ..models import Job, Result
from . import results, storage

# What a spreadsheet evaluates when a cell starts with it (OWASP CSV injection), full-width forms included
# (some spreadsheets fold them to the ASCII ones).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
# A number stays a number: -5, +2, -3.5, 1e5, -0.25, .5 are data, not formulas.
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralize(value: str) -> str:
    """Text a spreadsheet would run as a formula gets a leading apostrophe; numbers are left alone."""
    if value.startswith(FORMULA_PREFIXES) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def export_csv(frame: pd.DataFrame, delimiter: str = ",", shuffle: bool = False, seed: int | None = None) -> str:
    """CSV text of the anonymized rows, formulas neutralized, optionally in shuffled row order."""
    if shuffle:
        frame = frame.sample(frac=1.0, random_state=np.random.default_rng(seed).integers(2**31))
    header = [neutralize(str(c)) for c in frame.columns]
    columns = [_neutralized_codes(frame[c]) for c in frame.columns]
    text = _arrow_csv(header, columns, delimiter)
    if text is not None:
        return text
    safe = pd.DataFrame({h: pd.Series(texts[codes], index=frame.index, dtype=object)
                         for h, (codes, texts) in zip(header, columns)})
    return safe.to_csv(sep=delimiter, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


def _arrow_csv(header: list[str], columns: list[tuple[np.ndarray, np.ndarray]], delimiter: str) -> str | None:
    """The same bytes as pandas' to_csv (QUOTE_MINIMAL, '\\n'), written by pyarrow from each column's codes
    and distinct texts (a dictionary column: the strings are converted once, not per row) - when no field
    needs quoting; None otherwise (pandas writes it then). pyarrow quotes every string or none, so the
    distinct texts are checked first: no delimiter, quote or line break; no empty field in a one-column
    table (the csv module writes it as "")."""
    if not header or len(delimiter) != 1 or not delimiter.isascii():
        return None
    special = "[" + re.escape(delimiter + '"\r\n') + "]"
    texts = [t for _, t in columns] + [np.asarray(header, dtype=object)]
    if any(pd.Series(t, dtype=object).str.contains(special, regex=True).any() for t in texts):
        return None
    if len(header) == 1 and (pd.Series(columns[0][1], dtype=object).str.len() == 0).any():
        return None
    import pyarrow as pa  # the export path only: the CLI's --help and the web pages do not load it
    import pyarrow.csv as pa_csv

    arrays = [pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32, copy=False)),
                                             pa.array(t, type=pa.string()))
              for codes, t in columns]
    out = io.BytesIO()
    pa_csv.write_csv(pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))]), out,
                     pa_csv.WriteOptions(include_header=False, delimiter=delimiter, quoting_style="none"))
    head = io.StringIO()
    csv.writer(head, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_MINIMAL).writerow(header)
    return head.getvalue() + out.getvalue().decode("utf-8")


def transaction_lines(frame: pd.DataFrame, delimiter: str):
    """Published transaction records (engine.gate: an optional record id column, then the items joined by
    the item delimiter) as the lines of a transaction file, every field neutralized."""
    ids = frame[RECORD_ID].tolist() if RECORD_ID in frame.columns else None
    for r, cell in enumerate(frame[ITEMS].tolist()):
        fields = ([ids[r]] if ids is not None else []) + [x for x in str(cell).split(delimiter) if x]
        yield delimiter.join(neutralize(str(x)) for x in fields) + "\n"


def _neutralized_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(code per row, distinct texts neutralized): a column as export_csv writes it. Only the distinct values
    are tested and rewritten."""
    codes, uniques = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=False)
    text = pd.Series(uniques, dtype=object).astype(str)
    risky = text.str.startswith(FORMULA_PREFIXES) & ~text.str.fullmatch(NUMBER.pattern)
    return codes, text.where(~risky, "'" + text).to_numpy(dtype=object)


def iter_output_csv(result: Result, delimiter: str = ",", drop_suppressed: bool = False):
    """The CSV download a row group at a time (a million rows never sit in memory as text)."""
    for g, stored in enumerate(storage.iter_row_groups(storage.output_path(result))):
        frame, suppressed = results.split_suppressed(stored)
        if drop_suppressed:
            frame = frame[~suppressed]
        text = export_csv(frame, delimiter)
        yield text if g == 0 else text.split("\n", 1)[1]


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
