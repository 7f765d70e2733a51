"""What leaves the app as a file: the anonymized CSV (formulas neutralized, optionally shuffled, streamed
a row group at a time) and the run configuration as JSON."""

from __future__ import annotations

import csv
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
    safe = pd.DataFrame({neutralize(str(c)): _neutralize_column(frame[c]) for c in frame.columns})
    return safe.to_csv(sep=delimiter, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


def transaction_lines(frame: pd.DataFrame, delimiter: str):
    """Published transaction records (engine.gate: an optional record id column, then the items joined by
    the item delimiter) as the lines of a transaction file, every field neutralized."""
    ids = frame[RECORD_ID].tolist() if RECORD_ID in frame.columns else None
    for r, cell in enumerate(frame[ITEMS].tolist()):
        fields = ([ids[r]] if ids is not None else []) + [x for x in str(cell).split(delimiter) if x]
        yield delimiter.join(neutralize(str(x)) for x in fields) + "\n"


def _neutralize_column(values: pd.Series) -> pd.Series:
    """Only the distinct values are tested and rewritten, then mapped back onto the rows."""
    codes, uniques = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=False)
    text = pd.Series(uniques, dtype=object).astype(str)
    risky = text.str.startswith(FORMULA_PREFIXES) & ~text.str.fullmatch(NUMBER.pattern)
    safe = text.where(~risky, "'" + text).to_numpy(dtype=object)
    return pd.Series(safe[codes], index=values.index, dtype=object)


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
